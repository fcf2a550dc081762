"""§7's battery: short factual questions, their accepted answers and wrong options, and
the repetition penalty it is answered with besides none. How an answer is scored is in
``scoring``."""

from __future__ import annotations

from measure.experiments.quality.scoring import Question, score

__all__ = ["INSTRUCTION", "QUESTIONS", "SERVING_PENALTY", "Question", "score"]

INSTRUCTION = "Answer in a few words."  # put before each question

# Keskar et al., 2019 (CTRL, arXiv:1909.05858, §4.1) found a penalty of about 1.2 to
# balance truthful generation against repetition; it is the usual serving value.
SERVING_PENALTY = 1.2

_PLANETS = ("mercury", "venus", "earth", "mars", "jupiter", "saturn", "uranus", "neptune", "pluto")

# Written for this site; answers are textbook facts. Wrong options are the other answers
# a question could be given; a numeric question's wrong options are every other number.
# Bees make wax and propolis too: no wrong option for honey. The North and South Pacific
# are parts of an ocean, not the largest ocean. Bantu is a family of African languages:
# "Portuguese is a Bantu language" gives Brazil's language the wrong kind. The closest
# star is the Sun, and the closest beyond it Proxima Centauri: the question admits both,
# while a planet or an exoplanet is no star at all.
QUESTIONS: tuple[Question, ...] = (
    Question("What is the capital of France?", ("paris",), ("lyon", "marseille", "versailles")),
    Question("How many legs does a spider have?", ("8",)),
    Question("Who wrote Romeo and Juliet?", ("william shakespeare", "shakespeare"), ("marlowe", "dickens")),
    Question(
        "What is the largest planet in our solar system?",
        ("jupiter",),
        (*(p for p in _PLANETS if p != "jupiter"), "sun", "eris", "europa"),
    ),
    Question("How many days are there in a week?", ("7",)),
    Question("What is the chemical formula of water?", ("h2o",), ("h2o2", "co2", "ho")),
    Question("Which planet is known as the Red Planet?", ("mars",), tuple(p for p in _PLANETS if p != "mars")),
    Question("What is the capital of Japan?", ("tokyo",), ("kyoto", "osaka")),
    Question(
        "What gas do plants take in from the air to make food?",
        ("carbon dioxide", "co2"),
        ("oxygen", "o2", "nitrogen", "hydrogen", "carbon monoxide"),
    ),
    Question("At what temperature in degrees Celsius does water freeze?", ("0",)),
    Question(
        "What is the largest ocean on Earth?",
        ("pacific",),
        ("atlantic", "indian", "arctic", "southern", "antarctic", "north pacific", "south pacific"),
    ),
    Question(
        "What language is mainly spoken in Brazil?",
        ("brazilian portuguese", "portuguese"),
        ("spanish", "english", "french", "bantu"),
    ),
    Question(
        "Who painted the Mona Lisa?",
        ("leonardo da vinci", "leonardo", "da vinci"),
        ("michelangelo", "raphael", "rembrandt", "picasso", "van gogh"),
    ),
    Question("How many continents are there on Earth?", ("7",)),
    Question(
        "What is the closest star to the Earth?",
        ("sun", "proxima centauri", "proxima"),
        ("alpha centauri", "sirius", "polaris", "moon", "planet", "exoplanet"),
    ),
    Question("What do bees make?", ("honey",)),
)
