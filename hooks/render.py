"""MkDocs hook: renders the measurement markers of every page from site_data/.

Registered in mkdocs.yml under ``hooks:``. Any marker that cannot be rendered, and
any ``{{`` left in a page after rendering, fails the build with the page's name.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

from sitedata.lock import FolderBusy
from sitekit import figures
from sitekit.claims import answer_files, claim_files, claim_legend, claims, named_files
from sitekit.language import calculator_locale, formatting, glossary, i18n, theme_words, typed_numbers
from sitekit.rendering import cells, maths, notebook_pages, notebook_safety
from sitekit.rendering.context import put_back
from sitekit.rendering.markers import MarkerError, PageContext, render_markers
from sitekit.rendering.pagedata import SiteData, SiteDataError
from sitekit.sources import page_provenance, project, source_archive

_state: dict = {}
log = logging.getLogger("mkdocs.hooks.sitekit")
EDITION_SUFFIX = re.compile(r"\.[a-z]{2}\.md$")  # kv-cache.gl.md: the Galician edition of kv-cache.md


def on_config(config, **kwargs):
    # The published address comes from the pages workflow (SITE_URL), not mkdocs.yml:
    # a local or CI build has none, and then writes no sitemap (on_post_build).
    config.site_url = config.site_url or os.environ.get("SITE_URL") or None
    root = Path(config.config_file_path).resolve().parent
    i18n.use_catalogs(root / "hooks" / "locales")  # the built project's catalogs, beside its hooks
    data_dir = root / config.extra.get("site_data", "site_data")
    if not data_dir.is_dir():
        raise PluginError(f"site_data folder {data_dir} does not exist; run `make measure`")
    if _state.get("data_dir") != data_dir:  # once per process, not once per edition
        _state["data"], _state["data_dir"] = SiteData(data_dir, log=log.info), None
        try:  # every experiment read and verified once, under the folder's lock: one line naming a bad file
            _state["data"].snapshot()
        except (SiteDataError, FolderBusy) as e:
            raise PluginError(str(e)) from None
        _state["data_dir"] = data_dir
    # read at every build (cheap), so that `mkdocs serve` sees a claims or answers file's edits
    try:
        folder = root / config.extra.get("claims", "measure/experiments")
        _state["claims"] = claim_files.load(folder, root, claims.CALLS)
        _state["answers"] = answer_files.load(folder, root, claims.CALLS)
    except claims.ClaimError as e:
        raise PluginError(str(e)) from None
    _state["figures"] = {}
    if "source" not in _state:  # once per process: every edition is built from the same files
        # a build of a copy of the project (the tests') names the checkout it was copied from
        _state["source"] = source_archive.describe(Path(os.environ.get("SITEKIT_SOURCE_ROOT") or root))
    source_archive.built_from = _state["source"]
    # a published site's repository, like its address, from the pages workflow (or extra.repository):
    # the theme links it in every page's header (repo_url), the pages and the citation name it
    source_archive.repository = os.environ.get("SITE_REPOSITORY") or str(config.extra.get("repository") or "")
    config.repo_url = getattr(config, "repo_url", None) or source_archive.repository or None
    try:
        project.cff = project.read(root)
    except ValueError as e:
        raise PluginError(str(e)) from None
    project.site_url = config.site_url or ""
    return config


def on_pre_build(config, **kwargs):
    """The edition being built: the i18n plugin has set the theme's language by now (its
    on_config runs last), and every generated word and number follows it."""
    language = config.theme["language"]
    i18n.set_language(language)
    try:
        glossary.append_to_pages(config, language)
    except FileNotFoundError as e:
        raise PluginError(str(e)) from None
    _state["used"], _state["answered"] = set(), set()  # the claims and the answers this edition's pages name
    _state["aside"] = {}  # each page's tables, set aside for after Markdown (PageContext.set_aside)
    formatting.set_locale(language)
    plugin = config.plugins.get("i18n")
    translated = (plugin.current_language_config.nav_translations or {}) if plugin else {}
    _state["titles"] = {src: translated.get(title, title) for src, title in _nav_titles(config.nav or [])}
    _state["languages"] = [lang.locale for lang in plugin.config.languages] if plugin else [i18n.DEFAULT]
    if language == i18n.DEFAULT and not os.environ.get("SITEKIT_MESSAGES"):
        built = [lang.locale for lang in plugin.config.languages if lang.build] if plugin else [i18n.DEFAULT]
        figures.prepare(_state["data"], built, workers=min(2, os.cpu_count() or 1), docs=Path(config.docs_dir))


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


@event_priority(-200)  # after mkdocs-static-i18n (-100), which rebuilds every file as a plain File
def on_files(files, config, **kwargs):
    """Notebooks back into pages in every edition. mkdocs-static-i18n rebuilds each file
    of an edition as a plain File, which turns mkdocs-jupyter's notebook pages into
    static files (its issue 198: the notebook's JSON lands where its page should be).
    Each is wrapped again as a notebook page, keeping the edition's destination and URL.

    Every notebook page, and the download beside it, is rendered from a safe copy of its
    notebook (notebook_safety.py: no script, no HTML but a pandas table, no SVG handler)."""
    from mkdocs_jupyter.plugin import NotebookFile

    for plain in [f for f in files if f.src_uri.endswith(".ipynb") and not isinstance(f, NotebookFile)]:
        page = NotebookFile(plain, use_directory_urls=config.use_directory_urls, site_dir=config.site_dir)
        page.dest_path, page.abs_dest_path, page.url = plain.dest_path, plain.abs_dest_path, plain.url
        files.remove(plain)
        files.append(page)
    for page in [f for f in files if f.src_uri.endswith(".ipynb")]:
        if "notebooks" not in _state:  # one folder per build process: every edition's pages share it
            _state["notebooks"] = Path(tempfile.mkdtemp(prefix="site-notebooks-"))
        page.abs_src_path = str(notebook_safety.safe_copy_file(Path(page.abs_src_path), _state["notebooks"]))
    return files


def on_page_markdown(markdown, page, config, files, **kwargs):
    if page.file.src_path.endswith(".ipynb"):
        return markdown  # a notebook page: mkdocs-jupyter renders its cells and committed outputs
    depth = page.url.count("/")  # "kv-cache/" -> 1, "" (home) -> 0
    source = EDITION_SUFFIX.sub(".md", page.file.src_path)  # every edition cites and claims as its English page
    ctx = PageContext(
        data=_state["data"],
        page=source,
        url_prefix="../" * depth,
        claims=_state["claims"],
        titles=_state["titles"],
        answers=_state["answers"],
        aside={},
    )
    miswritten = typed_numbers.miswritten(markdown) if i18n.language() != i18n.DEFAULT else []
    if miswritten:  # a number the edition types, not as its language writes numbers
        number, context = miswritten[0]
        raise PluginError(f"{page.file.src_path}: {number!r} is not how {i18n.language()} writes a number: {context}")
    try:
        out = render_markers(markdown, ctx)
    except MarkerError as e:
        raise PluginError(str(e)) from None
    shown = maths.IN_MARKDOWN.sub(" ", out)  # a formula's braces, \frac{a}{\text{b}}, are not a marker's
    typed = maths.IN_MARKDOWN.sub(" ", markdown)
    if "}}}" in typed:  # a marker closed with a brace too many: the brace would show
        line = next(line for line in typed.splitlines() if "}}}" in line)
        raise PluginError(f"{page.file.src_path}: a marker closed with three braces: {line.strip()[:120]}")
    if "{{" in shown or "}}" in shown:
        line = next(line for line in shown.splitlines() if "{{" in line or "}}" in line)
        raise PluginError(f"{page.file.src_path}: unrendered marker left: {line.strip()[:120]}")
    out += page_provenance.page_section(ctx, claim_legend.checks_html(ctx.checks))
    _state["figures"].update(ctx.figures)
    _state["used"] |= ctx.used
    _state["answered"] |= ctx.answered
    _state["aside"][page.file.src_uri] = ctx.aside
    return out


def on_page_content(html, page, config, files, **kwargs):
    if page.file.src_path.endswith(".ipynb"):
        return notebook_pages.content(html, Path(page.file.abs_src_path).name, "../" * page.url.count("/"))
    try:
        html = cells.apart(put_back(html, _state["aside"].pop(page.file.src_uri, {})))
    except ValueError as e:
        raise PluginError(f"{page.file.src_path}: {e}") from None
    try:  # the formulas as MathML, which the browser draws without a script or a font
        html = maths.render(html)
    except maths.MathsError as e:
        raise PluginError(f"{page.file.src_path}: {e}") from None
    html = claim_legend.after_first_mark(html, page_id=EDITION_SUFFIX.sub(".md", page.file.src_path), url=page.url)
    if "data-calculator" not in html:
        return html
    scripts = Path(config.docs_dir) / "javascripts" / "calculator"
    return html + "\n" + calculator_locale.locale_script(scripts)


ALTERNATE = re.compile(r'(<a href=")([^"]*)("[^>]*hreflang="([a-z]+)")')
HEAD_ALTERNATE = re.compile(r'\n[ \t]*<link rel="alternate" href="[^"]*" hreflang="[a-z]+">')


def on_post_page(output, page, config, **kwargs):
    """The language selector's links relative to the page, as every other link of the
    site is: the i18n plugin gives a home page's as absolute paths ("/", "/gl/"), which
    lead nowhere when the site is opened from disk or served below a domain's root. And
    a notebook page's lead to the same notebook in each edition: in an edition's build
    the plugin knows no alternates for notebook pages and points at the home pages.

    The head's ``<link rel="alternate" hreflang>`` copies of those links are left out:
    Material's script reads each one as an edition's root and asks for a sitemap.xml
    beside it (``/gl/kv-cache/sitemap.xml``, four or five missing files per page), and
    relative addresses serve no search engine (hreflang needs absolute ones, and the
    site has no site_url). The selector's links do the readers' work."""
    up = "../" * page.url.count("/")
    notebook = page.file.src_uri.split(".")[0] if page.file.src_uri.endswith(".ipynb") else None
    output = theme_words.translate(output)  # the theme's words it leaves in English in every edition

    def link(m: re.Match) -> str:
        href, lang = m.group(2), m.group(4)
        if notebook:
            href = f"{up}{'' if lang == i18n.DEFAULT else lang + '/'}{notebook}/"
        elif href.startswith("/"):
            href = up + href[1:] or "./"
        return f"{m.group(1)}{href}{m.group(3)}"

    return ALTERNATE.sub(link, HEAD_ALTERNATE.sub("", output))


def _check_used(book: named_files.Book, used: set[str]) -> None:
    """A claim or an answer no page names is read by nobody and goes stale: it fails the build."""
    try:
        book.check_used(used)
    except claims.ClaimError as e:
        raise PluginError(str(e)) from None


def on_post_build(config, **kwargs):
    site = Path(config.site_dir)
    if not config.site_url:
        # A sitemap lists absolute addresses; with no site_url MkDocs writes "None" for
        # each one, which a crawler would follow. The published build sets SITE_URL.
        for name in ("sitemap.xml", "sitemap.xml.gz"):
            (site / name).unlink(missing_ok=True)
    data: SiteData = _state["data"]
    language = i18n.language()
    _check_used(_state["claims"], _state["used"])
    _check_used(_state["answers"], _state["answered"])
    if language == i18n.DEFAULT:
        # after the pages: a claim the data no longer bears is reported before a stale notebook
        try:
            notebook_pages.check(Path(config.docs_dir), data)
        except ValueError as e:
            raise PluginError(str(e)) from None
        # The CSVs and meta.json every table links to, as published data, once for all
        # editions. Only files that verified against their meta.json, never a stray file.
        target = site / "data"
        if target.exists():
            shutil.rmtree(target)
        for exp, files in data.published().items():  # as this build read them: never a second read
            (target / exp).mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                (target / exp / name).write_text(text, encoding="utf-8", newline="")
        # the files it was built from, the data as this build read it
        data_folder = str(config.extra.get("site_data", "site_data"))
        published = data.published()
        read = {
            f"{exp}/{name}": text.encode("utf-8") for exp, files in published.items() for name, text in files.items()
        }
        source_archive.write(_state["source"], site, data=(data_folder, read))
        if os.environ.get("SITEKIT_MESSAGES"):  # make messages
            others = [lang for lang in _state["languages"] if lang != i18n.DEFAULT]
            for lang, empty in i18n.update_catalogs(others, words=data.words()).items():
                log.info(f"hooks/locales/{lang}.po: {empty} messages to translate")
    if i18n.unsafe[language]:
        raise PluginError(
            f"{i18n.catalog_path(language).name}: a translation carries no markup its English message does not "
            "have (HTML, a Markdown link or code, a marker's braces), and these add some: "
            + "; ".join(sorted(i18n.unsafe[language])[:5])
        )
    if i18n.typed[language]:
        raise PluginError(
            f"{i18n.catalog_path(language).name}: a catalog types no number, and these translations type one "
            "their English message does not have: " + "; ".join(sorted(i18n.typed[language])[:5])
        )
    if language != i18n.DEFAULT and i18n.missing[language]:
        shown = sorted(i18n.missing[language])
        # SITEKIT_DRAFT=1: a draft build while a catalog is being written reports, not fails
        report = log.info if os.environ.get("SITEKIT_DRAFT") else log.warning
        report(
            f"{len(shown)} generated texts have no {language} translation in {i18n.catalog_path(language).name} "
            f"and show in English (make messages, then translate): " + "; ".join(repr(m) for m in shown[:5])
        )
    for rel, svg in _state["figures"].items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")
