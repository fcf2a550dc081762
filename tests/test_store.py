"""The result store: schema, CSV conventions and atomic replacement."""

import json

import pytest

from measure import store
from measure.schema import Column, Result, Table, Value


def _table(v=1):
    return Table(
        name="t",
        title="T",
        columns=(Column(name="n", unit="tokens"), Column(name="x_ms", unit="ms", kind="timing")),
        rows=[{"n": 1, "x_ms": 0.1 * v}, {"n": 2, "x_ms": True}],
    )


def test_write_and_read(tmp_path):
    res = Result(tables=[_table()], values=[Value(name="v", value=3, unit="x", kind="numeric")])
    store.write_result(tmp_path, "exp", res, {"title": "E"})
    assert (tmp_path / "exp" / "t.csv").read_text() == "n,x_ms\n1,0.1\n2,true\n"
    meta = store.read_meta(tmp_path, "exp")
    assert meta["schema_version"] == store.SCHEMA_VERSION
    assert meta["tables"]["t"]["columns"][1] == {
        "name": "x_ms",
        "unit": "ms",
        "kind": "timing",
        "label": "x_ms",
        "description": "",
    }
    assert meta["values"]["v"]["value"] == 3


def test_interrupted_write_leaves_old_file_intact(tmp_path, monkeypatch):
    store.write_result(tmp_path, "exp", Result(tables=[_table(1)]), {})
    before = {p.name: p.read_bytes() for p in (tmp_path / "exp").iterdir()}

    real_fdopen = store.os.fdopen

    class Boom:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.f.close()

        def write(self, text):
            self.f.write(text[: len(text) // 2])
            raise KeyboardInterrupt  # Ctrl-C in the middle of writing

    monkeypatch.setattr(store.os, "fdopen", lambda *a, **k: Boom(real_fdopen(*a, **k)))
    with pytest.raises(KeyboardInterrupt):
        store.write_result(tmp_path, "exp", Result(tables=[_table(2)]), {})
    after = {p.name: p.read_bytes() for p in (tmp_path / "exp").iterdir()}
    assert after == before  # same files, same bytes, no temp files left behind
    json.loads(after["meta.json"])


def test_empty_table_is_refused():
    with pytest.raises(ValueError, match="no rows"):
        Table(name="t", title="T", columns=(Column(name="a"),), rows=[])


def test_row_must_match_declared_columns():
    with pytest.raises(ValueError, match="declared"):
        Table(name="t", title="T", columns=(Column(name="a"), Column(name="b")), rows=[{"b": 1, "a": 2}])


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind"):
        Column(name="a", kind="approximate")


def test_a_table_no_longer_produced_is_removed(tmp_path):
    other = Table(name="old", title="O", columns=(Column(name="a"),), rows=[{"a": 1}])
    store.write_result(tmp_path, "exp", Result(tables=[_table(), other]), {})
    store.write_result(tmp_path, "exp", Result(tables=[_table()]), {})
    assert sorted(p.name for p in (tmp_path / "exp").iterdir()) == ["meta.json", "t.csv"]
