"""§7's strict scorer: an answer is right only when it gives an accepted answer first, as
whole words, and nothing after it offers a different one.

The text is normalised first (Unicode NFKC, so ``H₂O`` is ``h2o``; lower case; ``°C`` read
as "degrees celsius"; number words up to twenty read as digits). Articles and
punctuation are ignored when phrases are compared. Then, in order:

1. An answer that opens with an interrogative (who, what, which, how, ...) repeats a
   question instead of answering it: wrong.
2. Where the answer says "answer" ("the answer is 7", "the answer for you needs to be
   ..."), what follows that word is its answer, and only that part is scored.
3. Numeric questions: the first number in that part must be the accepted one, written
   as one whole number (``7:18``, ``7.12`` and ``7,200,000,000`` are other numbers), and
   a word written right after it must be the question's own unit or a connective
   (``7 days``, ``zero and``; not ``7 months``, ``7 billion`` or ``eight pairs``); a
   different number anywhere after it contradicts it (``0°C (98.6F)``).
4. Other questions: the first candidate named, among the accepted answers and the
   question's wrong options (longest phrase first, so ``North Pacific`` is the wrong
   option and not ``Pacific``), must be an accepted answer; a wrong option joined to it
   as an alternative (only connectives, articles or the question's own words between:
   ``Pluto or Eris``, ``Jupiter, with Earth being ...``, ``Portuguese and Spanish``)
   contradicts it. A wrong option further on, in a clause of its own ("... and release
   oxygen"), is not an alternative answer.
5. A question that asks who: an accepted name followed by "and" or "with" and a
   possessive ("Leonardo da Vinci and his wife") names a second person beside it, as
   the question's wrong options do: the answer credits someone else too.

``tests/fixtures/quality_key.json`` holds a verdict, judged by reading, for every answer the
committed run produced; ``tests/test_quality_scoring.py`` holds the scorer to it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
ARTICLES = frozenset({"a", "an", "the"})
INTERROGATIVES = frozenset({"who", "what", "which", "how", "where", "when", "why", "whom", "whose"})
# "X and his wife": a possessive after "and" or "with" introduces another person.
POSSESSIVES = frozenset({"his", "her", "their"})
# Words that join alternatives: a wrong option after the answer with only these (articles
# and the question's own words) between is offered as another answer.
CONNECTIVES = frozenset({"and", "or", "nor", "but", "with", "being", "not", "actually", "also", "maybe", "perhaps"})
_TOKEN = re.compile(r"[a-z0-9]+(?:[.,:][0-9]+)*")
_NUMBER = re.compile(r"[0-9]+(?:[.,:][0-9]+)*")


@dataclass(frozen=True)
class Token:
    word: str  # normalised: lower case, number words as digits
    gap_after: str  # the raw text up to the next token ('' at the end)


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"°\s*c\b", " degrees celsius ", text)
    return re.sub(r"°\s*f\b", " degrees fahrenheit ", text)


def tokens(text: str) -> list[Token]:
    text = normalise(text)
    found = list(_TOKEN.finditer(text))
    out = []
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        out.append(Token(NUMBER_WORDS.get(m.group(), m.group()), text[m.end() : end]))
    return out


def words(text: str) -> tuple[str, ...]:
    return tuple(t.word for t in tokens(text))


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


@dataclass(frozen=True)
class Question:
    text: str
    accepted: tuple[str, ...]  # as written; normalised when compared
    wrong: tuple[str, ...] = ()  # the question's wrong options: other answers it could be given

    @property
    def numeric(self) -> bool:
        return all(_NUMBER.fullmatch(words(a)[0]) for a in self.accepted)

    @property
    def asks_who(self) -> bool:
        return words(self.text)[0] == "who"

    @property
    def own_words(self) -> frozenset[str]:
        ws = words(self.text)
        return frozenset(ws) | {_stem(w) for w in ws}


def _phrases(options: tuple[str, ...]) -> list[tuple[str, ...]]:
    return sorted({words(o) for o in options}, key=len, reverse=True)


def _mentions(ws: list[str], question: Question) -> list[tuple[int, int, bool]]:
    """(start, end, accepted) of every candidate named, left to right, longest first."""
    cands = [(p, True) for p in _phrases(question.accepted)] + [(p, False) for p in _phrases(question.wrong)]
    cands.sort(key=lambda c: len(c[0]), reverse=True)
    out, i = [], 0
    while i < len(ws):
        for phrase, ok in cands:
            if tuple(ws[i : i + len(phrase)]) == phrase:
                out.append((i, i + len(phrase), ok))
                i += len(phrase)
                break
        else:
            i += 1
    return out


def _score_numeric(toks: list[Token], question: Question) -> bool:
    accepted = {words(a)[0] for a in question.accepted}
    numbers = [i for i, t in enumerate(toks) if _NUMBER.fullmatch(t.word)]
    if not numbers:
        return False
    first = numbers[0]
    if toks[first].word not in accepted:
        return False
    nxt = first + 1
    if nxt < len(toks) and not toks[first].gap_after.strip():  # a word written right after the number
        if _stem(toks[nxt].word) not in question.own_words | CONNECTIVES:
            return False  # it counts something else: 7 months, 7 billion, eight pairs
    return all(toks[i].word in accepted for i in numbers[1:])


def _score_named(toks: list[Token], question: Question) -> bool:
    ws = [t.word for t in toks]
    mentions = _mentions(ws, question)
    if not mentions or not mentions[0][2]:
        return False
    joining = CONNECTIVES | ARTICLES | question.own_words
    end = mentions[0][1]
    for start, stop, ok in mentions[1:]:
        if ok:
            end = stop
        elif all(w in joining for w in ws[end:start]):
            return False  # another answer offered as an alternative to the accepted one
    return not (question.asks_who and _another_person(ws, mentions))


def _another_person(ws: list[str], mentions: list[tuple[int, int, bool]]) -> bool:
    """Whether an accepted name is followed by "and his ...", "with their ...": a second
    person credited beside the answer (not "and was created", a clause of its own)."""
    for _start, stop, ok in mentions:
        after = ws[stop : stop + 2]
        if ok and len(after) == 2 and after[0] in {"and", "with"} and after[1] in POSSESSIVES:
            return True
    return False


def score(answer: str, question: Question) -> bool:
    toks = tokens(answer)
    if not toks or toks[0].word in INTERROGATIVES:
        return False
    for i, t in enumerate(toks):
        if t.word == "answer":
            toks = toks[i + 1 :]
            break
    return _score_numeric(toks, question) if question.numeric else _score_named(toks, question)
