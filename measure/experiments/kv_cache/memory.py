"""§1's peak memory while generating, with the cache and recomputing. Where recomputing
a whole generation would take too long, only its last two steps are run: nothing
survives a recompute step but the token ids and the previous step's logits, and every
step is larger than the one before, so the peak of the whole loop is the peak of its
final step."""

from __future__ import annotations

import torch

from measure.lab.context import Context
from measure.lab.generation import greedy_cached, greedy_recompute
from measure.lab.memory import measure_peak


def last_steps_prefix(ids: torch.Tensor, generated: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """The sequence from which two recompute steps are the last two steps of generating
    ``new_tokens`` after ``ids``: the prompt and the first ``new_tokens - 2`` tokens."""
    return torch.cat([ids, generated[:, : new_tokens - 2]], dim=1)


def memory_rows(
    ctx: Context, ids: torch.Tensor, *, lengths: tuple[int, ...], whole_up_to: int, generated: dict | None = None
) -> tuple[list, dict]:
    """Rows of ``memory``: peak memory above the weights while generating each of
    ``lengths`` tokens, cached and recomputing (whole up to ``whole_up_to``, beyond it
    its last two steps), and the values that sum it up. ``generated``, where given,
    receives the token ids of every whole generation, by (method, length)."""
    generated = {} if generated is None else generated
    model = ctx.model.model
    lengths = sorted(lengths)
    # the longest generation recomputed whole, where the last-steps probe is checked
    # against it when some longer one is probed only
    checked = max((n for n in lengths if n <= whole_up_to), default=0)
    if lengths[-1] <= whole_up_to:
        checked = 0
    rows: list[dict] = []

    def point(method: str, n: int, steps: str, fn) -> dict:
        ctx.log(f"  peak memory, {n} new tokens, {method} ({steps})")
        peak = measure_peak(fn, device=ctx.device)
        row = {
            "method": method,
            "new_tokens": n,
            "steps_run": steps,
            "baseline_bytes": peak.baseline_bytes,
            "peak_bytes": peak.peak_bytes,
            "above_baseline_bytes": peak.above_baseline_bytes,
        }
        rows.append(row)
        return row

    ratios, last_two, share = {}, {}, 0.0
    for n in lengths:
        cached = point(
            "cached", n, "all", lambda n=n: generated.__setitem__(("cached", n), greedy_cached(model, ids, n))
        )
        recompute = []
        if n <= whole_up_to:
            whole = point(
                "recompute",
                n,
                "all",
                lambda n=n: generated.__setitem__(("recompute", n), greedy_recompute(model, ids, n)),
            )
            recompute.append(whole)
        if n > whole_up_to or n == checked:
            prefix = last_steps_prefix(ids, generated[("cached", n)], n)
            recompute.append(
                point("recompute", n, "last two", lambda prefix=prefix: greedy_recompute(model, prefix, 2))
            )
        for r in (*recompute, cached):
            r["relative_to_cached"] = r["above_baseline_bytes"] / max(1, cached["above_baseline_bytes"])
        ratios[n] = recompute[0]["relative_to_cached"]
        if recompute[-1]["steps_run"] == "last two":
            last_two[n] = recompute[-1]["relative_to_cached"]
        if n == checked:
            share = recompute[1]["above_baseline_bytes"] / max(1, recompute[0]["above_baseline_bytes"])
    order = {"recompute": 0, "cached": 1}
    rows.sort(key=lambda r: (r["new_tokens"], order[r["method"]], r["steps_run"] != "all"))
    # the two lengths compared by the same measurement: the last two steps at both where the
    # longest ran only those (the shortest ran them too, beside its whole loop)
    like = lengths[-1] in last_two and lengths[0] in last_two
    values = {
        "memory_ratio": ratios[lengths[-1]],
        "memory_tokens": lengths[-1],
        "memory_ratio_shortest": last_two[lengths[0]] if like else ratios[lengths[0]],
        "memory_ratio_shortest_whole": ratios[lengths[0]],
        "memory_compared_last_two": like,
        "memory_tokens_shortest": lengths[0],
        "memory_whole_up_to": min(whole_up_to, lengths[-1]),
        "memory_last_steps_share": share,
    }
    return rows, values
