"""The experiment interface, checked when the registry loads an experiment: a member
missing or of the wrong kind is one error naming the experiment and the member."""

import sys
import types
from dataclasses import dataclass

import pytest

from measure import registry
from measure.registry import NotAnExperiment
from sitedata.schema import Column, Result, Table, Value
from tests.conftest import DOCS, nav_pages


@dataclass(frozen=True, kw_only=True)
class Config:
    n: int = 1

    @classmethod
    def for_profile(cls, profile: str) -> "Config":
        return cls()


def _run(cfg, ctx):
    return Result(tables={"t": [{"x": 1}]}, values={})


GOOD = {
    "TITLE": "A fake",
    "TABLES": (Table("t", "T", (Column("x"),)),),
    "VALUES": (Value("v"),),
    "Config": Config,
    "run": _run,
}


@pytest.fixture
def fake(monkeypatch):
    """Installs ``measure.experiments.fake`` with the given members and loads it."""

    def load(**members):
        module = types.ModuleType("measure.experiments.fake")
        module.__dict__.update({k: v for k, v in members.items() if v is not ...})
        monkeypatch.setitem(sys.modules, "measure.experiments.fake", module)
        monkeypatch.setattr(registry, "EXPERIMENTS", (*registry.EXPERIMENTS, "fake"))
        return registry.load("fake")

    return load


def test_every_experiment_has_the_interface():
    for name in registry.EXPERIMENTS:
        exp = registry.load(name)
        assert exp.name == name and exp.TABLES and isinstance(exp.Config.for_profile("smoke"), exp.Config)


def test_optional_members_default(fake):
    exp = fake(**GOOD)
    assert exp.NEEDS_TRAINED is False and exp.work is None and exp.CHAPTER_COUNTERPART is True
    exp = fake(**GOOD, NEEDS_TRAINED=True, work=lambda cfg: None, CHAPTER_COUNTERPART=False)
    assert exp.NEEDS_TRAINED is True and callable(exp.work) and exp.CHAPTER_COUNTERPART is False


@pytest.mark.parametrize(
    ("member", "value", "message"),
    [
        ("run", ..., "experiment 'fake': its module defines no run"),
        ("TABLES", ..., "experiment 'fake': its module defines no TABLES"),
        ("TITLE", 3, "experiment 'fake': TITLE must be a non-empty str, not a int"),
        ("TABLES", list(GOOD["TABLES"]), "experiment 'fake': TABLES must be a non-empty tuple of Table, not a list"),
        ("TABLES", (), "experiment 'fake': TABLES must be a non-empty tuple of Table, not a tuple"),
        ("VALUES", ("v",), "experiment 'fake': VALUES must be a tuple of Value, not a tuple"),
        ("Config", dict, "experiment 'fake': Config must be a dataclass with a classmethod for_profile"),
        ("run", lambda cfg: None, "experiment 'fake': run must be a function of (config, context), not a function"),
        ("NEEDS_TRAINED", "yes", "experiment 'fake': NEEDS_TRAINED must be a bool, not a str"),
        ("work", 3, "experiment 'fake': work must be a function of (config), or left out, not a int"),
        ("CHAPTER_COUNTERPART", "no", "experiment 'fake': CHAPTER_COUNTERPART must be a bool, not a str"),
    ],
)
def test_a_broken_experiment_is_one_error_naming_it_and_the_member(fake, member, value, message):
    with pytest.raises(NotAnExperiment) as e:
        fake(**{**GOOD, member: value})
    assert str(e.value).startswith(message)


def test_a_config_without_for_profile_is_refused(fake):
    @dataclass(frozen=True)
    class Bare:
        n: int = 1

    with pytest.raises(NotAnExperiment, match="'fake': Config must be a dataclass with a classmethod for_profile"):
        fake(**{**GOOD, "Config": Bare})


# --- the sections' pages: the registry orders the experiments, mkdocs.yml the pages ---


def test_a_sections_page_is_its_name_with_hyphens():
    assert registry.page("kv_cache") == "kv-cache.md" and registry.page("batching") == "batching.md"
    assert "chapter" in registry.EXPERIMENTS and "chapter" not in registry.SECTIONS


def test_every_section_has_a_page_in_the_nav_in_the_registrys_order():
    """A section added to the registry needs its page, and the page its place in the nav,
    where the sections stand in the chapter's order."""
    sections = [registry.page(name) for name in registry.SECTIONS]
    missing = [p for p in sections if not (DOCS / p).is_file()]
    assert not missing, f"sections with no page in docs/: {missing}"
    nav = nav_pages()
    assert [p for p in nav if p in sections] == sections, "the nav's sections are not the registry's, in its order"
