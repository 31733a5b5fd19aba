"""The communicator over real MPI (mpi4py; the mpich wheel by default, or the cluster's)."""
from __future__ import annotations

import os
import sys
import time
import zlib
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...errors import DsplaError
from ...formats.files import process_alive
from . import layout

if TYPE_CHECKING:
    from mpi4py.MPI import Comm as RawComm
    from mpi4py.MPI import Datatype, Op, Request

    from ...algebra import Reduction

ABORT_FLUSH_S = 0.3
T = TypeVar("T")
# the control communicator (a duplicate of the world's, for dspla's own bookkeeping): its tags
NOTICE_TAG, ENDED_TAG = 0, 1
# after a rank is seen to have ended while this one waits to meet it, this long for the meeting
# to complete anyway (its part may still be on the way) and for the other ranks that ended to say so
SETTLE_S = 0.5


def _mpi() -> ModuleType:
    # importing mpi4py.MPI initialises MPI: only when a communicator is made, never at import
    from mpi4py import MPI
    return MPI


_USER_OPS: dict[str, Op] = {}


def _op(reduction: Reduction, dtype: np.dtype | None = None) -> Op:
    """MPI's built-in reduction, or for a user monoid an MPI user op made once from its function:
    MPI hands it whole buffers, which one compiled ufunc call combines (no Python per element).
    Min and max over floats are user ops too (np.fmin, np.fmax): MPI_MIN's answer with a NaN
    depends on the order, where SuiteSparse's min and max ignore a NaN."""
    MPI = _mpi()
    nan_aware = reduction.name in ("min", "max") and dtype is not None and dtype.kind == "f"
    if reduction.func is None and not nan_aware:
        return getattr(MPI, reduction.name.upper())
    op = _USER_OPS.get(reduction.name)
    if op is None:
        from mpi4py.util.dtlib import to_numpy_dtype
        combine = reduction.ufunc

        def user_op(inbuf: memoryview, inoutbuf: memoryview, datatype: Datatype) -> None:
            dt = to_numpy_dtype(datatype)
            inout = np.frombuffer(inoutbuf, dtype=dt)
            combine(np.frombuffer(inbuf, dtype=dt), inout, out=inout)

        op = _USER_OPS[reduction.name] = MPI.Op.Create(user_op, commute=True)
    return op


class MPIComm:
    """A communicator over real MPI (what ``dspla.world()`` returns under mpiexec/srun): ``rank``
    and ``size``, the object collectives (``bcast``, ``scatter``, ``gather``, ``allgather``:
    pickled, for small data) and the buffer methods dspla's runtime moves numpy arrays with."""

    rank: int
    size: int

    def __init__(self, comm: RawComm | None = None) -> None:
        MPI = _mpi()
        self.comm = comm if comm is not None else MPI.COMM_WORLD
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        self._control: tuple[RawComm, Request | None] | None = None
        self._meeting: tuple[RawComm, Request | None] | None = None

    # -- two duplicates dspla keeps for itself: one to say that a rank ended its script (and to
    # wait for the others at the end), one where the collectives of the user's script meet first
    # (a collective of one never matches one of the other)
    def open_control(self) -> None:
        """Post both duplicates (completed when first used: making the world waits for no rank)."""
        if self._control is None and self.size > 1:
            self._control = self.comm.Idup()
            self._meeting = self.comm.Idup()

    def control_request(self) -> Request | None:
        """The request that completes the control communicator (None once complete, or none)."""
        return None if self._control is None else self._control[1]

    def control(self) -> RawComm | None:
        """The control communicator (None if never opened: a split communicator's), complete."""
        if self._control is None:
            return None
        dup, made = self._control
        if made is not None:
            _poll(made)
            self._control = (dup, None)
        return dup

    def _meeting_comm(self) -> RawComm | None:
        if self._meeting is None:
            return None
        dup, made = self._meeting
        if made is not None:
            _poll(made)
            self._meeting = (dup, None)
        return dup

    def meet(self, what: str) -> None:
        """Before the collective ``what`` (``to_numpy() of T``) of the user's script: wait until
        every rank reaches one, polling, so that a rank that ended its script without calling it
        ends the job with an error naming the call and the ranks that did not reach it, instead
        of this rank waiting for ever; ranks that reached different ones are told so, every
        rank (the script calls them in another order on some ranks)."""
        ctl, room = self.control(), self._meeting_comm()
        if ctl is None or room is None:
            return
        key = np.array([zlib.crc32(what.encode())], dtype=np.int64)
        keys = np.empty(self.size, dtype=np.int64)
        req = room.Iallgather(key, keys)
        if not req.Test():
            self._wait_to_meet(ctl, req, what)
        if (keys != keys[0]).any():
            names = room.allgather(what)   # (every rank is here)
            where = "; ".join(f"rank {r}: {n}" for r, n in enumerate(names))
            raise CollectiveMismatch(f"the ranks called different collectives at the same point of the script "
                                     f"({where}): call each one on every rank, in the same order", self.rank)

    def _wait_to_meet(self, ctl: RawComm, req: Request, what: str) -> None:
        MPI = _mpi()
        seen, delay = None, 2e-5
        while not req.Test():
            if seen is None and ctl.Iprobe(MPI.ANY_SOURCE, ENDED_TAG):
                seen = time.monotonic()
            elif seen is not None and time.monotonic() - seen > SETTLE_S:
                ended = [r for r in range(self.size) if r != self.rank and ctl.Iprobe(r, ENDED_TAG)]
                who = f"rank {ended[0]}" if len(ended) == 1 else \
                    "ranks " + ", ".join(map(str, ended[:-1])) + f" and {ended[-1]}"
                raise CollectiveNotReached(
                    f"{what} is a collective: every rank must call it, but {who} ended the script without calling "
                    f"it (rank {self.rank} waited in it)")
            time.sleep(delay)
            delay = min(2 * delay, 2e-3)

    def close_control(self) -> None:
        """Free both duplicates (every rank, at the end: MPI finalizes without references to
        the world pending, which MPICH would print)."""
        for attr in ("_meeting", "_control"):
            got = getattr(self, attr)
            if got is not None:
                dup, made = got
                if made is not None:
                    _poll(made)
                dup.Free()
                setattr(self, attr, None)

    def ended(self) -> list[Request]:
        """Tell every other rank that this one ended its script (its part of the exit); the
        requests to complete before MPI finalizes."""
        ctl = self.control()
        if ctl is None:
            return []
        token = bytearray(1)
        return [ctl.Isend(token, r, ENDED_TAG) for r in range(self.size) if r != self.rank]

    def collect_ended(self) -> None:
        """Receive every other rank's word that it ended (all ranks ended: each has sent it)."""
        ctl = self.control()
        if ctl is not None:
            got = bytearray(1)
            for r in range(self.size):
                if r != self.rank:
                    ctl.Recv(got, r, ENDED_TAG)

    def isend(self, buf: NDArray[Any], dest: int, tag: int) -> Request:
        return self.comm.Isend(buf, dest, tag)

    def irecv(self, buf: NDArray[Any], source: int, tag: int) -> Request:
        return self.comm.Irecv(buf, source, tag)

    def waitany(self, reqs: Sequence[Request]) -> int:
        return _mpi().Request.Waitany(reqs)

    def waitall(self, reqs: Sequence[Request]) -> None:
        _mpi().Request.Waitall(reqs)

    def sendrecv(self, sendbuf: NDArray[Any], dest: int, recvbuf: NDArray[Any], source: int, tag: int) -> None:
        self.comm.Sendrecv(sendbuf, dest, tag, recvbuf, source, tag)

    def allgatherv(self, sendbuf: NDArray[Any], recvbuf: NDArray[Any], counts: ArrayLike) -> None:
        self.comm.Allgatherv(sendbuf, [recvbuf, layout(counts)])

    def iallgatherv(self, sendbuf: NDArray[Any], recvbuf: NDArray[Any], counts: ArrayLike) -> Request:
        return self.comm.Iallgatherv(sendbuf, [recvbuf, layout(counts)])

    def bcast_buf(self, buf: NDArray[Any], root: int) -> None:
        self.comm.Bcast(buf, root)

    def ibcast_buf(self, buf: NDArray[Any], root: int) -> Request:
        return self.comm.Ibcast(buf, root)

    def allreduce_buf(self, sendbuf: NDArray[Any], recvbuf: NDArray[Any], reduction: Reduction) -> None:
        self.comm.Allreduce(sendbuf, recvbuf, _op(reduction, sendbuf.dtype))

    def alltoallv(self, sendbuf: NDArray[Any], sendcounts: ArrayLike, recvbuf: NDArray[Any],
                  recvcounts: ArrayLike) -> None:
        sc = np.asarray(sendcounts, dtype=np.int64)
        rc = np.asarray(recvcounts, dtype=np.int64)
        self.comm.Alltoallv([sendbuf, (sc, np.r_[0, np.cumsum(sc)[:-1]])],
                            [recvbuf, (rc, np.r_[0, np.cumsum(rc)[:-1]])])

    def split(self, color: int | None, key: int = 0) -> MPIComm | None:
        MPI = _mpi()
        sub = self.comm.Split(MPI.UNDEFINED if color is None else int(color), key)
        return None if sub == MPI.COMM_NULL else MPIComm(sub)

    def window(self, nrows: int, row_bytes: int) -> MPIWindow:
        return MPIWindow(self, nrows, row_bytes)

    def one_node(self) -> bool:
        """Whether every rank of the communicator is on one node (collective)."""
        MPI = _mpi()
        node = self.comm.Split_type(MPI.COMM_TYPE_SHARED)
        together = node.Get_size() == self.size
        node.Free()
        return bool(self.comm.allreduce(together, op=MPI.LAND))

    def segments(self, nbytes: int) -> MPISegments:
        """``nbytes`` of memory on this rank that every rank can write (collective; one_node())."""
        return MPISegments(self, nbytes)

    def barrier(self) -> None:
        self.comm.Barrier()

    def bcast(self, obj: T, root: int = 0) -> T:
        return self.comm.bcast(obj, root)

    def scatter(self, objs: Sequence[T] | None, root: int = 0) -> T:
        return self.comm.scatter(objs, root)

    def gather(self, obj: T, root: int = 0) -> list[T] | None:
        return self.comm.gather(obj, root)

    def allgather(self, obj: T) -> list[T]:
        return self.comm.allgather(obj)

    def abort(self, message: str, code: int = 1) -> NoReturn:
        """Print ``message`` (if any) and end every rank of the job. MPICH's own notice of the
        abort is silenced: the message is the one line the user reads."""
        try:
            if message:
                sys.stderr.write(message.rstrip("\n") + "\n")
            sys.stderr.flush()
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        # Hydra's proxy forwards a rank's output asynchronously and an abort tears it down: without
        # this pause the message was lost in about one run in four
        time.sleep(ABORT_FLUSH_S)
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
        except OSError:
            pass
        try:
            _mpi().COMM_WORLD.Abort(code)
        finally:  # never fall back into Python (and a second message from the excepthook)
            os._exit(code)


def _poll(req: Request) -> None:
    """Wait for ``req`` without holding the core (ranks may outnumber cores)."""
    delay = 2e-5
    while not req.Test():
        time.sleep(delay)
        delay = min(2 * delay, 2e-3)


class CollectiveNotReached(DsplaError):
    """A collective of the user's script that a rank ended its script without calling."""


class CollectiveMismatch(DsplaError):
    """Ranks called different collectives at the same point: every rank knows (the lowest reports)."""

    def __init__(self, text: str, rank: int) -> None:
        super().__init__(text)
        if rank == 0:
            self.agreed = True
        else:
            self.quiet = True   # (rank 0 says it)


class MPIWindow:
    """One-sided access to an ``nrows x row_bytes`` byte buffer on every rank (MPI-allocated, so
    a shared-memory MPI can serve gets without the target's help). ``pattern`` turns runs of rows
    (start, count) into an indexed datatype of whole rows, once; ``get`` fetches a pattern from a
    target with one Rget."""

    def __init__(self, comm: MPIComm, nrows: int, row_bytes: int) -> None:
        MPI = _mpi()
        self.comm = comm
        size = nrows * row_bytes
        self.win = MPI.Win.Allocate(size, 1, comm=comm.comm)
        mem = np.frombuffer(self.win.tomemory(), dtype=np.uint8) if size else np.zeros(0, np.uint8)
        self.buf = mem[:size].reshape(nrows, row_bytes)
        self.win.Lock_all(MPI.MODE_NOCHECK)
        self._row = MPI.BYTE.Create_contiguous(max(1, row_bytes)).Commit()
        self._types: list[Datatype] = []
        _OPEN.append(self)

    def expose(self) -> None:
        """Make this rank's writes to buf visible to everyone's gets: sync, then a barrier."""
        self.win.Sync()
        self.comm.barrier()

    def pattern(self, starts: NDArray[np.integer[Any]], counts: NDArray[np.integer[Any]]) -> tuple[Datatype, int]:
        dt = self._row.Create_indexed(counts.tolist(), starts.tolist()).Commit()
        self._types.append(dt)
        return dt, int(counts.sum())

    def get(self, recvbuf: NDArray[Any], target: int, pattern: tuple[Datatype, int]) -> Request:
        dt, nrows = pattern
        return self.win.Rget([recvbuf, nrows, self._row], target, (0, 1, dt))

    def free(self) -> None:
        _OPEN.remove(self)
        for dt in self._types:
            dt.Free()
        self._row.Free()
        self.win.Unlock_all()
        self.win.Free()


class MPISegments:
    """Every rank's segment of one shared-memory window, as numpy byte arrays (``mine``, and
    ``peer(r)`` for any rank r): a rank writes straight into another's memory. ``fence`` is the
    memory barrier that orders a rank's writes before a flag it sets after them (MPI_Win_sync,
    in the passive epoch the window stays in)."""

    def __init__(self, comm: MPIComm, nbytes: int) -> None:
        MPI = _mpi()
        self.win = MPI.Win.Allocate_shared(max(-(-int(nbytes) // 64) * 64, 64), 1, comm=comm.comm)
        self.win.Lock_all(MPI.MODE_NOCHECK)
        self._pids = comm.comm.allgather(os.getpid())   # (one node: a peer's process can be looked at)
        self._peers = []
        for r in range(comm.size):
            buf, _ = self.win.Shared_query(r)
            self._peers.append(np.frombuffer(buf, dtype=np.uint8))
        self.mine = self._peers[comm.rank]
        _OPEN.append(self)

    def peer(self, rank: int) -> NDArray[np.uint8]:
        return self._peers[rank]

    def fence(self) -> None:
        self.win.Sync()

    def notify(self) -> None:
        pass   # (the peer polls the flag)

    def wait(self, flags: NDArray[np.int64], at: int, value: int, peer: int) -> None:
        """Until ``flags[at] >= value``, set by rank ``peer``. Polls, yielding the core after a
        while (with more ranks than cores the writer may need it); no MPI call is made meanwhile,
        so every few hundred ms it checks that the peer's process still exists: a killed peer
        ends this rank with an error instead of a wait for ever (a launcher that does not kill
        the others, as srun without --kill-on-bad-exit)."""
        polls = 0
        while flags[at] < value:
            polls += 1
            if polls > 20000:
                time.sleep(2e-5)
                if polls % 8192 == 0 and not process_alive(self._pids[peer]):
                    raise RuntimeError(f"communication with another rank failed: rank {peer} has ended "
                                       "(killed or crashed?) while this rank waited for its rows")
            elif polls > 100:
                os.sched_yield()

    def free(self) -> None:
        _OPEN.remove(self)
        self._peers = []
        self.mine = np.zeros(0, np.uint8)
        self.win.Unlock_all()
        self.win.Free()


# Windows not freed yet, in the order they were made: the same on every rank, since making and
# freeing one are collectives. What is still open when the script ends is freed before MPI
# finalizes (free_open_windows), or UCX prints dozens of warnings on every rank at exit.
_OPEN: list[MPIWindow | MPISegments] = []


def free_open_windows() -> None:
    """Free every window still open, oldest first (a collective: every rank, at the end)."""
    while _OPEN:
        _OPEN[0].free()
