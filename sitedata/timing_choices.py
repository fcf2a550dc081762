"""What a run's timings chose, and what is read at that choice: the batch sweep's knee and
where the sweep ended, the fastest speculative configuration and its runner-up, the
fastest low-bit kernel; and the single fastest and slowest sample of a sweep.

A choice between timings that lie within each other's noise may fall either way from one
run to the next, on one machine and with nothing changed; the timings it was made from
are compared, each against its own interval, so a slower program still shows there. The
choice itself is reported, not compared (``CHOICES``). A number read at the choice (the
speed-up of the fastest configuration, the gain past the knee) is compared where both
runs chose the same, and otherwise reported as read at different choices
(``AT_CHOICE``: the value, and the choices it is read at). The fastest and the slowest of a
sweep's samples (``SAMPLE_ENDS``) are the ends of a range the page shows, picked out by
one sample each, not an estimate with an interval: the samples' median is compared
instead. Torch-free.
"""

from __future__ import annotations

from sitedata.schema import interval_names

CHOICES = frozenset({
    "knee_found", "knee_batch", "knee_next_batch", "largest_measured_batch", "sweep_extended", "sweep_stop_reason",
    "best_draft", "best_gamma", "predicted_first_draft", "predicted_first_gamma", "runner_up_draft",
    "runner_up_gamma", "kernel_fastest", "kernel_lowbit_fastest", "kernel_lowbit_fastest_variant",
    "kernel_lowbit_closest", "kernel_lowbit_closest_variant",
    "settings_best_compiled", "settings_best_dtype", "settings_best_threads",
})  # fmt: skip

SAMPLE_ENDS = frozenset({"split_step_min_ms", "split_step_max_ms"})

# A table's column that says whether its row was timed at all, where the timings chose
# which rows (the speculative runs the prediction put first): a row timed in one run only
# has nothing to compare its timings with.
ROW_CHOICES = frozenset({"timed"})

# A single wall-clock reading of a whole piece of work, taken once and never repeated (how
# long each quantized variant's evaluation took): no interval, and the machine's speed at
# the run's ends says little about one minute in between. An unchanged regeneration read
# the same seconds raw while its calibrations put its machine 23 % slower. Reported, not compared.
ONE_READING = frozenset({("quality", "seconds")})


def row_choice_reason(table_columns: list[str], old_row: dict, new_row: dict, column: str) -> str | None:
    """Why the timing cell ``column`` of a row is not compared where the timings chose
    differently whether to time that row (``ROW_CHOICES``), or None."""
    differ = [c for c in table_columns if c in ROW_CHOICES and old_row.get(c) != new_row.get(c)]
    if not differ:
        return None
    if column in ROW_CHOICES:
        return "chosen by the timings, which are compared; a choice between timings within their noise may differ"
    return f"timed in one run only ({', '.join(differ)} differs): which rows are timed is chosen by the timings"


def one_reading(table: str, column: str) -> str | None:
    """Why a column of single readings (``ONE_READING``) is not compared, or None."""
    if (table, column) in ONE_READING:
        return "one wall-clock reading of a whole evaluation, taken once: no interval to judge it by"
    return None


_BEST = ("best_draft", "best_gamma")
_PREDICTED_FIRST = ("predicted_first_draft", "predicted_first_gamma")


def _with_bounds(name: str, choices: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    return {n: choices for n in (name, *interval_names(name)[:2])}


AT_CHOICE: dict[str, tuple[str, ...]] = {
    "knee_next_gain": ("knee_batch",),
    "knee_next_slowdown": ("knee_batch",),
    "sweep_extension_s": ("largest_measured_batch",),
    "compiled_speedup_worst": ("largest_measured_batch",),  # over the batches measured
    "compiled_speedup_best": ("largest_measured_batch",),
    "best_predicted_speedup": _BEST,
    "best_predicted_run_speedup": _BEST,
    **_with_bounds("best_measured_speedup", _BEST),
    **_with_bounds("predicted_first_speedup", _PREDICTED_FIRST),
    **_with_bounds("runner_up_over_best", (*_BEST, "runner_up_draft", "runner_up_gamma")),
}


def choice_reason(name: str, old_values: dict, new_values: dict) -> str | None:
    """Why the value ``name`` is not compared as a timing (a choice, or read at choices
    that differ between the two runs' ``values``), or None."""
    if name in CHOICES:
        return "chosen by the timings, which are compared; a choice between timings within their noise may differ"
    if name in SAMPLE_ENDS:
        return "one sample, the fastest or the slowest: a range's end, not an estimate; the median is compared"
    differ = [c for c in AT_CHOICE.get(name, ()) if _value(old_values, c) != _value(new_values, c)]
    if differ:
        return f"read at a choice the timings made ({', '.join(differ)}), which differs between the runs"
    return None


def _value(values: dict, name: str):
    entry = values.get(name)
    return entry.get("value") if isinstance(entry, dict) else entry
