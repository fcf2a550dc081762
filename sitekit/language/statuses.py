"""A variant's status as a page says it. The run records why a variant could not be built
or run in the words of the error it met (``not built: ValueError: a row of 576 weights
does not divide into groups of 128``), which is for the CSV; a page says what could not be
built and why in its own language, with no exception's name in it."""

from __future__ import annotations

import re
from typing import Any

from sitekit.language.i18n import _

# "<what failed>: <ExceptionName>: <its first line>", as the weight quantization run writes it
_FAILED = re.compile(r"^(not built|step failed): ([A-Za-z_][\w.]*): (.*)$", re.S)
_GROUPS = re.compile(r"^a row of (\d+) weights does not divide into groups of (\d+)$")


def in_words(value: Any) -> Any:
    """``value`` unchanged unless it is a recorded failure; a failure in words."""
    if not isinstance(value, str):
        return value
    if value == "ok":  # timed
        return _("ok")
    if value == "wrong: above tolerance, not timed":
        return _("wrong: above tolerance, not timed")
    found = _FAILED.match(value.strip())
    if not found:
        return value
    what, _name, reason = found.groups()
    groups = _GROUPS.match(reason.strip())
    if what == "not built" and groups:
        cols, group = groups.groups()
        return _(
            "not built: its kernel takes each row in groups of {group} weights, "
            "and this model has rows of {cols} weights, which do not divide into them"
        ).format(group=group, cols=cols)
    if what == "not built":
        return _("not built: the kernel refused this model's shapes on this device (the CSV gives the error)")
    return _("built, but its first step failed (the CSV gives the error)")
