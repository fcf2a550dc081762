"""A build reads one snapshot of site_data: it waits while a run or a merge writes the
folder, reads and verifies every experiment once, and renders, hashes and publishes that
reading; a file a run rewrites afterwards, or a link put in a file's place, never reaches
the published data or the source archive."""

from __future__ import annotations

import gzip
import io
import shutil
import subprocess
import sys
import tarfile
import textwrap
import time

import pytest

from sitekit.rendering.pagedata import SiteData
from tests.conftest import DOCS, REPO
from tests.helpers import _hook


@pytest.fixture
def data(tmp_path):
    shutil.copytree(REPO / "site_data", tmp_path / "site_data")
    return tmp_path / "site_data"


def _archived(site) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress((site / "source.tar.gz").read_bytes()))) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def test_what_a_run_writes_after_the_build_read_the_folder_is_not_published(data, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    render, config = _hook(data, docs_dir=str(DOCS), site_dir=str(site))
    rows = (data / "cache_size" / "measured.csv").read_text(encoding="utf-8")
    tokens = (data / "kv_cache" / "generated_tokens.csv").read_text(encoding="utf-8")
    # a run writes after the build's first step: a table rewritten, another replaced by a link
    (data / "cache_size" / "measured.csv").write_text("a run's new rows\n", encoding="utf-8")
    outside = tmp_path / "outside.csv"
    # a text no tracked file holds (the archive carries this test's own source)
    planted = f"a file outside the data folder, {tmp_path.name}"
    outside.write_text(planted + "\n", encoding="utf-8")
    (data / "kv_cache" / "generated_tokens.csv").unlink()
    (data / "kv_cache" / "generated_tokens.csv").symlink_to(outside)
    render._state["used"], render._state["answered"] = (
        set(render._state["claims"].entries),
        set(render._state["answers"].entries),
    )
    render.on_post_build(config)
    assert (site / "data" / "cache_size" / "measured.csv").read_text(encoding="utf-8") == rows
    assert (site / "data" / "kv_cache" / "generated_tokens.csv").read_text(encoding="utf-8") == tokens
    assert not (site / "data" / "kv_cache" / "generated_tokens.csv").is_symlink()
    archived = _archived(site)
    assert archived["site-source/site_data/cache_size/measured.csv"] == rows.encode("utf-8")
    assert archived["site-source/site_data/kv_cache/generated_tokens.csv"] == tokens.encode("utf-8")
    assert planted.encode("utf-8") not in b"".join(archived.values())


HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from sitedata.lock import held
    with held(Path(sys.argv[1]), "measure run (a test's writer)"):
        print("holding", flush=True)
        time.sleep(float(sys.argv[2]))
    """
)


def test_a_build_waits_while_a_writer_holds_the_folder_then_reads_it_whole(data):
    writer = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(data), "2.5"], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout.readline().strip() == "holding"
        said: list[str] = []
        t0 = time.monotonic()
        snapshot = SiteData(data, log=said.append)
        snapshot.snapshot()
        waited = time.monotonic() - t0
    finally:
        writer.wait(timeout=30)
    assert waited >= 1.5, waited
    (line,) = said
    assert f"pid {writer.pid}" in line and "measure run (a test's writer)" in line and "waiting until it ends" in line
    assert len(snapshot.data_hash) == 16 and "kv_cache" in snapshot.published()


def test_a_build_with_no_writer_takes_no_wait(data):
    said: list[str] = []
    t0 = time.monotonic()
    SiteData(data, log=said.append).snapshot()
    assert said == [] and time.monotonic() - t0 < 30
    assert not (data / ".sitedata.lock").exists()  # the lock file goes with the lock
