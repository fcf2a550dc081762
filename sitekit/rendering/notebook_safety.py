"""A notebook page shows what its pages need of a notebook, and nothing that runs.

A notebook's outputs and Markdown cells come from the repository (a contributor's
commit), and the notebook renderer passes HTML, scripts and SVG through as they are. So
the build renders a copy of each notebook (``safe_copy``) in which:

* an output keeps plain text, PNG and JPEG images, and SVG figures with every script,
  event handler, foreign object and outside link removed (``svg``);
* an HTML output is kept only when it is a table pandas wrote (a ``DataFrame``), which is
  written again from its cells with nothing but table markup (``table``); any other HTML,
  JavaScript, Markdown, LaTeX or widget output is dropped, leaving its plain text;
* a Markdown cell's ``<`` is escaped, so it shows as text, and a link to ``javascript:``
  or ``data:`` loses its target; attachments and widget state are dropped.

The download beside the page is that copy too.
"""

from __future__ import annotations

import copy
import html
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

KEPT = ("text/plain", "image/png", "image/jpeg", "image/svg+xml", "text/html")
TABLE_TAGS = {"table", "thead", "tbody", "tfoot", "tr", "th", "td"}
SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
_UNSAFE_LINK = re.compile(r"\]\(\s*(?:javascript|data|vbscript):", re.I)


class _Table(HTMLParser):
    """A pandas DataFrame's HTML read as rows of cells (anything else makes it no table)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[tuple[str, list[tuple[str, str]]]] = []  # (thead or tbody, [(th or td, text)])
        self.cell: str | None = None
        self.text: list[str] = []
        self.sections: list[str] = []
        self.ok, self.tables, self.skip = True, 0, 0

    def handle_starttag(self, tag, attrs):
        if tag == "style":
            self.skip += 1
        elif tag == "table":
            self.tables += 1
            self.ok = self.ok and any(k == "class" and "dataframe" in (v or "").split() for k, v in attrs)
        elif tag in ("thead", "tbody"):
            self.sections.append(tag)
        elif tag == "tr":
            self.rows.append((self.sections[-1] if self.sections else "tbody", []))
        elif tag in ("th", "td"):
            self.cell, self.text = tag, []
        elif tag not in ("div", "br", "tfoot"):
            self.ok = False

    def handle_endtag(self, tag):
        if tag == "style":
            self.skip -= 1
        elif tag in ("th", "td") and self.cell and self.rows:
            self.rows[-1][1].append((self.cell, " ".join("".join(self.text).split())))
            self.cell = None
        elif tag in ("thead", "tbody") and self.sections:
            self.sections.pop()

    def handle_data(self, data):
        if self.skip:
            return
        if self.cell:
            self.text.append(data)
        elif data.strip():
            self.ok = False  # text outside the table's cells


def table(markup: str) -> str | None:
    """A pandas table written again from its cells alone, or None if ``markup`` is anything else."""
    parser = _Table()
    try:
        parser.feed(markup)
        parser.close()
    except Exception:  # noqa: BLE001  (malformed markup is no table)
        return None
    if not parser.ok or parser.tables != 1 or not parser.rows:
        return None
    out, open_section = ['<table class="dataframe">'], None
    for section, row in parser.rows:
        if section != open_section:
            out += ([f"</{open_section}>"] if open_section else []) + [f"<{section}>"]
            open_section = section
        cells = "".join(f"<{kind}>{html.escape(text)}</{kind}>" for kind, text in row)
        out.append(f"<tr>{cells}</tr>")
    out += [f"</{open_section}>", "</table>"]
    return "\n".join(out)


def svg(markup: str) -> str | None:
    """An SVG figure without scripts, handlers, foreign objects or links out; None if it
    does not parse as SVG."""
    try:
        root = ET.fromstring(markup)
    except ET.ParseError:
        return None
    if root.tag != f"{{{SVG}}}svg":
        return None
    for parent in root.iter():
        for child in list(parent):
            local = child.tag.rsplit("}", 1)[-1] if isinstance(child.tag, str) else ""
            if local in ("script", "foreignObject", "iframe", "object", "embed", "handler"):
                parent.remove(child)
        for name in list(parent.attrib):
            local = name.rsplit("}", 1)[-1].lower()
            value = parent.attrib[name].strip()
            if local.startswith("on"):
                del parent.attrib[name]
            elif local == "href" and not (value.startswith("#") or value.startswith("data:image/")):
                del parent.attrib[name]
    ET.register_namespace("", SVG)
    ET.register_namespace("xlink", XLINK)
    return ET.tostring(root, encoding="unicode")


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _output(output: dict) -> dict | None:
    kind = output.get("output_type")
    if kind == "stream":
        return {"output_type": "stream", "name": output.get("name", "stdout"), "text": _text(output.get("text", ""))}
    if kind == "error":
        return {k: output.get(k) for k in ("output_type", "ename", "evalue", "traceback")}
    if kind not in ("display_data", "execute_result"):
        return None
    data = {}
    for mime, value in (output.get("data") or {}).items():
        if mime not in KEPT:
            continue
        if mime == "text/html":
            value = table(_text(value))
        elif mime == "image/svg+xml":
            value = svg(_text(value))
        if value is not None:
            data[mime] = value
    if not data:
        return None
    kept = {"output_type": kind, "data": data, "metadata": {}}
    if kind == "execute_result":
        kept["execution_count"] = output.get("execution_count")
    return kept


def _markdown(source: str) -> str:
    return _UNSAFE_LINK.sub("](#", source.replace("<", "&lt;"))


def safe_copy(notebook: dict) -> dict:
    """The notebook as its page may show it (see the module's docstring)."""
    nb = copy.deepcopy(notebook)
    nb.get("metadata", {}).pop("widgets", None)
    for cell in nb.get("cells", []):
        cell.pop("attachments", None)
        if cell.get("cell_type") == "markdown":
            cell["source"] = _markdown(_text(cell.get("source", "")))
        elif cell.get("cell_type") == "code":
            cell["outputs"] = [o for o in map(_output, cell.get("outputs", [])) if o is not None]
        else:  # a raw cell is passed to the page as it is: none
            cell["cell_type"], cell["source"] = "markdown", _markdown(_text(cell.get("source", "")))
            cell.pop("outputs", None)
    return nb


def safe_copy_file(path: Path, folder: Path) -> Path:
    """The safe copy of the notebook at ``path``, written once into ``folder`` under the
    same name (a second edition's build is handed the copy, and keeps it)."""
    if path.parent == folder:
        return path
    notebook = json.loads(path.read_text(encoding="utf-8"))
    out = folder / path.name
    out.write_text(json.dumps(safe_copy(notebook), ensure_ascii=False, indent=1), encoding="utf-8")
    return out
