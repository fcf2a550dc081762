"""Hostile and damaged data: every file verified against its metadata, one line naming
the file and the fix, nothing read from outside site_data, data text escaped."""

import json
import os
import time

import pytest

from sitedata import DataError, read_experiment
from sitedata.bounds import MAX_CSV_BYTES, MAX_META_BYTES
from sitekit.claims.claims import ClaimError, check
from sitekit.rendering.markers import MarkerError, PageContext, render_markers
from sitekit.rendering.pagedata import SiteData
from tests.conftest import build_site, edit_table, write_data

ROWS = [{"n": 1, "label": "a"}, {"n": 2, "label": "b"}, {"n": 3, "label": "c"}]
FIX = "make measure ONLY=exp"


@pytest.fixture
def root(tmp_path):
    write_data(tmp_path, "exp", {"t": ROWS}, {"ratio": 2.5})
    return tmp_path


def _csv(root):
    return root / "exp" / "t.csv"


def _meta(root):
    return root / "exp" / "meta.json"


def _error(root) -> str:
    with pytest.raises(DataError) as e:
        read_experiment(root, "exp")
    message = str(e.value)
    assert "\n" not in message and FIX in message
    return message


def test_untouched_data_reads(root):
    assert read_experiment(root, "exp").rows("t")[2] == {"n": "3", "label": "c"}


def test_a_missing_last_row_is_caught(root):
    _csv(root).write_text(_csv(root).read_text().rsplit("3,c", 1)[0])
    assert "exp/t.csv: 2 rows, meta.json says 3" in _error(root)


def test_cut_last_fields_are_caught(root):
    _csv(root).write_text(_csv(root).read_text().replace("3,c\n", "3\n"))
    assert "exp/t.csv: row 2 has 1 fields, not 2" in _error(root)


def test_a_renamed_column_is_caught_without_quoting_the_file(root):
    _csv(root).write_text(_csv(root).read_text().replace("n,label", "n,secret_word"))
    message = _error(root)
    assert "exp/t.csv: its column 2 is not label, as meta.json declares: n, label" in message
    assert "secret_word" not in message  # only the names meta.json declares are quoted


def test_an_edited_cell_is_caught_by_the_checksum(root):
    _csv(root).write_text(_csv(root).read_text().replace("2,b", "2,B"))
    assert "exp/t.csv: content differs from the checksum" in _error(root)


def test_a_missing_table_file_is_caught(root):
    _csv(root).unlink()
    assert "exp/t.csv is missing but listed in meta.json" in _error(root)


def test_a_stray_file_is_caught(root):
    (root / "exp" / "extra.csv").write_text("a\n1\n")
    assert "holds extra.csv, not listed in meta.json" in _error(root)


@pytest.mark.parametrize(
    "text, message",
    [
        ("{}", "format version None"),
        ('{"schema_version": 2', "exp/meta.json is not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ("", "not valid JSON"),
    ],
)
def test_broken_meta_json_is_one_line(root, text, message):
    _meta(root).write_text(text)
    assert message in _error(root)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda m: m.update(schema_version=1), "format version 1, this code reads versions 2 to 5"),
        (lambda m: m.update(schema_version=6), "format version 6, this code reads versions 2 to 5"),
        (lambda m: m["tables"]["t"].pop("description"), "table t: its description is missing or not a text"),
        (lambda m: m["tables"]["t"]["columns"][0].pop("words"), "column n lacks its words (true or false) or noise"),
        (
            lambda m: m["tables"]["t"]["columns"][0].update(noise=[]),
            "column n lacks its words (true or false) or noise",
        ),
        (
            lambda m: m["tables"]["t"]["columns"][0].update(noise={"spread": "gone"}),
            "column n's noise names no other column of it by a known kind",
        ),
        (
            lambda m: m["tables"]["t"]["columns"][0].update(noise={"guess": "label"}),
            "column n's noise names no other column of it by a known kind",
        ),
        (lambda m: m["values"]["ratio"].update(words="yes"), "value ratio lacks its words (true or false)"),
        (lambda m: m.pop("device"), "'device' is missing"),
        (lambda m: m["device"].pop("id"), "device.id is missing"),
        (lambda m: m.update(experiment="other"), "describes experiment 'other'"),
        (lambda m: m["tables"]["t"].update(file="../../../../etc/os-release"), "its file must be t.csv"),
        (lambda m: m["tables"].update({"../x": m["tables"]["t"]}), "'../x' is not a snake_case name"),
        (lambda m: m["tables"]["t"]["columns"][0].update(scope="galaxy"), "bad name, compare or scope"),
        (lambda m: m["values"].update(v={"value": 1}), "value 'v' has a bad unit"),
        (lambda m: m["tables"]["t"].update(length="random"), "length must be one of fixed, timing"),
    ],
)
def test_malformed_meta_is_one_line(root, edit, message):
    meta = json.loads(_meta(root).read_text())
    edit(meta)
    _meta(root).write_text(json.dumps(meta))
    assert message in _error(root)


def test_hidden_leftovers_and_non_names_are_not_experiments(root):
    from sitedata import experiment_names

    (root / ".exp.new-1234").mkdir()
    (root / ".exp.new-1234" / "meta.json").write_text("{}")
    (root / "Not-A-Name").mkdir()
    (root / "Not-A-Name" / "meta.json").write_text("{}")
    assert experiment_names(root) == ["exp"]


@pytest.mark.parametrize(
    "marker",
    [
        "{{ meta('../../etc', 'x') }}",
        "{{ meta('exp/../../etc', 'x') }}",
        "{{ table('../exp.t') }}",
        "{{ value('exp.../x') }}",
        "{{ provenance('/etc') }}",
        "{{ figure('../../x.y', alt='a') }}",
        "{{ constant('os.sep') }}",
        "{{ constant('measure.lab.models.DEFAULT_MODEL') }}",
    ],
)
def test_marker_arguments_cannot_leave_site_data(root, marker):
    ctx = PageContext(data=SiteData(root), page="p.md", url_prefix="")
    with pytest.raises(MarkerError):
        render_markers(marker, ctx)


def test_data_text_is_escaped_in_the_experiments_table(tmp_path):
    write_data(tmp_path, "exp", {"t": ROWS}, profile="<script>alert(1)</script>", dtype="<b>fp</b>")
    ctx = PageContext(data=SiteData(tmp_path), page="p.md", url_prefix="")
    html = render_markers("{{ experiments() }} {{ provenance('exp') }}", ctx)
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize(
    "expr",
    ["9**9**9 > 0", "2 ** 1000 > 0", "len('x' * 10**9) > 0", "len([1] * 100000) > 0", "(10**60) ** 2 > 0"],
)
def test_claims_that_could_run_away_are_refused_quickly(root, expr):
    started = time.perf_counter()
    with pytest.raises(ClaimError, match="refused"):
        check(SiteData(root), expr)
    assert time.perf_counter() - started < 1


def test_claims_within_bounds_still_work(root):
    assert check(SiteData(root), "2 ** 10 == 1024 and len('ab' * 3) == 6 and exp.ratio ** 2 > 6")[0]


@pytest.mark.build
def test_a_damaged_file_fails_the_build_with_one_line(tmp_path):
    import shutil

    from tests.conftest import REPO

    data = tmp_path / "data"
    shutil.copytree(REPO / "site_data", data)
    path = data / "cache_size" / "measured.csv"
    path.write_text(path.read_text().rsplit("\n", 2)[0] + "\n")  # the last row lost
    proc = build_site(tmp_path, data=data)
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if "measured.csv" in line]
    assert lines and "rows, meta.json says" in lines[0] and "make measure ONLY=cache_size" in lines[0], proc.stderr[
        -2000:
    ]
    assert "Traceback" not in proc.stderr


@pytest.mark.build
def test_the_build_does_not_import_torch(built_site):
    """The session's build of the site (a copy of the project without the measuring code)
    imported none of torch, transformers or measure: the record its process left."""
    from tests.conftest import IMPORTED

    assert (built_site.parent / IMPORTED).read_text(encoding="utf-8") == ""


# Checksums edited to match: columns and rows are verified all the same.


def test_an_extra_column_with_a_matching_checksum_is_caught(root):
    edit_table(root / "exp", "t", lambda rows: [r.append("x") for r in rows])
    assert "exp/t.csv: its header has 3 columns, meta.json declares 2: n, label" in _error(root)


def test_a_missing_column_with_a_matching_checksum_is_caught(root):
    edit_table(root / "exp", "t", lambda rows: [r.pop() for r in rows])
    assert "exp/t.csv: its header has 1 columns, meta.json declares 2: n, label" in _error(root)


def test_a_wrong_row_count_with_a_matching_checksum_is_caught(root):
    meta = json.loads(_meta(root).read_text())
    edit_table(root / "exp", "t", lambda rows: rows.pop())
    meta["tables"]["t"]["sha256"] = json.loads(_meta(root).read_text())["tables"]["t"]["sha256"]
    _meta(root).write_text(json.dumps(meta))  # the checksum follows the file, the count does not
    assert "exp/t.csv: 2 rows, meta.json says 3" in _error(root)


def test_a_short_row_with_a_matching_checksum_is_caught(root):
    edit_table(root / "exp", "t", lambda rows: rows[2].pop())
    assert "exp/t.csv: row 1 has 1 fields, not 2" in _error(root)


def test_a_cell_beyond_the_csv_limit_is_one_line(root):
    edit_table(root / "exp", "t", lambda rows: rows[1].__setitem__(1, "x" * 200_000))
    message = _error(root)
    assert "exp/t.csv: not a readable CSV (field larger than field limit" in message and "xxx" not in message


# Links: nothing is read through one, and nothing of what one points to is shown.


@pytest.fixture
def secret(tmp_path):
    path = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    path.write_text("API_KEY=hunter2\nmore\n")
    return path


def test_a_linked_table_with_a_matching_checksum_is_refused(root, secret):
    edit_table(root / "exp", "t", lambda rows: rows[1].__setitem__(1, "A"))  # checksum of the edited text
    secret.write_text(_csv(root).read_text())
    _csv(root).unlink()
    _csv(root).symlink_to(secret)
    message = _error(root)
    assert "exp/t.csv is a symbolic link; an experiment's folder holds regular files only" in message


def test_a_linked_file_with_another_checksum_is_refused_without_its_content(root, secret):
    _csv(root).unlink()
    _csv(root).symlink_to(secret)
    message = _error(root)
    assert "is a symbolic link" in message and "API_KEY" not in message and "hunter2" not in message


def test_a_linked_meta_json_is_refused(root, secret):
    secret.write_text(_meta(root).read_text())
    _meta(root).unlink()
    _meta(root).symlink_to(secret)
    assert "exp/meta.json is a symbolic link" in _error(root)


def test_a_linked_experiment_folder_is_refused(root, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    write_data(elsewhere, "exp", {"t": ROWS})
    (root / "exp").rename(root / "gone")
    (root / "exp").symlink_to(elsewhere / "exp")
    assert "exp is a symbolic link, not a folder of its own" in _error(root)
    (root / "exp").unlink()
    (root / "exp").symlink_to(root / "gone")  # a link even inside site_data
    assert "exp is a symbolic link, not a folder of its own" in _error(root)


def test_a_link_named_like_a_hidden_file_and_a_subfolder_are_refused(root, secret):
    (root / "exp" / ".hidden").symlink_to(secret)
    assert "exp/.hidden is a symbolic link" in _error(root)
    (root / "exp" / ".hidden").unlink()
    (root / "exp" / "sub").mkdir()
    assert "exp/sub is a folder; an experiment's folder holds regular files only" in _error(root)


def test_a_fifo_is_refused_without_waiting_for_a_writer(root):
    _csv(root).unlink()
    os.mkfifo(_csv(root))
    started = time.perf_counter()
    assert "exp/t.csv is not a regular file" in _error(root)
    assert time.perf_counter() - started < 5


def test_hidden_entries_are_passed_over_unless_strict(root):
    (root / "exp" / ".DS_Store").write_bytes(b"\xff\x00")
    (root / "exp" / ".ipynb_checkpoints").mkdir()
    read_experiment(root, "exp")
    with pytest.raises(DataError, match=r"exp/.ipynb_checkpoints is a folder"):
        read_experiment(root, "exp", strict=True)
    (root / "exp" / ".ipynb_checkpoints").rmdir()
    with pytest.raises(DataError, match=r"exp/ holds .DS_Store, not listed in meta.json"):
        read_experiment(root, "exp", strict=True)


# Bounds: each is one line naming the file and the bound, never a RecursionError.


@pytest.mark.parametrize("depth", [33, 100_000])
def test_a_deeply_nested_meta_json_is_one_line(root, depth):
    meta = json.loads(_meta(root).read_text())
    _meta(root).write_text(json.dumps(meta)[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}")
    assert "exp/meta.json nests deeper than the 32 levels meta.json may" in _error(root)


def test_a_meta_json_beyond_its_size_is_one_line(root):
    meta = json.loads(_meta(root).read_text())
    meta["notes"] = {"padding": ["x" * 1000] * (MAX_META_BYTES // 1000)}
    _meta(root).write_text(json.dumps(meta))
    assert f"bytes, more than the {MAX_META_BYTES} a file of site_data may hold" in _error(root)


def test_a_table_beyond_its_size_is_one_line(root):
    edit_table(root / "exp", "t", lambda rows: rows.extend([str(i), "y" * 1000] for i in range(MAX_CSV_BYTES // 1000)))
    message = _error(root)
    assert "exp/t.csv is" in message and f"more than the {MAX_CSV_BYTES}" in message


def test_a_long_text_a_page_would_show_is_one_line(root):
    meta = json.loads(_meta(root).read_text())
    meta["model"]["name"] = "m" * 50_000
    _meta(root).write_text(json.dumps(meta))
    message = _error(root)
    assert "exp/meta.json has 'model.name' of 50000 characters, more than the 4096 a text may have" in message
    assert "mmmm" not in message


@pytest.mark.parametrize(
    "text, message",
    [
        ('"value": NaN', "holds NaN, which is not a number JSON allows"),
        ('"value": 1e400', "has 'values.ratio.value' that is not a finite number"),
        ('"value": 1' + "0" * 30, "has 'values.ratio.value', a number beyond"),
        ('"value": 1' + "0" * 5000, "is not valid JSON (Exceeds the limit"),
    ],
)
def test_numbers_out_of_bounds_in_meta_json_are_one_line(root, text, message):
    meta = _meta(root).read_text()
    _meta(root).write_text(meta.replace('"value": 2.5', text))
    assert message in _error(root)


def test_a_hostile_experiment_name_in_meta_json_is_shown_cut(root):
    meta = json.loads(_meta(root).read_text())
    meta["experiment"] = "line one\nline two " + "z" * 1000
    _meta(root).write_text(json.dumps(meta))
    message = _error(root)
    assert "describes experiment 'line one\\nline two zzz" in message and "z" * 200 not in message
