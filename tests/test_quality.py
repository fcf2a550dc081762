"""§7 smoke run (embedded trained model, tiny sizes) and the evaluation functions."""

import pytest
import torch

from measure.experiments.quality.questions import QUESTIONS, score
from measure.lab.battery import apply_repetition_penalty
from measure.lab.evaluation import agreement, perplexity
from tests.helpers import table_rows


@pytest.mark.smoke
def test_reference_agrees_with_itself_and_quantizing_costs_perplexity(smoke_data):
    rows = {r["variant"]: r for r in table_rows(smoke_data / "quality", "quality")}
    ref = rows["reference"]
    assert float(ref["agreement"]) == 1.0 and int(ref["first_disagreement"]) == -1
    assert float(rows["int4_tensor"]["perplexity"]) > float(ref["perplexity"])
    for r in rows.values():
        assert 0.0 <= float(r["battery_greedy_low"]) <= float(r["battery_greedy_high"]) <= 1.0
        assert int(r["agreement_agreed"]) <= int(r["agreement_positions"])


@pytest.mark.smoke
def test_every_scheme_has_its_divergence_from_the_reference(smoke_data):
    d = smoke_data / "quality"
    schemes = [r["variant"] for r in table_rows(d, "quality")][1:]
    rows = {r["variant"]: r for r in table_rows(d, "divergence")}
    assert list(rows) == schemes
    for r in rows.values():
        kl, low, high = (float(r[k]) for k in ("kl", "kl_low", "kl_high"))
        assert 0 <= low <= high and kl > 0 and int(r["kl_samples"]) >= 1
        assert 0 <= float(r["top1_agreement_low"]) <= float(r["top1_agreement_high"]) <= 1
        assert float(r["delta_perplexity_low"]) <= float(r["delta_perplexity_high"])
    assert float(rows["int4_tensor"]["kl"]) > float(rows["int8_row"]["kl"])
    quality = {r["variant"]: r for r in table_rows(d, "quality")}
    ref = float(quality["reference"]["perplexity"])
    for name, r in rows.items():
        ppl = float(quality[name]["perplexity"])
        assert abs(float(r["delta_perplexity"]) - (ppl - ref)) <= 1e-9 * ppl  # the quality table's perplexities


@pytest.mark.smoke
def test_battery_rows_match_the_scores(smoke_data):
    d = smoke_data / "quality"
    answers = table_rows(d, "battery")
    for r in table_rows(d, "quality"):
        mine = [a for a in answers if a["variant"] == r["variant"] and float(a["repetition_penalty"]) == 1.0]
        assert sum(a["correct"] == "true" for a in mine) == int(r["battery_greedy"])


@pytest.mark.smoke
def test_counts_are_exact_and_model_outputs_device_scoped(smoke_data):
    from sitedata import read_experiment

    meta = read_experiment((smoke_data / "quality").parent, "quality").meta
    cols = {c["name"]: c for c in meta["tables"]["quality"]["columns"]}
    for name in ("battery_greedy", "battery_penalty", "agreement_agreed", "first_disagreement"):
        assert (cols[name]["compare"], cols[name]["scope"]) == ("exact", "device")
    for name in ("perplexity", "battery_greedy_low", "agreement", "perplexity_ratio"):
        assert (cols[name]["compare"], cols[name]["scope"]) == ("numeric", "device")


def test_scoring_matches_whole_words():
    spider, france = QUESTIONS[1], QUESTIONS[0]
    assert score("A spider has 8 legs.", spider)
    assert not score("It has 18 legs.", spider)
    assert score("The capital of France is Paris.", france)


def test_repetition_penalty_is_the_ctrl_rule():
    logits = torch.tensor([[2.0, -2.0, 1.0]])
    seen = torch.tensor([[True, True, False]])
    assert apply_repetition_penalty(logits, seen, 2.0).tolist() == [[1.0, -4.0, 1.0]]
    # one penalty per row: a row's 1.0 leaves it as it was
    rows = apply_repetition_penalty(logits.repeat(2, 1), seen.repeat(2, 1), torch.tensor([[2.0], [1.0]]))
    assert rows.tolist() == [[1.0, -4.0, 1.0], [2.0, -2.0, 1.0]]


class _Bigram(torch.nn.Module):
    """A stand-in language model: logits depend on the previous token only."""

    def __init__(self, vocab=11):
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(vocab, vocab, generator=torch.Generator().manual_seed(0)))

    def forward(self, input_ids, use_cache=False, **_):
        return type("Out", (), {"logits": self.table[input_ids]})()


@pytest.mark.parametrize(("context", "stride"), [(64, 64), (16, 16), (16, 4), (1, 1)])
def test_perplexity_scores_each_token_once_whatever_the_windows(context, stride):
    # With a bigram model, context beyond one token changes nothing: every windowing
    # must give the same sum over the same 40 targets.
    model = _Bigram()
    ids = torch.randint(0, 11, (41,), generator=torch.Generator().manual_seed(1))
    exact = -torch.log_softmax(model.table.detach()[ids[:-1]], -1).gather(1, ids[1:, None]).sum()
    p = perplexity(model, ids, context=context, stride=stride)
    assert p.tokens == 40
    assert abs(p.nll_sum - float(exact)) < 1e-4


def test_agreement_with_itself_is_one():
    from measure.lab.models import load_model

    m = load_model("arch:tiny", device=torch.device("cpu"), dtype=torch.float32).model
    prompt = torch.randint(0, 512, (1, 5), generator=torch.Generator().manual_seed(2))
    a = agreement(m, m, prompt, 12)
    assert (a.agreed, a.total, a.fraction, a.first_disagreement) == (12, 12, 1.0, -1)


@pytest.mark.parametrize("profile", ["smoke", "cpu", "full"])
def test_agreement_is_measured_alike_on_both_pages(profile):
    from measure.experiments import quality, speculative_decoding

    q = quality.Config.for_profile(profile)
    s = speculative_decoding.Config.for_profile(profile)
    assert q.agreement_tokens == s.agreement_tokens


@pytest.mark.smoke
def test_speculative_acceptance_counts_are_the_quality_agreement(smoke_data):
    """Same code, prompt and positions: each fake-quantized draft's count of agreeing
    positions on the speculative-decoding page is its scheme's count here."""
    quality_rows = {r["variant"]: r for r in table_rows(smoke_data / "quality", "quality")}
    drafts = table_rows(smoke_data / "speculative_decoding", "acceptance")
    checked = 0
    for d in drafts:
        if d["draft"] in quality_rows:
            q = quality_rows[d["draft"]]
            assert (d["agreed"], d["positions"]) == (q["agreement_agreed"], q["agreement_positions"]), d["draft"]
            checked += 1
    assert checked


def test_the_battery_reads_its_prompts_once_and_answers_as_alone():
    """Every penalty continues its own copy of one prefill's rows, all in one batch: each
    answers as a call with that penalty alone does, and each prompt of the left-padded
    batch as it would alone (greedy decoding with the cache, one prompt at a time)."""
    from measure.lab.battery import greedy_answers
    from measure.lab.generation import greedy_cached
    from measure.lab.models import load_model

    m = load_model("arch:tiny", device=torch.device("cpu"), dtype=torch.float32).model
    g = torch.Generator().manual_seed(3)
    prompts = [torch.randint(1, 512, (n,), generator=g) for n in (3, 9, 6)]
    both = greedy_answers(m, prompts, max_new_tokens=10, repetition_penalties=(1.0, 2.0))
    assert both == [greedy_answers(m, prompts, max_new_tokens=10, repetition_penalties=(p,))[0] for p in (1.0, 2.0)]
    assert both[0] == [greedy_cached(m, p.unsqueeze(0), 10)[0].tolist() for p in prompts]
    assert all(len(answer) == 10 for answer in both[1])
    assert both[0] != both[1]  # the penalty changed some answer: the rows did not swap unseen


def test_a_continuation_is_decoded_once_per_weights_and_again_once_they_change():
    """The quality page and the speculative-decoding page continue the same prompt in one
    run: the second call is the first's result, unless the weights changed in between; a
    change put back (as quality restores what it quantized) is the same weights again."""
    from measure.lab import evaluation
    from measure.lab.generation import greedy_cached
    from measure.lab.models import load_model

    m = load_model("arch:tiny", device=torch.device("cpu"), dtype=torch.float32).model
    prompt = torch.randint(1, 512, (1, 7), generator=torch.Generator().manual_seed(5))
    calls = []
    forward = m.forward
    m.forward = lambda *a, **k: calls.append(1) or forward(*a, **k)
    first = evaluation.reference_continuation(m, prompt, 12)
    decoded = len(calls)
    assert decoded == 12 and torch.equal(first, greedy_cached(m, prompt, 12))
    calls.clear()
    first[0, 0] = -1  # the caller's copy: the next caller gets the decoded tokens
    again = evaluation.reference_continuation(m, prompt, 12)
    assert not calls and torch.equal(again, greedy_cached(m, prompt, 12))
    calls.clear()
    weight = m.lm_head.weight if hasattr(m, "lm_head") else next(m.parameters())
    saved = weight.detach().clone()
    with torch.no_grad():
        weight.mul_(0.5)
    evaluation.reference_continuation(m, prompt, 12)
    assert len(calls) == decoded  # changed weights: decoded again
    with torch.no_grad():
        weight.copy_(saved)
    calls.clear()
    assert torch.equal(evaluation.reference_continuation(m, prompt, 12), again)
    assert len(calls) == decoded  # the memo keeps the latest weights' only
    calls.clear()
    evaluation.reference_continuation(m, prompt, 11)
    assert len(calls) == 11  # another length is another continuation
