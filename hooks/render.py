"""MkDocs hook: renders the measurement markers of every page from site_data/.

Registered in mkdocs.yml under ``hooks:``. Any marker that cannot be rendered, and
any ``{{`` left in a page after rendering, fails the build with the page's name.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

HOOKS = Path(__file__).resolve().parent
sys.path.insert(0, str(HOOKS))  # sitekit, the page side
sys.path.insert(1, str(HOOKS.parent))  # sitedata, the torch-free data layer

from sitekit import formatting  # noqa: E402
from sitekit.markers import MarkerError, PageContext, render_markers  # noqa: E402
from sitekit.pagedata import SiteData, SiteDataError  # noqa: E402

_state: dict = {}


def on_config(config, **kwargs):
    root = Path(config.config_file_path).resolve().parent
    data_dir = root / config.extra.get("site_data", "site_data")
    if not data_dir.is_dir():
        raise PluginError(f"site_data folder {data_dir} does not exist; run `make measure`")
    _state["data"] = SiteData(data_dir)
    try:  # every experiment verified up front: one line naming the file, before any page
        for exp in _state["data"].experiments:
            _state["data"].experiment(exp)
    except SiteDataError as e:
        raise PluginError(str(e)) from None
    _state["figures"] = {}
    formatting.set_locale(config.extra.get("locale", "en"))
    _state["titles"] = dict(_nav_titles(config.nav or []))
    return config


def _nav_titles(nav: list) -> list[tuple[str, str]]:
    """(source path, title) for every page in the nav, sections included, so that a
    marker can link to another page by the name the reader sees in the menu."""
    out = []
    for item in nav:
        for title, target in item.items() if isinstance(item, dict) else []:
            if isinstance(target, list):
                out += _nav_titles(target)
            elif isinstance(target, str):
                out.append((target, title))
    return out


def on_page_markdown(markdown, page, config, files, **kwargs):
    depth = page.url.count("/")  # "kv-cache/" -> 1, "" (home) -> 0
    ctx = PageContext(data=_state["data"], page=page.file.src_path, url_prefix="../" * depth, titles=_state["titles"])
    try:
        out = render_markers(markdown, ctx)
    except MarkerError as e:
        raise PluginError(str(e)) from None
    if "{{" in out or "}}" in out:
        line = next(line for line in out.splitlines() if "{{" in line or "}}" in line)
        raise PluginError(f"{page.file.src_path}: unrendered marker left: {line.strip()[:120]}")
    _state["figures"].update(ctx.figures)
    return out


def on_post_build(config, **kwargs):
    site = Path(config.site_dir)
    data: SiteData = _state["data"]
    # The CSVs and meta.json every table links to, as published data.
    # Only files that verified against their meta.json, never a leftover or a stray file.
    target = site / "data"
    if target.exists():
        shutil.rmtree(target)
    for exp, name in data.files():
        (target / exp).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(data.root / exp / name, target / exp / name)
    for rel, svg in _state["figures"].items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")
