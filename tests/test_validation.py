"""What a strict build refuses besides its own markers' errors (mkdocs.yml's
``validation:``): a page in docs/ that the nav leaves out, which would be built as an
orphan no menu reaches, and a link to a page that does not exist. Each is tried on a
two-page site built as the site is (tests/builds.py), beside the same site whole."""

from __future__ import annotations

import shutil

import pytest
import yaml

from tests.builds import claims_of, english_build
from tests.conftest import REPO

pytestmark = pytest.mark.build

HOME = "# Home\n\nThe [second page](second.md) says more.\n"
SECOND = "# Second\n\nBack [home](index.md).\n"


def _site(dest, *, nav, home=HOME):
    docs = dest / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(home, encoding="utf-8")
    (docs / "second.md").write_text(SECOND, encoding="utf-8")
    for folder in ("javascripts", "stylesheets"):
        shutil.copytree(REPO / "docs" / folder, docs / folder)
    shutil.copytree(REPO / "site_data", dest / "site_data")
    return english_build(dest, nav=nav, extra=claims_of(dest, []))


def test_the_settings_make_an_orphan_or_a_broken_link_a_warning():
    """Warnings fail a strict build; these are the settings that make them warnings."""
    project = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    assert project["strict"] is True
    assert {k: project["validation"].get(k) for k in ("omitted_files", "not_found", "unrecognized_links")} == {
        "omitted_files": "warn",
        "not_found": "warn",
        "unrecognized_links": "warn",
    }


def test_a_site_whose_nav_holds_every_page_builds(tmp_path):
    proc = _site(tmp_path, nav=[{"Home": "index.md"}, {"Second": "second.md"}])
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert (tmp_path / "site" / "second" / "index.html").is_file()


def test_a_page_left_out_of_the_nav_fails_the_build_naming_it(tmp_path):
    proc = _site(tmp_path, nav=[{"Home": "index.md"}])
    assert proc.returncode != 0
    assert 'not included in the "nav"' in proc.stderr and "- second.md" in proc.stderr, proc.stderr[-3000:]


def test_a_link_to_a_missing_page_fails_the_build_naming_it(tmp_path):
    home = HOME.replace("second.md", "secnod.md")
    proc = _site(tmp_path, nav=[{"Home": "index.md"}, {"Second": "second.md"}], home=home)
    assert proc.returncode != 0
    assert "secnod.md" in proc.stderr and "not found among documentation files" in proc.stderr, proc.stderr[-3000:]
