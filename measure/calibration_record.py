"""A run's row in ``calibration/`` (``measure/calibration_folder.py``), written by the
runner: with the start calibration before the run's first experiment is swapped in, so
that no experiment on disk ever names a run without a row, then again when the run ends,
with the end calibration, or without it after a stop or an error."""

from __future__ import annotations

from pathlib import Path

from measure.calibration_folder import FOLDER, TITLE, record, rows_in, runs_named
from measure.errors import UserError
from measure.lab.calibration import DRIFT_LIMIT, Calibration, drift
from sitedata import DataError, FolderError


def on_disk(root: Path, run_id: str) -> str:
    """What ``root/calibration`` holds of the run ``run_id``, read back, for a message."""
    mine = [r for r in rows_in(root) if r["run"] == run_id]
    if not mine:
        return f"{root}/{FOLDER} holds no row of run {run_id}"
    if mine[0]["end_step_ms"] in ("", None):
        return f"its row in {root}/{FOLDER} holds the start calibration only (its end columns are empty)"
    return f"its row in {root}/{FOLDER} is complete"


class RunRecord:
    """A run's calibration in ``root``: its row written with the start calibration before
    its first experiment is swapped in (``before_first_experiment``), then rewritten when
    the run ends, with the end calibration, or, after a stop or an error, without it (then
    never raising: the stop or the error is what the user is told). A run that wrote
    nothing leaves the folder as it was."""

    def __init__(self, root: Path, start: Calibration, *, model, machine: dict, dtype, profile: str, plan, log) -> None:
        self.root, self.start, self.log = Path(root), start, log
        self.about = {"model": model, "machine": machine, "dtype": dtype, "profile": profile, "plan": plan}
        self.row_written = False

    def _write(self, end: Calibration | None, *, first: bool = False) -> None:
        from dataclasses import asdict

        from measure.lab.provenance import folder_provenance

        if not (first or self.row_written or self.start.run_id in runs_named(self.root)):
            return
        a = self.about
        provenance = folder_provenance(
            title=TITLE,
            module=__name__,
            parameters=asdict(a["plan"]),
            model=a["model"],
            machine=a["machine"],
            dtype=a["dtype"],
            profile=a["profile"],
            duration_s=self.start.seconds + (end.seconds if end else 0.0),
        )
        self.row_written = True  # or about to be: a stop during the write still has it removed
        record(self.root, self.start, end, provenance, first=first)  # drops its row if nothing names it

    def before_first_experiment(self) -> None:
        """The run's row, its start only, before any experiment names the run."""
        if not self.row_written:
            self._write(None, first=True)

    def finished(self, end: Calibration | None) -> None:
        if end is None:  # the run wrote nothing
            return
        d = drift(self.start, end)
        over = " (past the drift limit: the timing pages say so)" if d["drifted"] else ""
        self.log(
            f"calibration at the end: {end.describe()}; drift: reference step {d['step_drift']:+.1%}, "
            f"bandwidth {d['bandwidth_drift']:+.1%}, limit ±{DRIFT_LIMIT:.0%}{over}"
        )
        try:
            self._write(end)
        except (FolderError, OSError) as e:
            where = f"the end calibration of run {self.start.run_id} could not be written to {self.root}"
            row = on_disk(self.root, self.start.run_id)
            raise UserError(f"{where} ({e}); the experiments written are whole, {row}") from None

    def stopped(self) -> None:
        try:
            self._write(None)
        except (KeyboardInterrupt, FolderError, OSError, DataError):
            pass  # the stop or the error is what is reported; the row written first stays
