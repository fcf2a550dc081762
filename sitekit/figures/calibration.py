"""The methods page's roofline: each run's ceilings (``calibration.machine`` and
``calibration.ceilings``) with every timed step of the site that carries a prediction
placed on the roofline of the run that measured it (``sitekit.roofline_points``), on
log-log axes: FLOPs per byte moved against FLOP/s achieved. No experiment is named here:
a table that declares a prediction's columns is drawn."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt

from sitekit.figures import figure
from sitekit.language.i18n import _
from sitekit.rendering.pagedata import SiteDataError
from sitekit.rendering.roofline_points import timed_steps

MEMORY, READ = "#222222", "#777777"
DTYPES = ("#1e8449", "#7d3c98", "#b9770e", "#2471a3")
POINTS = ("#c0392b", "#2471a3", "#1e8449", "#b9770e", "#7d3c98", "#17a589", "#7f8c8d", "#d35400")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")


def _rows(data, table: str, run: str) -> list[dict]:
    frame = data.table(f"calibration.{table}").frame
    return [r for _, r in frame[frame.run == run].iterrows()]


def _runs(data, steps) -> list[str]:
    """The runs to draw: every run a placed step came from, in the order of the runs
    table; with no step placed, the latest run that was probed."""
    probed = list(dict.fromkeys(data.table("calibration.machine").frame.run))
    if not probed:
        raise SiteDataError("calibration.machine holds no run: measure again to probe the roofline")
    used = {s.run for s in steps}
    return [r for r in probed if r in used] or probed[-1:]


def _label(data, step) -> str:
    """A step's legend entry: its table's title and its timing column's label, as the
    table shows them (translated by the catalogs that translate the table)."""
    table = data.table(f"{step.experiment}.{step.table}")
    column = table.column(f"{step.stem}_ms")
    return f"{_(table.title, 'table title')}: {_(column.get('label') or column['name'], 'column label')}"


def _device(data, run: str) -> str:
    frame = data.table("calibration.runs").frame
    found = frame[frame.run == run].device.tolist()
    return str(found[0]) if found else run


@figure("calibration.roofline")
def roofline(data):
    steps = timed_steps(data)
    runs = _runs(data, steps)
    fig, axes = plt.subplots(len(runs), 1, figsize=(7.0, 4.6 * len(runs)), squeeze=False)
    groups = list(dict.fromkeys((s.experiment, s.table, s.stem) for s in steps))
    experiments = list(dict.fromkeys(s.experiment for s in steps))
    for ax, run in zip(axes[:, 0], runs, strict=True):
        machine = _rows(data, "machine", run)[0]
        ceilings = _rows(data, "ceilings", run)
        mine = [s for s in steps if s.run == run]
        # FLOPs per byte on x, GFLOP/s on y: the memory ceiling is the line y = GB/s x FLOPs per byte
        xs = [s.intensity for s in mine] + [float(c["balance_flops_per_byte"]) for c in ceilings]
        lo, hi = min(xs + [1.0]) / 3, max(xs + [1.0]) * 3
        bw = float(machine["copy_gb_s"])
        ax.plot([lo, hi], [bw * lo, bw * hi], "-", color=MEMORY, lw=2, label=_("memory ceiling: copy bandwidth"))
        read = float(machine["read_gb_s"])
        if read == read:  # NaN where the run had no read probe
            ax.plot([lo, hi], [read * lo, read * hi], ":", color=READ, lw=1.5, label=_("read bandwidth"))
        for i, dtype in enumerate(dict.fromkeys(c["dtype"] for c in ceilings)):
            mine_d = [c for c in ceilings if c["dtype"] == dtype]
            peak = max(mine_d, key=lambda c: float(c["ceiling_gflops"]))
            one = min(mine_d, key=lambda c: int(c["rows"]))
            colour = DTYPES[i % len(DTYPES)]
            for c, style, text in ((peak, "-", _("{dtype}: compute ceiling, {rows} rows")), (one, "--", None)):
                y = float(c["ceiling_gflops"])
                label = (text or _("{dtype}: one row")).format(dtype=dtype, rows=int(c["rows"]))
                ax.plot([y / bw, hi], [y, y], style, color=colour, lw=1.5, label=label)
        for g, key in enumerate(groups):
            placed = [s for s in mine if (s.experiment, s.table, s.stem) == key]
            if not placed:
                continue
            ax.plot(
                [s.intensity for s in placed],
                [s.achieved_flop_s / 1e9 for s in placed],
                MARKERS[g % len(MARKERS)],
                color=POINTS[experiments.index(key[0]) % len(POINTS)],
                ms=6,
                alpha=0.85,
                ls="none",
                label=_label(data, placed[0]),
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_xlabel(_("FLOPs per byte moved (log scale)"))
        ax.set_ylabel(_("GFLOP/s achieved (log scale)"))
        if len(runs) > 1:
            ax.set_title(_device(data, run))
        # long labels (a step's experiment, table and what it times) wrap, so that the
        # legend, not the labels' length, sets the figure's width on a phone
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles, [textwrap.fill(label, 36) for label in labels], fontsize="small")
    return fig
