"""The verdicts of claims about this machine, read from two runs and compared."""

from sitekit.claims import verdicts
from tests.conftest import write_data

CLAIMS = """
[big]
check = "exp.ratio > 2"
hardware = true

[huge]
check = "exp.ratio > 3"
hardware = true

[exact]
check = "exp.ratio > 0"
"""


def _run(root, ratio):
    write_data(root, "exp", {"t": [{"n": 1}]}, {"ratio": ratio})
    return root


def test_two_runs_compared_claim_by_claim(tmp_path, capsys):
    claims = tmp_path / "experiments" / "exp"
    claims.mkdir(parents=True)
    (claims / "claims.toml").write_text(CLAIMS)
    a = _run(tmp_path / "a", 2.5)
    b = _run(tmp_path / "b", 3.5)
    # only the claims marked hardware have a verdict; 2.5 > 2 holds, 2.5 > 3 does not
    assert verdicts.verdicts(a, tmp_path / "experiments") == {"exp.big": "✓", "exp.huge": "⚠"}
    found = [verdicts.verdicts(x, tmp_path / "experiments") for x in (a, b)]
    assert verdicts.differences(*found) == [("exp.huge", "⚠", "✓")]
    assert verdicts.differences(found[0], found[0]) == []
    # a claim neither run can decide (each a run of other experiments) is no difference
    assert verdicts.differences({"x.a": "unreadable: a lacks x"}, {"x.a": "unreadable: b lacks x"}) == []
    assert verdicts.differences({"x.a": "unreadable: a lacks x"}, {"x.a": "✓"}) == []
    assert verdicts.one_sided({"x.a": "unreadable: a lacks x", "y.b": "✓"}, {"x.a": "✓", "y.b": "✓"}) == ["x.a"]


def test_a_folder_without_the_data_is_unreadable_not_a_traceback(tmp_path, capsys):
    claims = tmp_path / "experiments" / "exp"
    claims.mkdir(parents=True)
    (claims / "claims.toml").write_text(CLAIMS)
    other = tmp_path / "other"
    write_data(other, "other", {"t": [{"n": 1}]})
    found = verdicts.verdicts(other, tmp_path / "experiments")
    assert set(found) == {"exp.big", "exp.huge"} and all(v.startswith("unreadable: ") for v in found.values())
    assert verdicts.main([str(tmp_path / "missing")]) == 2
    assert "no such data folder" in capsys.readouterr().err


def test_the_project_s_own_data_has_a_verdict_for_every_claim_about_this_machine(capsys):
    from tests.conftest import REPO

    assert verdicts.main([str(REPO / "site_data"), str(REPO / "site_data")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("0 of ") and "decided differently" in out
    found = verdicts.verdicts(REPO / "site_data")
    assert found and not [c for c, v in found.items() if v.startswith("unreadable")]


QUESTIONS = """
[up]
check = "exceeds(exp.r_low, exp.r_high, 0.05)"
hardware = true

[level]
check = "same(exp.r_low, exp.r_high, 0.05)"
hardware = true

[down]
check = "undercuts(exp.r_low, exp.r_high, 0.05)"
hardware = true

[other_margin]
check = "exceeds(exp.r_low, exp.r_high, 0.25)"
hardware = true

[big]
check = "exp.ratio > 2"
hardware = true

[not_big]
check = "not exp.ratio > 2"
hardware = true

[memory_bound]
check = "exp.bound == 'memory'"
hardware = true

[compute_bound]
check = "exp.bound == 'compute'"
hardware = true
"""


def test_the_branches_of_one_sentence_are_one_question(tmp_path, capsys):
    """A claim and its negation, the three words that decide one interval against one
    margin, and two words for one value, are one question each: the question that
    changed counts once."""
    claims = tmp_path / "experiments" / "exp"
    claims.mkdir(parents=True)
    (claims / "claims.toml").write_text(QUESTIONS)
    asked = verdicts.questions(tmp_path / "experiments")
    assert asked == {
        "exp.big": "exp.big",
        "exp.not_big": "exp.big",
        "exp.down": "exp.down",
        "exp.level": "exp.down",
        "exp.up": "exp.down",
        "exp.other_margin": "exp.other_margin",
        "exp.compute_bound": "exp.compute_bound",
        "exp.memory_bound": "exp.compute_bound",
    }
    a, b = tmp_path / "a", tmp_path / "b"
    write_data(a, "exp", {"t": [{"n": 1}]}, {"ratio": 2.5, "r_low": 1.01, "r_high": 1.04, "bound": "memory"})
    write_data(b, "exp", {"t": [{"n": 1}]}, {"ratio": 1.5, "r_low": 1.03, "r_high": 1.07, "bound": "compute"})
    found = [verdicts.verdicts(x, tmp_path / "experiments") for x in (a, b)]
    # a: practically the same (inside ±5 %); b: straddles 1.05, so up and level cannot tell
    assert verdicts.differences(*found, asked) == [
        ("exp.big, exp.not_big", "✓ ⚠", "⚠ ✓"),
        ("exp.compute_bound, exp.memory_bound", "⚠ ✓", "✓ ⚠"),
        ("exp.down, exp.level, exp.up", "⚠ ✓ ⚠", "⚠ ≈ ≈"),
    ]
    # claim by claim, the same three changes read as six
    assert len(verdicts.differences(*found)) == 6
    # two of the three contradict (✓ against ⚠); up and level only went undecided in b
    assert [verdicts.contradicts(x, y) for _, x, y in verdicts.differences(*found, asked)] == [True, True, False]
