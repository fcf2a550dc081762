"""The one exception type that means "the user asked for something we cannot do".

The command line prints its message on one line and exits non-zero; anything else
that escapes is a bug and keeps its traceback.
"""


class UserError(Exception):
    """A mistake in the request (bad model name, unknown experiment, no GPU...)."""
