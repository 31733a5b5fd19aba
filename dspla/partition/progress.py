"""Phase-and-elapsed-time progress lines for long partitioning runs (logged on dspla.partition)."""
from __future__ import annotations

import time

from .. import verbosity as log


class Progress:
    """``with progress.phase("coarsen"):`` prints "[dspla partition +12.3s] coarsen ..." lines.

    ``enabled=None`` means: only when stderr is a terminal or the run is long (lines are printed
    once a phase has taken more than ``quiet_for`` seconds, so fast calls stay silent).
    """

    def __init__(self, label: str = "partition", enabled: bool | None = None, stream=None,
                 quiet_for: float = 2.0):
        self.label = label
        self.stream = stream    # None: the logging module (dspla.log)
        enabled = log.progress(enabled)
        self.enabled = enabled
        self.quiet_for = 0.0 if enabled else quiet_for
        self.t0 = time.perf_counter()
        self._pending: list[str] = []

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def note(self, msg: str) -> None:
        if self.enabled is False:
            return
        line = f"[dspla {self.label} +{self.elapsed():.1f}s] {msg}"
        if self.elapsed() < self.quiet_for:
            self._pending.append(line)  # held back: printed only if the run turns out long
            return
        for held in self._pending:
            self._say(held)
        self._pending.clear()
        self._say(line)

    def _say(self, line: str) -> None:
        if self.stream is None:
            log.emit("partition", line)
        else:
            print(line, file=self.stream, flush=True)

    def phase(self, name: str) -> "_Phase":
        return _Phase(self, name)


class _Phase:
    def __init__(self, progress: Progress, name: str):
        self.progress, self.name = progress, name

    def __enter__(self):
        self.t = time.perf_counter()
        self.progress.note(f"{self.name} ...")
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.progress.note(f"{self.name} done in {time.perf_counter() - self.t:.1f}s")
        return False


def as_progress(progress, label: str = "partition") -> Progress:
    """Accept a Progress, True/False/None (auto), and return a Progress."""
    if isinstance(progress, Progress):
        return progress
    return Progress(label, enabled=progress)
