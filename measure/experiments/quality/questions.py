"""§7's battery: short factual questions, their accepted answers, how an answer is
scored, and the repetition penalty it is answered with besides none."""

from __future__ import annotations

import re

INSTRUCTION = "Answer in a few words."  # put before each question

# Keskar et al., 2019 (CTRL, arXiv:1909.05858, §4.1) found a penalty of about 1.2 to
# balance truthful generation against repetition; it is the usual serving value.
SERVING_PENALTY = 1.2

# (question, accepted answers as regular expressions, matched case-insensitively on
# word boundaries anywhere in the answer). Written for this site; answers are textbook facts.
QUESTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("What is the capital of France?", ("paris",)),
    ("How many legs does a spider have?", ("8", "eight")),
    ("Who wrote Romeo and Juliet?", ("shakespeare",)),
    ("What is the largest planet in our solar system?", ("jupiter",)),
    ("How many days are there in a week?", ("7", "seven")),
    ("What is the chemical formula of water?", ("h2o", "h₂o")),
    ("Which planet is known as the Red Planet?", ("mars",)),
    ("What is the capital of Japan?", ("tokyo",)),
    ("What gas do plants take in from the air to make food?", ("carbon dioxide", "co2", "co₂")),
    ("At what temperature in degrees Celsius does water freeze?", ("0", "zero")),
    ("What is the largest ocean on Earth?", ("pacific",)),
    ("What language is mainly spoken in Brazil?", ("portuguese",)),
    ("Who painted the Mona Lisa?", ("leonardo", "da vinci")),
    ("How many continents are there on Earth?", ("7", "seven")),
    ("What is the closest star to the Earth?", ("sun",)),
    ("What do bees make?", ("honey",)),
)


def score(answer: str, accepted: tuple[str, ...]) -> bool:
    text = answer.lower()
    return any(re.search(rf"(?<!\w){re.escape(a)}(?!\w)", text) for a in accepted)
