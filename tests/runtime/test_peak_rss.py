"""A run's peak memory is the process's own high-water mark (VmHWM), read by getrusage when its
peak is known to be that mark, else from /proc/self/status (session/stats.py): never the peak
getrusage carries over from the process image that exec'd this one."""
import ast
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's")

# Run in a child: grows by 64 MB after a reset; prints each reading beside VmHWM read just
# before and after it (kB), and how often the status file was read for the readings.
CHILD = """
import numpy as np
from dspla.session import stats

def hwm():
    return int(next(x for x in open("/proc/self/status") if x.startswith("VmHWM")).split()[1])

reads = [0]
status = stats._status_hwm_kb
def counted():
    reads[0] += 1
    return status()
stats._status_hwm_kb = counted
import resource
rows = []
for step in range(3):
    before = hwm(); seen = stats.reset_peak_rss() // 1024; after = hwm()
    rows.append(("seen", before, seen, after))
    kept = np.ones(8 << 20) if step == 1 else None   # 64 MB, touched
    before = hwm(); got = stats.peak_rss_bytes() // 1024; after = hwm()
    rows.append(("run", before, got, after))
    del kept
print(rows, reads[0], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

HOLD = """
import os, sys
import numpy as np
held = np.ones(80 << 20)   # 640 MB, touched: the peak the exec'd image inherits
os.execv(sys.executable, [sys.executable, "-c", sys.argv[1]])
"""


def _child(argv) -> tuple[list, int, int]:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows, reads, maxrss = r.stdout.strip().rsplit(" ", 2)
    return ast.literal_eval(rows), int(reads), int(maxrss)


# getrusage's resident size leaves out pages still in per-CPU counts; the mark it stores and
# the one the status file shows may differ by those (at most 2 x CPUs pages per CPU, 32 at least)
SLACK = os.cpu_count() * max(32, 2 * os.cpu_count()) * os.sysconf("SC_PAGE_SIZE") // 1024


def _check(rows):
    for what, before, got, after in rows:
        if what == "run":   # (a reset's value is the process's peak over every reset: at least the mark)
            assert before - SLACK <= got <= after + SLACK, rows
        else:
            assert got >= before - SLACK, rows


def test_a_small_inherited_peak_is_read_by_getrusage():
    # (a shell between: its fork starts this child's image with the shell's small peak, not pytest's)
    rows, reads, _ = _child(["sh", "-c", '"$0" -c "$1"; exit $?', sys.executable, CHILD])
    _check(rows)
    # after the first reset, every reading is getrusage's (the import-time one and the first are not)
    assert reads <= 1, (rows, reads)


def test_a_large_inherited_peak_is_never_reported():
    rows, reads, maxrss = _child([sys.executable, "-c", HOLD, CHILD])
    _check(rows)
    assert max(r[2] for r in rows) < maxrss - (256 << 10), (rows, maxrss)   # 640 MB inherited, not reported
    assert reads == len(rows), reads   # (getrusage's peak is the inherited one: the status file is read)


def test_a_forked_child_reads_its_own_memory_not_its_parents():
    """The /proc descriptors kept open are the parent's: a forked child opens its own. The parent
    grows by 200 MB after the fork; the child, which did not, must not see it."""
    from dspla.runtime.process import resident_bytes
    assert resident_bytes() is not None   # (the parent's descriptor kept open)
    go_r, go_w = os.pipe()
    back_r, back_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.read(go_r, 1)   # (the parent has grown)
        os.write(back_w, str(resident_bytes()).encode())
        os._exit(0)
    grown = bytearray(200 << 20)
    grown[::4096] = b"\x01" * len(grown[::4096])   # (every page resident)
    os.write(go_w, b"1")
    child = int(os.read(back_r, 64))
    os.waitpid(pid, 0)
    assert resident_bytes() > (200 << 20) and child < resident_bytes() - (150 << 20)
