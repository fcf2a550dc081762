"""A variant's recorded failure shows on a page in words, with no exception's name."""

from __future__ import annotations

from sitekit.language import i18n, statuses


def test_a_failure_is_said_in_words():
    i18n.set_language("en")
    said = statuses.in_words("not built: ValueError: a row of 576 weights does not divide into groups of 128")
    assert "ValueError" not in said and "576" in said and "128" in said
    assert "Error" not in statuses.in_words("not built: RuntimeError: no kernel for this device")
    assert "Error" not in statuses.in_words("step failed: RuntimeError: out of memory")


def test_anything_else_is_left_as_it_is():
    for value in ("ok", "wrong: above tolerance, not timed", 3.5, None):
        assert statuses.in_words(value) == value


def test_the_timed_and_the_wrong_statuses_are_in_the_editions_words():

    try:
        i18n.set_language("es")
        assert statuses.in_words("ok") == "correcto"
        assert (
            statuses.in_words("wrong: above tolerance, not timed")
            == "erróneo: por encima de la tolerancia, sin cronometrar"
        )
    finally:
        i18n.set_language("en")
    assert statuses.in_words("ok") == "ok"
