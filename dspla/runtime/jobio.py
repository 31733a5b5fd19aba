"""The launcher's view of a job's output: MPICH's failure banner and Hydra's notices are dropped
(dspla prints its own one-line message instead), everything else is passed through, and a
closed standard output is noticed instead of killing the launcher."""
from __future__ import annotations

import re
import threading

# Hydra's banner (on stdout) when a rank ends abnormally:
#
#   <blank>
#   ===================================================================================
#   =   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES
#   ...
#   ===================================================================================
#   YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)
#   This typically refers to a problem with your application.
#   Please see the FAQ page for debugging suggestions
_RULE = re.compile(r"^={20,}\s*$")
_BANNER_START = re.compile(r"^=\s+BAD TERMINATION")
_BANNER_LINE = re.compile(r"^(=   |=+\s*$|YOUR APPLICATION TERMINATED|This typically refers|"
                          r"Please see the FAQ page|Intel\(R\) MPI)")
# one-line notices of the launchers and of MPICH's own abort
_NOTICE = re.compile(r"^(\[proxy:|\[mpiexec@|Abort\(\d+\) on node \d+|application called MPI_Abort)")
# MPICH's error stack, printed by a rank whose peer died under it (``copy_iovs(123):
# process_vm_readv failed (errno 3)`` after a kill -9): held back, and dropped when the job ended
# because a rank died (the launcher says so) or with a rank's own message
_MPICH_STACK = re.compile(r"^(Fatal error in |Other MPI error, error stack:|[A-Za-z_][A-Za-z0-9_]*\(\d+\)\.*: )"
                          r"|process_vm_readv failed")
_EXIT_SIGNAL = re.compile(r"EXIT STRING: .*\(signal (\d+)\)")


class BannerFilter:
    """Feed lines, get back the lines to show. Blank lines and a rule line are held back until
    the next line shows whether they open a banner, so the program's own output survives."""

    def __init__(self):
        self.held: list[str] = []
        self.in_banner = False
        self.dropped = 0
        self.signals: list[int] = []   # what ended the processes the banners name (signal numbers)
        self.stack: list[str] = []     # MPICH error-stack lines, held back

    def feed(self, line: str) -> list[str]:
        if self.in_banner:
            self.dropped += 1
            m = _EXIT_SIGNAL.search(line)
            if m:
                self.signals.append(int(m.group(1)))
            if line.startswith("Please see the FAQ page"):
                self.in_banner = False
            elif not _BANNER_LINE.match(line) and line.strip():
                self.in_banner = False   # the banner ended without its usual last line
                self.dropped -= 1
                return [line]
            return []
        if self.held and _RULE.match(self.held[-1]) and _BANNER_START.match(line):
            self.in_banner = True   # the banner: one blank line, a rule, this line, ...
            keep = self.held[:-1]
            if keep and not keep[-1].strip():
                keep = keep[:-1]
            self.dropped += len(self.held) - len(keep) + 1
            self.held = []
            return keep
        if _NOTICE.match(line):
            self.dropped += 1
            return []
        if _MPICH_STACK.search(line):
            self.stack.append(line)
            return []
        if not line.strip() or _RULE.match(line):
            out = self.held if self.held and _RULE.match(self.held[-1]) else []
            self.held = (self.held[len(out):] if out else self.held) + [line]
            return out
        out, self.held = self.held + [line], []
        return out

    def flush(self) -> list[str]:
        out, self.held = ([] if self.in_banner else self.held), []
        return out


_ERROR = re.compile(r"^dspla: (error|rank \d+ failed)")


class Pump(threading.Thread):
    """Copy one of the job's streams to ours through a BannerFilter. Lines starting with
    ``dspla`` are remembered (the job's own messages). With ``one_error``, only the first error
    message (with its indented continuation lines) is shown: two ranks failing at once for
    different reasons would otherwise print two. A write that fails (closed stdout) is
    remembered and the rest is drained, so the job never blocks on a full pipe."""

    def __init__(self, src, dst, one_error: bool = False):
        super().__init__(daemon=True)
        self.src, self.dst = src, dst
        self.said: list[str] = []
        self.write_error: OSError | None = None
        self.filter = BannerFilter()
        self.one_error = one_error
        self._errors = 0
        self._dropping = False

    def run(self):
        for line in self.src:
            self._out(self.filter.feed(line))
        self._out(self.filter.flush())

    def _out(self, lines):
        for line in lines:
            if line.startswith("dspla"):
                self.said.append(line)
            if self.one_error:
                if _ERROR.match(line):
                    self._errors += 1
                    self._dropping = self._errors > 1
                elif not line[:1].isspace():
                    self._dropping = False
                if self._dropping:
                    continue
            if self.write_error is not None:
                continue
            try:
                self.dst.write(line)
                self.dst.flush()
            except (OSError, ValueError) as e:   # ValueError: the stream was closed
                self.write_error = e if isinstance(e, OSError) else BrokenPipeError(str(e))
