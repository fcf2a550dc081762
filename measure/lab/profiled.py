"""Where a timed step's time goes, by group of operators: ``torch.profiler`` (CPU
activities) around each call of an interleaved sweep (``sampling.interleaved`` with a
timer that profiles the call it times), every operator's self time summed by group
(``GROUPS``). What the profiled call's wall time holds beyond all the operators is
Python, the framework and the dispatcher between them (and the profiler's own records,
which is why a profiled step is slower than a plain one): the group ``outside``.

Shared by the pages that decompose a step: prefill-decode (a decode step at two
contexts), batching (a batched decode step against a prefill of as many tokens) and
weight-quantization (a decode step with each low-bit kernel)."""

from __future__ import annotations

from collections import Counter

from measure.lab.medians import Estimate
from measure.lab.sampling import Sweep, host_timer, interleaved

# The groups, in the order the tables list them, with the words the tables show.
GROUPS = {
    "matmul": "matrix multiplies (projections, output head)",
    "attention": "attention (scaled dot product)",
    "concat": "concatenations (cache appends, rotary)",
    "elementwise": "elementwise (norms, rotary, activation, residual)",
    "bookkeeping": "views, copies and allocations",
    "other": "other operators",
    "outside": "outside the operators (Python, framework)",
    "step": "the whole step, profiled",
}

# the low-bit kernels of the weight-quantization page are matrix multiplies too
_MATMUL = {
    "mm", "addmm", "bmm", "matmul", "linear", "t", "_unsafe_view",
    "_weight_int8pack_mm", "_weight_int4pack_mm_for_cpu", "quantized::linear_dynamic",
}  # fmt: skip
_CONCAT = {"cat"}
_BOOKKEEPING = {
    "view", "as_strided", "slice", "narrow", "transpose", "reshape", "_reshape_alias", "unsqueeze", "squeeze",
    "expand", "select", "empty", "empty_like", "empty_strided", "to", "_to_copy", "copy_", "contiguous", "clone",
    "alias", "detach", "resolve_conj", "resolve_neg", "result_type", "lift_fresh", "zeros", "ones", "full",
    "new_empty", "fill_", "zero_", "index", "item", "_local_scalar_dense", "permute",
}  # fmt: skip
_ELEMENTWISE = {
    "mul", "add", "sub", "div", "div_", "pow", "mean", "rsqrt", "sqrt", "neg", "silu", "gelu", "sum", "cos", "sin",
    "exp", "argmax", "embedding", "index_select", "arange", "where", "masked_fill", "tanh", "sigmoid", "add_", "mul_",
    "softmax", "_softmax", "layer_norm", "native_layer_norm", "rms_norm", "_fused_rms_norm", "clamp", "max", "min",
}  # fmt: skip


def group_of(op: str) -> str:
    """The group of a profiler record's name (``aten::mm`` is ``matmul``)."""
    name = op.removeprefix("aten::")
    if name in _MATMUL:
        return "matmul"
    if "scaled_dot_product" in name or "attention" in name:
        return "attention"
    if name in _CONCAT:
        return "concat"
    if name in _BOOKKEEPING:
        return "bookkeeping"
    if name in _ELEMENTWISE:
        return "elementwise"
    return "other"


class ProfilingTimer:
    """A timer for ``interleaved`` that profiles each call it times: returns the call's
    wall time (inside the profiler, device synchronised) and keeps, per point, each
    call's self time and record count per group."""

    def __init__(self, points: dict, device) -> None:
        self.key = {id(fn): key for key, fn in points.items()}
        self.records: dict = {key: [] for key in points}
        self.clock = host_timer(device)

    def __call__(self, fn) -> float:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            wall = self.clock(fn)
        seconds, calls = Counter(), Counter()
        for name, (self_s, count) in self_times(prof.profiler.kineto_results.events()).items():
            seconds[group_of(name)] += self_s
            calls[group_of(name)] += count
        self.records[self.key[id(fn)]].append((wall, seconds, calls))
        return wall


def self_times(events) -> dict[str, tuple[float, int]]:
    """Per operator name, its records' self time (seconds: a record's duration less its
    direct children's, children nested in time on the same thread) and how many records
    it has: what ``prof.key_averages()`` gives as ``self_cpu_time_total`` and ``count``,
    in a twentieth of the time. ``key_averages`` builds a tree of Python objects per
    record, 0.2 to 0.5 s for a decode step's 6,000 records here, five to ten times the
    step itself, in every round of a profiled sweep. As it does, a record nested alone
    in a record of the same name (an operator that re-dispatches to itself) is folded
    into its parent: counted once, its time the parent's."""
    spans = sorted(
        ((e.start_thread_id(), e.start_ns(), -e.duration_ns(), e.name()) for e in events),
    )
    nodes: list[list] = []  # [name, duration_ns, children's ns, children, parent]
    stack: list[tuple[int, int, list]] = []  # (thread, end_ns, node)
    for thread, start, neg_duration, name in spans:
        while stack and (stack[-1][0] != thread or stack[-1][1] <= start):
            stack.pop()
        parent = stack[-1][2] if stack else None
        node = [name, -neg_duration, 0, 0, parent]
        if parent is not None:
            parent[2] += node[1]
            parent[3] += 1
        nodes.append(node)
        stack.append((thread, start - neg_duration, node))
    out: dict[str, tuple[float, int]] = {}
    for name, duration, children_ns, _, parent in nodes:
        if parent is not None and parent[0] == name and parent[3] == 1:
            # folded into its parent: its self time is added there, its record is not
            self_s, count = out.get(name, (0.0, 0))
            out[name] = (self_s + (duration - children_ns) / 1e9, count)
            continue
        self_s, count = out.get(name, (0.0, 0))
        out[name] = (self_s + (duration - children_ns) / 1e9, count + 1)
    return out


def profiled(points: dict, *, device, seed: int, budget_s: float, target: float, before=None) -> tuple[Sweep, dict]:
    """``points`` timed in interleaved rounds, each call profiled: the sweep (its
    estimates are of profiled calls) and, per point, its calls' records."""
    timer = ProfilingTimer(points, device)
    sweep = interleaved(points, device=device, seed=seed, budget_s=budget_s, target=target, before=before, timer=timer)
    return sweep, timer.records


def group_estimates(records: list, target: float) -> dict[str, tuple[Estimate, int | None]]:
    """Per group of ``GROUPS``, the estimate of its self time over a point's profiled calls
    (``outside``: the wall time beyond every operator; ``step``: the wall time) and the
    records one call made (None for ``outside``)."""
    out = {}
    for group in GROUPS:
        if group == "step":
            samples, calls = [wall for wall, _, _ in records], sum(records[0][2].values())
        elif group == "outside":
            samples, calls = [wall - sum(s.values()) for wall, s, _ in records], None
        else:
            samples, calls = [s[group] for _, s, _ in records], records[0][2][group]
        out[group] = (Estimate.of(samples, target), calls)
    return out
