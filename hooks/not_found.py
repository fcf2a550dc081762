"""A "page not found" page in every edition: 404.html in English at the site's root, and
<locale>/404.html in each other edition, in its words, its menu and its search.

The theme writes 404.html once per edition's build, each over the last (mkdocs-static-i18n
builds the editions into one folder), so the root's was the last edition's, and no
edition had its own. Here an edition's build writes its page into its own folder and
leaves the root's alone. The theme's heading is English in every language ("404 - Not
found"); it is written from the catalogs, with a line leading to the edition's home.

A static host answers a missing address with the root's 404.html alone: that page sends
an address under an edition's folder (/gl/...) on to that edition's page, with a script
of a few lines; without scripts it stays the English page, which links every edition."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sitekit.language import i18n, theme_words
from sitekit.rendering import escape

NAME = "404.html"
HEADING = re.compile(r"<h1>404 - Not found</h1>")
SELECTOR = re.compile(r'(<a href=")[^"]*("[^>]*hreflang="([a-z]+)")')
HEAD_ALTERNATE = re.compile(r'\n[ \t]*<link rel="alternate" href="[^"]*" hreflang="[a-z]+">')
CONFIG = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.DOTALL)


def _editions(config) -> tuple[str, list[str]]:
    plugin = config.plugins.get("i18n")
    if plugin is None:
        return i18n.DEFAULT, []
    languages = plugin.config.languages
    default = next(lang.locale for lang in languages if lang.default)
    return default, [lang.locale for lang in languages if lang.build and not lang.default]


def _base(output: str) -> str:
    """The site's root as the page's settings give it ("/" or the published folder, "/site/"):
    a 404 page is served at any address, so its links are absolute (MkDocs)."""
    m = CONFIG.search(output)
    return json.loads(m.group(2))["base"].rstrip("/") + "/" if m else "/"


def page(output: str, language: str, default: str, others: list[str]) -> str:
    """The theme's 404 page in ``language``: its heading and a line home in the catalog's
    words, its language selector leading to each edition's home, its search the edition's."""
    base = _base(output)
    home = base if language == default else f"{base}{language}/"
    heading = escape.text(i18n._("Page not found"), None)
    note = escape.text(i18n._("No page of this edition has this address."), None)
    link = escape.text(i18n._("Go to the home page"), None)
    body = f'<h1>404 · {heading}</h1>\n<p>{note} <a href="{escape.attribute(home, None)}">{link}</a></p>'
    if language == default and others:
        body += _redirect(base, others)
    output = theme_words.translate(HEADING.sub(lambda m: body, output, count=1))
    output = HEAD_ALTERNATE.sub("", output)
    output = SELECTOR.sub(
        lambda m: f"{m.group(1)}{base}{'' if m.group(3) == default else m.group(3) + '/'}{m.group(2)}", output
    )
    if language != default:

        def rebase(m: re.Match) -> str:
            settings = json.loads(m.group(2))
            settings["base"] = home  # the edition's search index, beside its root
            return m.group(1) + escape.json_script(settings) + m.group(3)

        output = CONFIG.sub(rebase, output, count=1)
    return output


def _redirect(base: str, others: list[str]) -> str:
    """The root's page sends an address under an edition's folder to that edition's page."""
    folders = json.dumps(others)
    return (
        "\n<script>(function () {"
        f" var base = {json.dumps(base)}, folders = {folders};"
        " var rest = location.pathname.indexOf(base) === 0 ? location.pathname.slice(base.length) : '';"
        " var folder = rest.split('/')[0];"
        " if (folders.indexOf(folder) >= 0) location.replace(base + folder + '/404.html');"
        "})();</script>"
    )


def on_post_template(output, template_name, config, **kwargs):
    if template_name != NAME:
        return output
    default, others = _editions(config)
    language = config.theme["language"]
    output = page(output, language, default, others)
    if language == default:
        return output
    target = Path(config.site_dir) / language / NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(output, encoding="utf-8")
    return ""  # the root's page stays the default edition's: MkDocs writes nothing for an empty page
