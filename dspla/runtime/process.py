"""Process-wide settings for running plans: memory handling, thread counts, garbage collection.

Keep freed memory in the process instead of returning it to the OS (glibc only).

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
import functools
import gc
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
        mallopt = _libc().mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = mallopt(_M_MMAP_MAX, 0) == 1
    ok &= mallopt(_M_TRIM_THRESHOLD, 2**31 - 1) == 1
    return bool(ok)


def release_freed_memory(since: int | None = None) -> None:
    """Collect, then hand the heap's free pages back to the OS (glibc's malloc_trim, which also
    releases free chunks inside the heap): once, where a phase that held much is over (planning;
    rank 0's work on the whole graph before every rank plans its share). The heap never shrinks
    by itself here (keep_freed_memory), and a large buffer rarely fits the holes planning left,
    so without it the run's peak stacked on top of planning's.

    ``since``: the process's resident bytes before planning, in a process that has run a plan
    before (``planning_mark``). Its heap's free memory is then mostly the last run's buffers,
    which planning and this run take back: when planning grew the process by less than
    PLANNING_GARBAGE it freed less than that beyond them, and nothing is done, as paging those
    buffers out and in again cost more than the run's work (24-32 ms of trim and as much in page
    faults for soc-Slashdot0902's betweenness, a 0.2-0.5 s function called anew). Reading the
    resident size costs microseconds; counting the heap's free bytes (mallinfo2 walks its free
    chunks) cost 0.1-0.3 ms a call, twice for every fresh function. When planning did grow the
    process that much, the heap is trimmed only if it then holds PLANNING_GARBAGE free (not when
    planning kept what it grew by: the plan's own values)."""
    if since is not None:
        now = resident_bytes()
        if now is not None and now - since < PLANNING_GARBAGE:
            return
        gc.collect(1)   # (planning's garbage is young: a full pass over a long-lived process is ~2 ms)
        free = heap_free_bytes()
        if free is not None and free < PLANNING_GARBAGE:
            return
    gc.collect()
    try:
        _libc().malloc_trim(0)
    except (OSError, AttributeError):
        pass


def planning_mark() -> int | None:
    """What release_freed_memory compares with after planning: the resident bytes now, in a
    process that has run a plan; else None (the first plan's garbage is always released)."""
    return resident_bytes() if _RAN else None


_PROC: dict = {}   # path -> an open descriptor: open() costs ~20 us, a read of a kept one a few


def proc_fd(path: str, flags: int) -> int:
    """A descriptor of this process's ``path`` kept open (a forked child opens its own: the
    parent's would name the parent)."""
    fd = _PROC.get(path)
    if fd is None:
        fd = _PROC[path] = os.open(path, flags | os.O_CLOEXEC)
    return fd


def _forget_in_child():
    """In a forked child: the parent's descriptors closed and forgotten (asking the pid at every
    read instead was a system call, two a run)."""
    for fd in _PROC.values():
        try:
            os.close(fd)
        except OSError:
            pass
    _PROC.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def resident_bytes() -> int | None:
    """This process's resident memory now (Linux: /proc/self/statm), or None."""
    try:
        return int(os.pread(proc_fd("/proc/self/statm", os.O_RDONLY), 256, 0).split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@functools.lru_cache(maxsize=None)
def _libc():
    """The C library, found once (find_library runs ldconfig in a subprocess: ~3 ms a call)."""
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")


PLANNING_GARBAGE = 64 << 20   # bytes planning frees above which the heap is trimmed after it
_RAN = False


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(k, ctypes.c_size_t) for k in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                "fsmblks", "uordblks", "fordblks", "keepcost")]


def heap_free_bytes() -> int | None:
    """The bytes free inside the heap (glibc's mallinfo2), or None."""
    try:
        info = _libc().mallinfo2
    except (OSError, AttributeError):
        return None
    info.restype = _Mallinfo2
    return int(info().fordblks)


def ran_a_plan() -> None:
    global _RAN
    _RAN = True


_PLAN_FROZEN = False


def freeze_startup():
    """Freeze what exists when MPI starts (modules, numba's and python-graphblas's tables:
    ~20 ms of collector work on every full collection) so that settling a plan scans only the
    objects planning made. No collection first: loading makes next to no garbage, and one full
    pass over all it made was 0.1-0.2 s of every rank's start-up."""
    gc.freeze()


def settle_garbage():
    """Collect, then freeze what survives (the plan, pieces, the program) out of the collector.

    Every python-graphblas Matrix is in a reference cycle (M.ss -> accessor -> M), so a dead
    matrix is freed only by the cyclic collector. Left to its own schedule, the full n x K
    temporaries of an iteration piled up between collections and every iteration paid fresh
    memory: Slashdot GCN epochs at P = 2 swung between 190 and 900 ms. With the long-lived
    objects frozen, collecting after each iteration costs ~0.3 ms and frees them at once.
    A re-plan unfreezes everything first so the previous plan's objects can be freed (a full
    collection); the first plan collects only what was made since start-up."""
    global _PLAN_FROZEN, _SETTLED
    if _PLAN_FROZEN:
        gc.unfreeze()
    gc.collect()
    gc.freeze()
    _PLAN_FROZEN = True
    _SETTLED += 1


_SETTLED = 0   # settle_garbage's calls so far


def settlements() -> int:
    """How many times a plan's objects were frozen (``settle_garbage``) so far: a plan made
    before the count last moved is frozen, whichever function's plan settled."""
    return _SETTLED


def drop_plan_garbage(settled: bool) -> None:
    """Free a plan that a new one replaces, before planning it: its values (the graph's copies
    and transposes) sit in reference cycles, out of reach of the young collections after each
    run, so a function called with a new graph every time grew by them at each call (20 MB a
    call on soc-Slashdot0902's cc, slower from fresh pages) until a full collection. A plan
    frozen since it was made (``settled``: ``settlements`` moved) is settled again, else one full
    collection (about 0.5 ms with the start-up frozen), whose freed pages planning and the run
    then take back."""
    if settled:
        settle_garbage()
    else:
        gc.collect()


def collect_young() -> None:
    """The youngest generation collected (a loop's iteration temporaries), and the next one when
    the interpreter would have collected it: a manual collection resets the count that triggers
    its own, so collecting generation 0 after every iteration would otherwise starve generation
    1 and let what outlived an iteration pile up for the length of the loop."""
    gc.collect(1 if gc.get_count()[1] >= gc.get_threshold()[1] else 0)


def collections_so_far() -> tuple[int, int]:
    """How many times the interpreter has collected generation 0, and generation 1 or 2 (read
    before a run, for ``collect_run_garbage``)."""
    stats = gc.get_stats()
    return stats[0]["collections"], stats[1]["collections"] + stats[2]["collections"]


FULL_EVERY = 64      # runs between full collections at the latest (see collect_run_garbage)
_since_full = 0


def collect_run_garbage(before: tuple[int, int]):
    """Free what a run left in reference cycles (its dead matrices, settle_garbage above).

    A run's objects are made in the youngest generation and stay there unless the interpreter
    collected during the run, which moves the objects alive then (the run's temporaries among
    them) one generation up, or into the oldest when it collected generation 1. So after a run
    the youngest generation is collected, the next one too when generation 0 was collected
    during the run, and everything only when an older collection ran (``collections_so_far()``
    moved from ``before``) or every FULL_EVERY runs: a full collection scans every object the
    program holds, the user's made since the plan included, and cost 14 ms per call with
    100,000 of them and 175 ms with a million, against 86 us for the whole call without. What
    outlives a run (results, the inputs' conversions) is acyclic (kernels/acyclic.py) and freed
    by its reference count when let go; the periodic full collection bounds whatever else in a
    cycle outlives a run and dies later."""
    global _since_full
    _since_full += 1
    young, older = collections_so_far()
    if older != before[1] or _since_full >= FULL_EVERY:
        gc.collect()
        _since_full = 0
    else:
        gc.collect(1 if young != before[0] else 0)


def configure_threads(P: int):
    """One GraphBLAS thread per process when several share the machine (DSPLA_THREADS overrides),
    and as many OpenBLAS threads (numpy's dense products): with its default of one thread per
    core in every process, P processes on the same cores spin against each other (measured: a
    16 x 49k x 32 matmul of a GCN step at P = 2 took 1.5 s instead of ~10 ms)."""
    n = os.environ.get("DSPLA_THREADS")
    if n or P > 1:
        import graphblas as gb  # (only a process that computes sets its threads)
        gb.ss.config["nthreads"] = int(n) if n else 1
        if not any(v in os.environ for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")):
            set_blas_threads(int(n) if n else 1)


def set_blas_threads(n: int) -> int:
    """Set the thread count of every OpenBLAS loaded in this process (numpy's and scipy's bundled
    copies); returns how many were set. Linux only (reads /proc/self/maps); elsewhere a no-op."""
    try:
        with open("/proc/self/maps") as fh:
            libs = sorted({line.split()[-1] for line in fh if "openblas" in line.lower() and ".so" in line})
    except OSError:
        return 0
    done = 0
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for sym in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                    "openblas_set_num_threads64_", "openblas_set_num_threads"):
            fn = getattr(lib, sym, None)
            if fn is not None:
                fn(ctypes.c_int(n))
                done += 1
                break
    return done
