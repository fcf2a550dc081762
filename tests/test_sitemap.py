"""A sitemap lists absolute addresses, so only a build that knows the published one
(SITE_URL, set by the pages workflow) keeps the sitemap MkDocs writes."""

from __future__ import annotations

import pytest

from tests.conftest import DOCS
from tests.helpers import finish_build


def _site_with_sitemap(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    for name in ("sitemap.xml", "sitemap.xml.gz"):
        (site / name).write_text("<urlset><url><loc>None./</loc></url></urlset>")
    return site


def test_a_build_with_no_published_address_leaves_no_sitemap(tmp_path, monkeypatch):
    monkeypatch.delenv("SITE_URL", raising=False)
    site = _site_with_sitemap(tmp_path)
    finish_build(DOCS, site)
    assert not (site / "sitemap.xml").exists() and not (site / "sitemap.xml.gz").exists()
    assert (site / "data").is_dir()  # the rest of the build's end still ran


@pytest.mark.parametrize("where", ["config", "environment"])
def test_a_build_that_knows_its_address_keeps_its_sitemap(tmp_path, monkeypatch, where):
    url = "https://example.org/inference/"
    if where == "environment":
        monkeypatch.setenv("SITE_URL", url)
    else:
        monkeypatch.delenv("SITE_URL", raising=False)
    site = _site_with_sitemap(tmp_path)
    finish_build(DOCS, site, site_url=url if where == "config" else None)
    assert (site / "sitemap.xml").exists() and (site / "sitemap.xml.gz").exists()
