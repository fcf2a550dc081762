"""§7's strict scorer: hand-worked cases, and agreement with the hand-checked key of every
answer the battery has produced (tests/fixtures/quality_key.json)."""

import csv
import json
from pathlib import Path

import pytest

from measure.experiments.quality.questions import QUESTIONS
from measure.experiments.quality.scoring import Question, normalise, score, words

REPO = Path(__file__).resolve().parent.parent
KEY = REPO / "tests" / "fixtures" / "quality_key.json"
BY_TEXT = {q.text: q for q in QUESTIONS}


def q(text: str) -> Question:
    return BY_TEXT[text]


SPIDER = "How many legs does a spider have?"
FREEZE = "At what temperature in degrees Celsius does water freeze?"
CONTINENTS = "How many continents are there on Earth?"
OCEAN = "What is the largest ocean on Earth?"
PLANET = "What is the largest planet in our solar system?"
GAS = "What gas do plants take in from the air to make food?"
BRAZIL = "What language is mainly spoken in Brazil?"
MONA_LISA = "Who painted the Mona Lisa?"
STAR = "What is the closest star to the Earth?"


def test_normalising_reads_subscripts_degrees_and_number_words():
    assert words("Water is H₂O") == ("water", "is", "h2o")
    assert words("Eight-legged, twelve") == ("8", "legged", "12")
    assert "degrees celsius" in normalise("At 0°C")
    assert words("7:18 and 7.12 and 7,200,000,000.") == ("7:18", "and", "7.12", "and", "7,200,000,000")


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        (OCEAN, "The Largest Ocean: The Great Blue Hole of the North Pacific"),  # the three
        (FREEZE, "At 0°C (98.6F), the only way for"),
        (CONTINENTS, "The answer is 7:18 (20) but I will keep"),
        (SPIDER, "A spider has eight pairs of legs"),  # counts pairs
        (SPIDER, "It has 18 legs."),
        (CONTINENTS, "There are 7 planets"),  # counts something else
        (CONTINENTS, "The answer to this question is 7 billion"),
        (CONTINENTS, "There are 7,200,000,000"),
        (CONTINENTS, "There are 7.12 Earths in total."),
        (PLANET, "The largest planet is Jupiter, with Earth being the largest planet"),  # an alternative after it
        (PLANET, "Pluto or Jupiter"),  # a wrong option first
        (BRAZIL, "Portuguese and Spanish"),
        (BRAZIL, "In Portuguese, the answer for you needs to be Spanish"),  # its stated answer
        (GAS, "Plants can use oxygen and carbon dioxide"),
        ("What is the capital of France?", "Parisislegal"),  # not a whole word
        ("Who painted the Mona Lisa?", "Who was painting Leonardo da Vinci's portrait"),  # a question back
        ("What do bees make?", "Bees make a waxen honeycomb"),
        (FREEZE, "- and time [ bb 0 the- ("),  # a stray number in front of another word
        (SPIDER, ""),
        (
            MONA_LISA,
            "The painting of the Mona Lisa is attributed to Leonardo da Vinci and his wife",
        ),  # a second painter
        (MONA_LISA, "Leonardo da Vinci, with his apprentice Salai"),
        ("Who wrote Romeo and Juliet?", "William Shakespeare and their company"),
        (
            BRAZIL,
            "Brazilian Portuguese is a Bantu language spoken primarily by the indigenous peoples",
        ),  # the wrong kind
        (STAR, "The nearest exoplanet orbiting Proxima Centauri was confirmed as Proxima b"),  # a planet, no star
        (STAR, "The closest star to the Earth is Sirius, which is approximately 86"),
    ],
)
def test_wrong(question, answer):
    assert not score(answer, q(question))


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        (SPIDER, "A spider has 8 legs."),
        (SPIDER, "A spider has eight legs, so it has eight legs."),
        (SPIDER, 'A Spider with eight legs is called an "eight-legged creature."'),
        (FREEZE, "At 0°C the answer is that it freezes at zero and this occurs"),
        (FREEZE, "At what temperature in degrees Celsius does water freeze is 0."),
        (CONTINENTS, "The answer to this question is 7: The Earth has seven continents"),
        (OCEAN, "The largest ocean on Earth is the Pacific Ocean, which is approximately 7,"),
        (GAS, "Plants take in carbon dioxide from the air and release oxygen"),  # oxygen in a clause of its own
        (GAS, "Plants take in CO₂."),
        ("What is the chemical formula of water?", "The Chemical Formula: H2O (water)"),
        ("Who wrote Romeo and Juliet?", "A: William Shakespeare"),
        ("What is the capital of Japan?", "Tokyo, although some other cities like Kyoto, Osaka"),
        ("Which planet is known as the Red Planet?", "The Red Planet (Mars) is often called the Earth's twin"),
        (MONA_LISA, "The Mona Lisa is attributed to Leonardo da Vinci and was created during his time"),  # a clause
        (BRAZIL, "Portuguese, a Romance language"),  # a true kind, no wrong option
        (STAR, "The closest star to the Earth is actually the Sun"),
        (STAR, "The closest star to the Earth is Proxima Centauri, which is approximately"),  # the closest beyond it
        (STAR, "The nearest star to our solar system lies Proxima Centauri at approximately 4"),
    ],
)
def test_right(question, answer):
    assert score(answer, q(question))


def test_the_battery_is_sixteen_questions_with_disjoint_options():
    assert len(QUESTIONS) == 16 and len(BY_TEXT) == 16
    for question in QUESTIONS:
        assert not {words(a) for a in question.accepted} & {words(w) for w in question.wrong}, question.text
        assert all(score(a, question) for a in question.accepted), question.text
    assert [question.numeric for question in QUESTIONS].count(True) == 4


def _key() -> list[dict]:
    return json.loads(KEY.read_text(encoding="utf-8"))["answers"]


def test_the_scorer_agrees_with_the_hand_checked_key():
    wrong = []
    for a in _key():
        if score(a["answer"], q(a["question"])) != a["right"]:
            wrong.append((a["question"], a["answer"], a["right"]))
    assert not wrong, f"scorer and key disagree on {len(wrong)}: {wrong[:5]}"


def test_every_committed_answer_has_a_verdict():
    key = {(a["question"], a["answer"]) for a in _key()}
    with open(REPO / "site_data" / "quality" / "battery.csv", newline="", encoding="utf-8") as f:
        missing = [(r["question"], r["answer"]) for r in csv.DictReader(f) if (r["question"], r["answer"]) not in key]
    assert not missing, f"answers without a verdict in {KEY.name}: {missing[:5]}"


def test_the_key_is_one_verdict_per_answer():
    pairs = [(a["question"], a["answer"]) for a in _key()]
    assert len(pairs) == len(set(pairs))
    assert {a["question"] for a in _key()} <= set(BY_TEXT)
    assert all(isinstance(a["right"], bool) and a["runs"] for a in _key())
