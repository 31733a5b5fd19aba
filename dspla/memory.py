"""Keep freed memory in the process instead of returning it to the OS (glibc only).

Each iteration of a plan allocates and frees large buffers (message buffers, full outputs,
gathered blocks). With glibc's defaults those above 32 MB are mmap'd fresh and unmapped on free,
and the heap is trimmed, so every iteration pays page faults on tens of megabytes; on this
machine (with the kernel's DAMON reclaim running) that made a 33 MB Allgatherv between two ranks
take 150-200 ms instead of 30 ms and a Slashdot p2p1d product (K = 256) drift from 90 to 400 ms
after a few iterations. Serving large blocks from a heap that never shrinks keeps them stable.
Set DSPLA_MALLOC=default to keep glibc's behaviour.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os

_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4
_done = False


def keep_freed_memory() -> bool:
    """Apply once per process; returns whether it took effect."""
    global _done
    if _done:
        return True
    _done = True
    if os.environ.get("DSPLA_MALLOC", "").lower() == "default":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = mallopt(_M_MMAP_MAX, 0) == 1
    ok &= mallopt(_M_TRIM_THRESHOLD, 2**31 - 1) == 1
    return bool(ok)
