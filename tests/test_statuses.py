"""A variant's recorded failure shows on a page in words, with no exception's name."""

from __future__ import annotations

from sitekit import i18n, statuses


def test_a_failure_is_said_in_words():
    i18n.set_language("en")
    said = statuses.in_words("not built: ValueError: a row of 576 weights does not divide into groups of 128")
    assert "ValueError" not in said and "576" in said and "128" in said
    assert "Error" not in statuses.in_words("not built: RuntimeError: no kernel for this device")
    assert "Error" not in statuses.in_words("step failed: RuntimeError: out of memory")


def test_anything_else_is_left_as_it_is():
    for value in ("ok", "wrong: above tolerance, not timed", 3.5, None):
        assert statuses.in_words(value) == value
