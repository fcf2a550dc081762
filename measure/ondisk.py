"""What a run or a merge has put in place, read back from disk.

Every message after a stop (Ctrl-C) or an error says what the folder holds then, per
experiment, not what the code meant to do: a run records each experiment's meta.json
as it was before it began and the one it is writing, and ``describe`` compares both
with what is on disk at the moment it is asked.
"""

from __future__ import annotations

from pathlib import Path

from sitedata.store import meta_bytes


class Writes:
    """The experiments a command began to write into ``out``, in order."""

    def __init__(self, out: Path, *, merge: bool = False) -> None:
        self.out = Path(out)
        self.done, self.doing = ("merged", "merged") if merge else ("written", "measured")
        self._before: dict[str, bytes | None] = {}
        self._new: dict[str, bytes] = {}

    def begin(self, name: str) -> None:
        """``name`` is about to be measured (or merged): what its folder holds now."""
        self._before[name] = meta_bytes(self.out / name)

    def writing(self, name: str, meta_text: str) -> None:
        """``name``'s new folder, whose meta.json is ``meta_text``, is about to be swapped in."""
        self._new[name] = meta_text.encode("utf-8")

    def state(self, name: str) -> str:
        """ "new" (its new data is in place), "previous" (as before), "none" (no data
        before and none now) or "other" (neither)."""
        now = meta_bytes(self.out / name)
        if name in self._new and now == self._new[name]:
            return "new"
        if now == self._before.get(name):
            return "previous" if now is not None else "none"
        return "other"

    def stopped(self) -> str:
        """The line after a stop: "interrupted", then what is on disk."""
        if not self._before:
            return f"interrupted before anything was {self.doing}; nothing was {self.done} to {self.out}"
        return f"interrupted; {self.describe()}"

    def describe(self) -> str:
        """What each begun experiment's folder holds now, on one line."""
        if not self._before:
            return f"nothing was {self.done} to {self.out}"
        states = {name: self.state(name) for name in self._before}
        new = [n for n, s in states.items() if s == "new"]
        parts = [f"{', '.join(new)} {'was' if len(new) == 1 else 'were'} {self.done}"] if new else []
        for name, s in states.items():
            if s == "previous":
                parts.append(f"{name} was not {self.done}, its previous data is unchanged")
            elif s == "none":
                parts.append(f"{name} was not {self.done} (there was none before)")
            elif s == "other":
                again = f"make measure ONLY={name}" if self.done == "written" else "merge it again"
                parts.append(f"{name} holds neither its previous nor its new data: {again}")
        return "; ".join(parts)
