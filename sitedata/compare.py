"""Compare a regenerated experiment with the committed one, cell by cell.

Each cell is compared only where its declared scope says it reproduces:

* ``any``      always (the gate regenerates with the committed model and profile);
* ``device``   when both runs used the same device type and dtype;
* ``machine``  when both runs came from the same machine (device id).

and then by its declared ``compare`` (a timing, when the two runs' machines are known,
through ``sitedata.timing_compare``: the machine's speed divided out, then decided three
ways against a band; otherwise by ``sitedata.cell_compare``, as below):

* exact:   equal, character for character as written to CSV;
* numeric: |new - old| <= RTOL_NUMERIC * max(|old|, |new|) (+ a tiny absolute floor);
* timing:  a column that names the columns holding its noise (``Column("step_ms", ...,
  interval=("step_low_ms", "step_high_ms"))``, the width of its median's 95 % interval;
  or, in data measured before intervals, ``spread="spread_ms"``, an interquartile range)
  may move by SPREAD_FACTOR x the larger of the two runs' noise plus TIMING_REL_FLOOR of
  its value; a timing column with no noise of its own (a ratio of two times, memory read
  from the OS) gets SPREAD_FACTOR x the median relative noise of its table, and never
  less than TIMING_REL_FLOOR. An interval's bounds and sample count are not compared:
  they are the noise of their median.

How each column and value is compared, where it reproduces and which tables, columns and
values there are come from the code (``sitedata.declared``), never from the meta.json of
the data checked, and the committed data must state the same. Every cell becomes one
Finding: ok, drift, or not comparable with a reason the code's declarations give (a scope
the two runs' devices do not share, or the rows a ``length="timing"`` table's timings set).
"""

from __future__ import annotations

from sitedata.cell_compare import _float, _noise, _table_rel_noise, compare_cell
from sitedata.declared import Declared, declaration_findings, header, model_findings, run_gap
from sitedata.findings import Finding
from sitedata.machine_speed import Speed
from sitedata.read import Experiment
from sitedata.reshaped import reshaped
from sitedata.restated import ratio_cells, restated_cells
from sitedata.round_speed import computed_in_rounds, probed_in_rounds, row_speeds, speed_of
from sitedata.schema import Value, interval_names
from sitedata.timing_choices import choice_reason, one_reading, row_choice_reason
from sitedata.timing_compare import compare_timing, machine_model, profiled, timing_cell

__all__ = ["Declared", "Finding", "compare_cell", "compare_experiment", "run_gap", "scope_gap"]


def _where(meta: dict) -> dict[str, str]:
    return {"device": f"{meta['device']['type']} {meta['dtype']}", "machine": meta["device"]["id"]}


def scope_gap(scope: str, old_meta: dict, new_meta: dict) -> str:
    """Why a value of this scope cannot be compared between the two runs ("" if it can)."""
    if scope == "any":
        return ""
    if scope == "run":
        return "a record of the run that measured it, never reproduced (a compiler's time, say)"
    old, new = _where(old_meta)[scope], _where(new_meta)[scope]
    if old == new:
        return ""
    what = "device type and dtype" if scope == "device" else "machine"
    return f"reproduces on the same {what} only: committed on {old}, regenerated on {new}"


def compare_experiment(
    committed: Experiment,
    new: Experiment,
    *,
    code: Declared,
    kinds: tuple[str, ...] = ("exact", "numeric", "timing"),
    speed: Speed | None = None,
) -> list[Finding]:
    """The committed data held against the code's declarations, then every table, cell
    and value the code declares, committed against regenerated, as Findings. With the two
    runs' ``speed`` (``sitedata.machine_speed``), timings are compared with the machine's
    speed divided out, three ways (``sitedata.timing_compare``)."""
    exp = committed.name
    old_meta, new_meta = committed.meta, new.meta
    out = declaration_findings(committed, code)
    gap = run_gap(committed, new, code)
    if gap:
        return out + gap
    out += model_findings(committed, new)

    def reason(compare: str, scope: str) -> tuple[str, str]:
        if compare not in kinds:
            return "not compared", f"{compare} not selected in this check (--kinds {','.join(kinds)})"
        gap = scope_gap(scope, old_meta, new_meta)
        return ("not comparable", gap) if gap else ("", "")

    # a sweep that probed the machine in its own rounds gives each of its rows its own speed
    in_rounds = speed is not None and probed_in_rounds(old_meta["values"]) and probed_in_rounds(new_meta["values"])
    compute = computed_in_rounds(old_meta["values"]) and computed_in_rounds(new_meta["values"])
    for t in code.tables:
        cols = t.column_names
        if t.name not in old_meta["tables"] or header(committed, t.name) != cols:
            continue  # a failing finding of the declarations says why; no cell to line up
        if t.name not in new_meta["tables"]:
            out.append(
                Finding(
                    experiment=exp,
                    table=t.name,
                    verdict="drift",
                    committed="present",
                    new="absent",
                    reason="the regenerated run did not produce this table",
                )
            )
            continue
        new_cols = header(new, t.name)
        old_rows, new_rows = committed.rows(t.name), new.rows(t.name)
        if cols == new_cols and len(old_rows) != len(new_rows) and t.length == "timing":
            # The timings chose where the table ends: compare the rows both runs have.
            shared = min(len(old_rows), len(new_rows))
            out.append(
                Finding(
                    experiment=exp,
                    table=t.name,
                    verdict="not comparable",
                    committed=f"{len(old_rows)} rows",
                    new=f"{len(new_rows)} rows",
                    reason=f"rows after the first {shared} are set by timings on the measuring machine",
                )
            )
            old_rows, new_rows = old_rows[:shared], new_rows[:shared]
        if cols != new_cols or len(old_rows) != len(new_rows):
            gap = scope_gap("device", old_meta, new_meta)
            out += reshaped(exp, t, old_rows, new_rows, new_cols, gap, kinds, compare_cell)
            continue
        noise = _table_rel_noise(old_rows, t)
        sweeps = (
            [row_speeds(t, ro, rn, compute=compute) for ro, rn in zip(old_rows, new_rows, strict=True)]
            if in_rounds
            else None
        )
        # An interval's bounds and its sample count are the noise of their median (the
        # code's declaration, never the data's): the median is held within them; they
        # themselves are what one run's sampling happened to give.
        bounds = {n: c.name for c in t.columns if c.interval for n in (*c.interval, c.samples) if n}
        over = ratio_cells(t, old_rows, new_rows) if speed is not None else {}
        for c in t.columns:
            skip, why = reason(c.compare, c.scope)
            if not skip and c.name in bounds:
                skip, why = "not compared", f"the noise of {bounds[c.name]}, held within it"
            if not skip and t.simulated and c.compare == "timing":
                skip, why = "not compared", "simulated from the measured costs: the simulation is run again instead"
            if not skip and speed is not None and c.compare == "timing":
                if left := machine_model(c.name) or profiled(c.name, t.name) or one_reading(t.name, c.name):
                    skip, why = "not compared", left
            for i, (ro, rn) in enumerate(zip(old_rows, new_rows, strict=True)):
                verdict, tol, why_cell = skip, "", why
                if not skip and (i, c.name) in over:
                    verdict, why_cell = "not compared", f"restates {over[(i, c.name)]}, compared there"
                elif (
                    not skip
                    and speed is not None
                    and c.compare == "timing"
                    and (chosen := row_choice_reason(cols, ro, rn, c.name))
                ):
                    verdict, why_cell = "not compared", chosen
                elif not skip and speed is not None and c.compare == "timing":
                    typical = tuple(_table_rel_noise([r], t) or noise for r in (ro, rn))
                    verdict, tol = _timing(ro, rn, c, speed, typical, sweeps[i] if sweeps else None)
                elif not skip:
                    ok, tol = compare_cell(
                        c.compare,
                        ro[c.name],
                        rn[c.name],
                        spread_old=_noise(ro, c),
                        spread_new=_noise(rn, c),
                        table_rel_noise=noise,
                    )
                    verdict = "ok" if ok else "drift"
                out.append(
                    Finding(
                        experiment=exp,
                        table=t.name,
                        row=i,
                        column=c.name,
                        compare=c.compare,
                        scope=c.scope,
                        committed=ro[c.name],
                        new=rn[c.name],
                        tolerance=tol,
                        verdict=verdict,
                        reason=why_cell,
                    )
                )
    # A timing value declared with its interval (``interval_values``: ``step_rise`` beside
    # ``step_rise_low`` and ``step_rise_high``) is compared as a column with one is: the
    # median against both runs' bounds, the bounds themselves not at all.
    declared = {v.name for v in code.values}
    bounds_of = {
        v.name: (low, high)
        for v in code.values
        if v.compare == "timing"
        for low, high, _ in [interval_names(v.name)]
        if low in declared and high in declared
    }
    noise_of = {n: name for name, pair in bounds_of.items() for n in pair}
    restated = restated_cells(committed, new, code) if speed is not None else {}
    for v in code.values:
        if v.name in old_meta["values"]:  # a missing one is a failing finding of the declarations
            skip, why = reason(v.compare, v.scope)
            if not skip and v.name in noise_of:
                skip, why = "not compared", f"the noise of {noise_of[v.name]}, held within it"
            if not skip and v.name in restated:
                skip, why = "not compared", f"restates {restated[v.name]}, compared there"
            if not skip and v.compare == "timing" and speed is not None:
                if chosen := choice_reason(v.name, old_meta["values"], new_meta["values"]):
                    skip, why = "not compared", chosen
            old, new_value = old_meta["values"][v.name], new_meta["values"].get(v.name)
            pair = bounds_of.get(v.name)
            bounds = (_bounds(old_meta, pair), _bounds(new_meta, pair)) if pair else None
            out.append(_compare_value(exp, v, old, new_value, skip, why, speed, bounds))
    return out


def _timing(
    ro: dict, rn: dict, c, speed: Speed, noise: tuple[float | None, float | None], sweeps: dict | None
) -> tuple[str, str]:
    """A timing cell with the speed of its own sweep's rounds divided out, where its row
    has one (``sitedata.round_speed``), else the run's machine's."""
    own = speed_of(c.name, sweeps) if sweeps else None
    if own is None:
        return timing_cell(ro, rn, c, speed.overall, speed.unsteady, noise)
    unsteady = 0.0 if own.in_rounds else speed.unsteady
    return timing_cell(ro, rn, c, own.factor, unsteady, noise, whose="its sweep's")


def _bounds(meta: dict, pair: tuple[str, str]) -> tuple[float | None, float | None]:
    return tuple(_float(meta["values"].get(n, {}).get("value")) for n in pair)


def _width(low: float | None, high: float | None) -> float | None:
    """An interval's width, the spread a timing is compared against without the machine's speed."""
    return None if low is None or high is None else high - low


def _compare_value(
    exp: str,
    v: Value,
    old: dict,
    new: dict | None,
    skip: str,
    why: str,
    speed: Speed | None = None,
    bounds: tuple[tuple, tuple] | None = None,
) -> Finding:
    """One named value of meta.json; lists item by item (raw timing samples are kept, not
    compared). ``bounds``: the committed and the regenerated interval of a timing value."""
    tol = ""
    a, b = _float(old["value"]), _float(new["value"]) if new is not None else None
    if new is None:
        new, verdict, why = {"value": None}, "drift", "value not produced"
    elif skip:
        verdict = skip
    elif isinstance(old["value"], (list, dict)) and v.compare == "timing":
        verdict, why = "not compared", "raw timing samples are kept, not compared"
    elif v.compare == "timing" and speed is not None and (left := machine_model(v.name) or profiled(v.name)):
        verdict, why = "not compared", left
    elif v.compare == "timing" and speed is not None and a is not None and b is not None:
        old_bounds, new_bounds = bounds or ((None, None), (None, None))
        verdict, tol = compare_timing(
            a,
            b,
            unit=v.unit,
            old_bounds=old_bounds,
            new_bounds=new_bounds,
            speed=speed.overall,
            unsteady=speed.unsteady,
        )
    else:
        old_items = old["value"] if isinstance(old["value"], list) else [old["value"]]
        new_items = new["value"] if isinstance(new["value"], list) else [new["value"]]
        if len(old_items) != len(new_items):
            verdict, tol = "drift", "same length"
        else:
            spreads = [_width(*pair) for pair in bounds] if bounds else [None, None]
            results = [
                compare_cell(v.compare, a, b, spread_old=spreads[0], spread_new=spreads[1])
                for a, b in zip(old_items, new_items, strict=True)
            ]
            verdict = "ok" if all(ok for ok, _ in results) else "drift"
            tol = results[0][1] if results else ""
    return Finding(
        experiment=exp,
        table="values",
        column=v.name,
        compare=v.compare,
        scope=v.scope,
        committed=old["value"],
        new=new["value"],
        tolerance=tol,
        verdict=verdict,
        reason=why,
    )
