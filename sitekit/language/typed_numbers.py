"""Numbers typed by a person rather than rendered from the data: where they may be, and
how an edition writes them.

- A page's prose (``prose``, ``typed``): the English pages list theirs with a reason
  (tests/prose/numbers.txt); an edition writes each one as its language does: Spanish
  "4096" and "65.536", Galician "65 536", Czech "0,3" (``miswritten``). A build fails on
  an edition page that writes one otherwise, in prose or in a sentence a marker shows.
- A catalog types no number. A message that carries one as English writes it ("at
  4,096", "penalty 1.2") is asked of the catalog with the number lifted out ("at
  {number1}", ``lift``), and the translation gets it back as the language writes it
  (``write_back``). Numbers that are names or never change with the language (int4,
  §1.1, Qwen2.5-0.5B, "95 %") stay in the message, and a translation may only repeat
  them (``added_in_translation``).
"""

from __future__ import annotations

import ast
import re

from sitekit.language import locale_numbers

# A standalone number as English writes it with a separator ("4,096", "0.3"), not part of
# a name or version ("Qwen2.5-0.5B", "§1.1", "2^0.5", "torch 2.13.0").
_ENGLISH = re.compile(r"(?<![\w.§^/-])(?:\d{1,3}(?:,\d{3})+|\d+\.\d+)(?![\w.]|,\d)")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_LIFTED = "number{}"
# A number in any edition's writing: digits with "." "," or a no-break space between them
# ("65 536" in Galician and Czech), or a plain space before exactly three digits.
_WRITTEN = re.compile(r"\d+(?:(?:[.,\u00a0\u202f]| (?=\d{3}\b))\d+)*")
_ENGLISH_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def prose(markdown: str) -> str:
    """What a reader reads as typed text: markers, branch conditions, code, formulas, the
    calculator's form and markup removed."""
    for pattern in (
        r"```.*?```",
        r"\{\{.*?\}\}",
        r"<!--.*?-->",
        r"<form.*?</form>",
        r"`[^`]*`",
        r"\$\$.*?\$\$",  # a formula on its own line
        r"(?<![\w$])\$[^$\n]+\$(?![\w$])",  # a formula in a sentence
        r"<[^>]+>",
    ):
        markdown = re.sub(pattern, " ", markdown, flags=re.S)
    return re.sub(r"\]\([^)]*\)", "]", markdown)  # link targets


def typed(text: str, number: re.Pattern = _ENGLISH_NUMBER) -> list[tuple[str, str]]:
    """(number, context) for every standalone number: not part of a name (int8, Q4_1,
    SmolLM2-135M, 4-bit), not an arithmetic identity (16/128), not in a citation."""
    found = []
    for line in text.splitlines():
        if "arXiv:" in line:
            continue
        for m in number.finditer(line):
            written = m.group(0).rstrip(",.")
            before, after = line[: m.start()], line[m.start() + len(written) :]
            if re.search(r"[\w.^/-]$", before) or re.match(r"[\w/]|-[A-Za-z]|\.\d|,\d", after):
                continue
            if re.search(r"\d\s*[/×]\s*\d", line[max(0, m.start() - 12) : m.end() + 12]):
                continue  # part of an identity worked in the text, such as 4 + 16/128 = 4.125
            found.append((written, line[max(0, m.start() - 40) : m.end() + 30].strip()))
    return found


def marker_sentences(markdown: str) -> list[str]:
    """The sentences markers show as they are typed (a claim's sentence, a label): their
    string arguments with a letter and a space in them (ids and expressions have none)."""
    found = []
    for inner in re.findall(r"\{\{(.*?)\}\}", markdown, re.S):
        try:
            tree = ast.parse(inner.strip(), mode="eval")
        except SyntaxError:  # not a call; the markers report it when they render
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.search(r"[^\W\d_].* ", node.value):
                found.append(node.value)
    return found


def written_as_the_language_does(number: str) -> bool:
    """Whether ``number`` is written as the current locale writes it: its group
    separator where the locale groups, and its decimal sign."""
    symbols = locale_numbers.symbols()
    text = number.replace("\u202f", "\u00a0").replace(" ", "\u00a0")
    whole, _, decimals = text.partition(symbols["decimal"])
    digits = whole.replace(symbols["group"].replace("\u202f", "\u00a0"), "")
    if not digits.isdigit() or (decimals and not decimals.isdigit()) or symbols["decimal"] in decimals:
        return False
    expected = locale_numbers.integer(int(digits)) + (symbols["decimal"] + decimals if decimals else "")
    return expected.replace("\u202f", "\u00a0") == text


def miswritten(markdown: str) -> list[tuple[str, str]]:
    """(number, context) for each number an edition page types, in its prose or in a
    marker's sentence, otherwise than its language writes numbers."""
    texts = [prose(markdown), *marker_sentences(markdown)]
    return [
        (number, context)
        for text in texts
        for number, context in typed(text, _WRITTEN)
        if re.search(r"\D", number) and not written_as_the_language_does(number)
    ]


def lift(message: str) -> tuple[str, list[str]]:
    """``message`` with each English-written number replaced by a numbered placeholder,
    and the numbers: ("at {number1}", ["4,096"])."""
    numbers: list[str] = []

    def placeholder(m: re.Match) -> str:
        numbers.append(m.group(0))
        return "{" + _LIFTED.format(len(numbers)) + "}"

    return _ENGLISH.sub(placeholder, message), numbers


def write_back(text: str, numbers: list[str]) -> str:
    """``text`` with the lifted ``numbers`` in its placeholders, as the locale writes them."""
    for i, number in enumerate(numbers, start=1):
        text = text.replace("{" + _LIFTED.format(i) + "}", in_locale(number))
    return text


def in_locale(number: str) -> str:
    """A number as English or Python writes it ("4,096", "0.30", "-2") as the locale
    writes it, with as many decimals."""
    whole, _, decimals = number.replace(",", "").partition(".")
    return locale_numbers.fixed(float(f"{whole}.{decimals or 0}"), len(decimals))


def added_in_translation(message: str, translation: str) -> list[str]:
    """Numbers ``translation`` types that ``message`` does not, exactly as written."""
    have = set(_WRITTEN.findall(_PLACEHOLDER.sub(" ", message)))
    return [n for n in _WRITTEN.findall(_PLACEHOLDER.sub(" ", translation)) if n not in have]
