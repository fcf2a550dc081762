"""What several test files share: the rows of an experiment's table, read through the
data layer, the site's hook (hooks/render.py) driven in this process, for tests of
what fails a build: one page rendered, or the end of the English edition's build, each
raising the PluginError whose message is the line the build prints; and an edition's
words and numbers for a while (``edition``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import yaml

from tests.conftest import DOCS, REPO, hook


def paired_ratio(num_ms: list[float], den_ms: list[float]) -> tuple[float, float, float]:
    """The ratio, with its range, that two points of one sweep give from the samples a run
    published (milliseconds, in the order taken): what ``medians.ratio`` pairs. Samples are
    published to a tenth of a microsecond, so the ratio agrees to about a thousandth."""
    from measure.lab.medians import Estimate, ratio

    return ratio(Estimate.of(num_ms, 0.03, sweep=0), Estimate.of(den_ms, 0.03, sweep=0))


def table_rows(folder: Path, table: str) -> list[dict[str, str]]:
    """The rows of ``table`` in the experiment folder ``folder`` as written (strings, in
    file order), read and verified against its meta.json by ``sitedata.read``."""
    from sitedata import read_experiment

    folder = Path(folder)
    return read_experiment(folder.parent, folder.name).rows(table)


def write_named(root: Path, experiment: str, kind: str, text: str) -> Path:
    """``root/<experiment>/<kind>.toml`` holding ``text`` (a claims or answers file, as
    an experiment's package holds it); ``root``, the folder such files are loaded from."""
    (root / experiment).mkdir(parents=True, exist_ok=True)
    (root / experiment / f"{kind}.toml").write_text(text, encoding="utf-8")
    return root


def _hook(data: Path | None, **config):
    """hooks/render.py after its on_config over ``data`` (site_data/ by default), which
    verifies every experiment before any page, as a build's first step; then set to the
    English edition, as its on_pre_build would (less the figures it draws ahead)."""
    from sitekit.language import formatting, i18n

    render = hook("render")
    config = SimpleNamespace(
        config_file_path=str(REPO / "mkdocs.yml"),
        extra={"site_data": str(data or REPO / "site_data")},
        **{"site_url": None, **config},
    )
    render.on_config(config)
    # the claims and the answers the pages rendered here name, as on_pre_build sets them
    render._state["used"], render._state["answered"] = set(), set()
    render._state["aside"] = {}  # each page's tables, set aside for after Markdown
    i18n.set_language(i18n.DEFAULT)
    formatting.set_locale(i18n.DEFAULT)
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    render._state["titles"] = dict(render._nav_titles(nav))
    return render, config


def render_page(
    page: str, markdown: str | None = None, *, data: Path | None = None, language: str = "en", section: bool = False
) -> str:
    """``docs/<page>`` as committed, or ``markdown`` as that page, rendered as a build of
    the ``language`` edition over ``data`` renders it (on_config, then on_page_markdown);
    what would fail the build raises its PluginError. The provenance section a build adds
    at the page's end is left out unless ``section``."""
    from sitekit.language import formatting, i18n
    from sitekit.rendering.context import put_back
    from sitekit.sources import page_provenance

    render, config = _hook(data)
    i18n.set_language(language)
    formatting.set_locale(language)
    text = (DOCS / page).read_text(encoding="utf-8") if markdown is None else markdown
    url = "" if page == "index.md" else page.removesuffix(".md") + "/"
    page_ = SimpleNamespace(file=SimpleNamespace(src_path=page, src_uri=page), url=url)
    out = render.on_page_markdown(text, page=page_, config=config, files=None)
    out = put_back(out, render._state["aside"].pop(page))  # its tables where the build puts them back
    return out if section else page_provenance.own_text(out)


def finish_build(docs: Path, site: Path, *, data: Path | None = None, site_url: str | None = None) -> None:
    """The end of a build of the English edition of ``docs`` over ``data`` into ``site``
    (on_config, then on_post_build: the notebooks' checks, the published data files);
    what would fail the build raises its PluginError."""
    render, config = _hook(data, docs_dir=str(docs), site_dir=str(site), site_url=site_url)
    # as if every page had named its claims and its answers
    render._state["used"], render._state["answered"] = (
        set(render._state["claims"].entries),
        set(render._state["answers"].entries),
    )
    render.on_post_build(config)


@contextmanager
def edition(lang: str) -> Iterator[None]:
    """The catalogs and number format of edition ``lang`` for a while, then English again."""
    from sitekit.language import formatting, i18n

    i18n.set_language(lang)
    formatting.set_locale(lang)
    try:
        yield
    finally:
        i18n.set_language("en")
        formatting.set_locale("en")
