"""The files beside each experiment that define expressions over the data by name, and
the key of each that holds the expression: ``measure/experiments/<experiment>/claims.toml``
and ``answers.toml``. The pages read them (``sitekit/claims/named_files.py``) and the
drift gate finds the tables their expressions read (``measure/check.py``); neither side
imports the other, so both read this."""

EXPRESSION_KEYS = {"claims": "check", "answers": "value"}  # a file's stem -> the key of its expression
