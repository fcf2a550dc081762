"""Figures drawn at build time from site_data, one module per experiment.

A figure function takes the SiteData and returns a matplotlib Figure; register it
with ``@figure("experiment.name")``. Output is SVG with fixed ids and no date, so an
unchanged table gives a byte-identical file.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import multiprocessing
import os
import pkgutil
import sys
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, ScalarFormatter  # noqa: E402

from sitekit import escape, formatting, i18n  # noqa: E402
from sitekit.pagedata import SiteDataError  # noqa: E402

REGISTRY: dict[str, Callable] = {}
# Drawn figures kept between builds, by edition and by what they were drawn from (_key):
# five editions draw over a hundred figures, and an unchanged one is read, not redrawn.
# SITEKIT_FIGURE_CACHE moves it (the tests' builds of copies of the project share the repository's).
CACHE = Path(os.environ.get("SITEKIT_FIGURE_CACHE") or Path(__file__).resolve().parents[3] / ".cache" / "figures")
plt.rcParams.update(
    {
        "svg.hashsalt": "site",  # deterministic element ids
        "svg.fonttype": "none",  # text stays text: selectable, searchable, small
        "figure.figsize": (7.0, 3.8),
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "font.size": 10,
    }
)


def figure(name: str) -> Callable:
    def register(fn: Callable) -> Callable:
        REGISTRY[name] = fn
        return fn

    return register


def _load_all() -> None:
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")


def render_figure(name: str, data) -> str:
    if not REGISTRY:
        _load_all()
    if name not in REGISTRY:
        raise SiteDataError(f"no figure {name!r}; known: {', '.join(sorted(REGISTRY))}")
    cached = _cached(name, data, i18n.language())
    if cached.exists() and not os.environ.get("SITEKIT_MESSAGES"):  # make messages: every label asked
        return cached.read_text(encoding="utf-8")
    fig = REGISTRY[name](data)
    _localize_ticks(fig)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(svg, encoding="utf-8")
    tmp.replace(cached)  # whole or absent, even if two builds race
    return svg


def _cached(name: str, data, language: str) -> Path:
    return CACHE / language / f"{name}.{_key(name, data, language)}.svg"


def _key(name: str, data, language: str) -> str:
    """What a figure is drawn from: the data (every meta.json, which holds its tables'
    checksums), the code that draws and formats it, the edition's catalog, matplotlib."""
    h = hashlib.sha256(matplotlib.__version__.encode())
    module = sys.modules[REGISTRY[name].__module__]
    code = (Path(module.__file__), Path(__file__), Path(formatting.__file__), Path(escape.__file__))
    for path in (*code, i18n.catalog_path(language)):
        h.update(path.read_bytes() if path.exists() else b"")
    h.update(data.data_hash.encode())
    return h.hexdigest()[:16]


def _localize_ticks(fig) -> None:
    """Plain numeric ticks written as the page's locale writes numbers (0,5 and 1 000 on
    a Galician page): matplotlib's own formatter knows only the C locale. Ticks a
    figure labels itself, and log axes' powers of ten, are left as they are."""
    tick = FuncFormatter(lambda v, pos: formatting.number(v, digits=6) if v else "0")
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if type(axis.get_major_formatter()) is ScalarFormatter:
                axis.set_major_formatter(tick)


_PREPARING: dict = {}


def prepare(data, languages: list[str], workers: int) -> int:
    """Draw every figure of every edition that the cache does not hold yet, ``workers`` at
    a time, before the first page asks for one: the editions are built one after another,
    but their figures need not be. A figure that fails here is left to its page, which
    reports it. Returns how many were drawn."""
    if not REGISTRY:
        _load_all()
    todo = [(n, lang) for lang in languages for n in sorted(REGISTRY) if not _cached(n, data, lang).exists()]
    if workers < 2 or len(todo) < 2:
        return 0
    _PREPARING["data"] = data  # inherited by the forked workers
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        drawn = pool.starmap(_draw, todo)
    return sum(drawn)


def _draw(name: str, language: str) -> bool:
    try:
        i18n.set_language(language)
        formatting.set_locale(language)
        render_figure(name, _PREPARING["data"])
        return True
    except Exception:  # noqa: BLE001 - the page that shows the figure reports the error
        return False
