"""A simulated communicator: P ranks as threads of one process. Sends copy eagerly; collectives
meet at a barrier; every wait times out, so a hang in a test becomes an error."""
from __future__ import annotations

import threading
import time
from collections import defaultdict, deque

import graphblas as gb
import numpy as np

from . import layout


class SimAbort(RuntimeError):
    pass


class _World:
    """State shared by the ranks of one simulated communicator."""

    def __init__(self, size: int, timeout: float):
        self.size = size
        self.timeout = timeout
        self.cv = threading.Condition()
        self.mail = defaultdict(deque)          # (src, dst, tag) -> queued copies
        self.barrier = threading.Barrier(size)
        self.slots: list = [None] * size        # one collective's contributions
        self.aborted: str | None = None
        self.seq = 0


class _Req:
    __slots__ = ("done", "fn")

    def __init__(self, fn=None):
        self.done = fn is None
        self.fn = fn

    def test(self) -> bool:
        if not self.done and self.fn():
            self.done = True
        return self.done


class SimComm:
    """A communicator for ``size`` ranks that are threads of one process. Sends copy eagerly;
    collectives meet at a barrier. Every wait times out (a hang in a test becomes an error)."""

    simulated = True   # an abort raises at once (no grace for other processes' messages)

    def __init__(self, world: _World, rank: int):
        self.world, self.rank, self.size = world, rank, world.size
        self.posted_collectives = 0   # non-blocking collectives this rank started (their tags)

    @staticmethod
    def create(size: int, timeout: float = 60.0) -> list["SimComm"]:
        w = _World(size, timeout)
        return [SimComm(w, r) for r in range(size)]

    # -- point to point
    def isend(self, buf, dest, tag):
        w = self.world
        with w.cv:
            w.mail[(self.rank, dest, tag)].append(np.array(buf, copy=True))
            w.cv.notify_all()
        return _Req()

    def irecv(self, buf, source, tag):
        w, key = self.world, (source, self.rank, tag)

        def arrived():
            q = w.mail.get(key)
            if not q:
                return False
            data = q.popleft()
            np.copyto(buf.reshape(-1)[:data.size], data.reshape(-1))
            return True
        return _Req(arrived)

    def _wait_until(self, pred):
        w = self.world
        deadline = time.monotonic() + w.timeout
        with w.cv:
            while True:
                if w.aborted:
                    raise SimAbort(w.aborted)
                if pred():
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"simulated rank {self.rank}: a wait did not complete in {w.timeout} s")
                w.cv.wait(min(left, 0.05))

    def waitany(self, reqs):
        """Like MPI_Waitany: the index of a completed request, which becomes None (inactive) in
        ``reqs``; -1 when every request is inactive."""
        found = []

        def pred():
            for i, r in enumerate(reqs):
                if r is not None and r.test():
                    found.append(i)
                    return True
            return False
        if all(r is None for r in reqs):
            return -1
        self._wait_until(pred)
        reqs[found[0]] = None
        return found[0]

    def waitall(self, reqs):
        self._wait_until(lambda: all(r is None or r.test() for r in reqs))

    def sendrecv(self, sendbuf, dest, recvbuf, source, tag):
        self.isend(sendbuf, dest, tag)
        self.waitall([self.irecv(recvbuf, source, tag)])

    # -- collectives: every rank deposits, all read, all leave
    def _exchange(self, item):
        w = self.world
        if w.aborted:
            raise SimAbort(w.aborted)
        try:
            w.barrier.wait(w.timeout)
            w.slots[self.rank] = item
            w.barrier.wait(w.timeout)
            items = list(w.slots)
            w.barrier.wait(w.timeout)
        except threading.BrokenBarrierError:
            raise SimAbort(w.aborted or f"simulated rank {self.rank}: a collective was abandoned") from None
        return items

    def allgatherv(self, sendbuf, recvbuf, counts):
        parts = self._exchange(np.array(sendbuf, copy=True).reshape(-1))
        np.concatenate(parts, out=recvbuf.reshape(-1))

    def iallgatherv(self, sendbuf, recvbuf, counts):
        """Posted as messages to every other rank under a tag of its own (the ranks post their
        non-blocking collectives in the same order, as MPI requires); complete when all arrived."""
        self.posted_collectives += 1
        tag = -self.posted_collectives   # (user tags are not negative)
        counts, displs = layout(counts)
        flat = recvbuf.reshape(-1)
        mine = slice(displs[self.rank], displs[self.rank] + counts[self.rank])
        flat[mine] = np.asarray(sendbuf).reshape(-1)
        for r in range(self.size):
            if r != self.rank:
                self.isend(sendbuf, r, tag)
        reqs = [self.irecv(flat[displs[r]:displs[r] + counts[r]], r, tag) for r in range(self.size) if r != self.rank]
        return _Req(lambda: all(q.test() for q in reqs))

    def bcast_buf(self, buf, root):
        parts = self._exchange(np.array(buf, copy=True) if self.rank == root else None)
        np.copyto(buf, parts[root])

    def ibcast_buf(self, buf, root):
        self.bcast_buf(buf, root)
        return _Req()

    def allreduce_buf(self, sendbuf, recvbuf, reduction):
        parts = self._exchange(np.array(sendbuf, copy=True))
        np.copyto(recvbuf, reduction.ufunc.reduce(np.stack(parts), axis=0).astype(recvbuf.dtype))

    def alltoallv(self, sendbuf, sendcounts, recvbuf, recvcounts):
        sc = np.r_[0, np.cumsum(sendcounts)]
        parts = self._exchange([np.array(sendbuf.reshape(-1)[sc[i]:sc[i + 1]]) for i in range(self.size)])
        np.concatenate([parts[src][self.rank] for src in range(self.size)], out=recvbuf.reshape(-1))

    def split(self, color, key=0):
        w = self.world
        info = self._exchange((color, key, self.rank))
        if self.rank == min(r for c, k, r in info if c == color) and color is not None:
            members = sorted((k, r) for c, k, r in info if c == color)
            newworld = _World(len(members), w.timeout)
            newworld.members = [r for _, r in members]
        else:
            newworld = None
        worlds = self._exchange(newworld)
        if color is None:
            return None
        mine = next(x for x in worlds if x is not None and self.rank in x.members)
        return SimComm(mine, mine.members.index(self.rank))

    def window(self, nrows, row_bytes):
        return SimWindow(self, nrows, row_bytes)

    def one_node(self):
        return True

    def segments(self, nbytes):
        return SimSegments(self, nbytes)

    def barrier(self):
        self._exchange(None)

    def bcast(self, obj, root=0):
        return self._exchange(obj if self.rank == root else None)[root]

    def scatter(self, objs, root=0):
        return self._exchange(objs if self.rank == root else None)[root][self.rank]

    def gather(self, obj, root=0):
        items = self._exchange(obj)
        return items if self.rank == root else None

    def allgather(self, obj):
        return self._exchange(obj)

    def abort(self, message: str, code: int = 1):
        w = self.world
        with w.cv:
            w.aborted = message
            w.cv.notify_all()
        w.barrier.abort()
        raise SimAbort(message)


class SimWindow:
    def __init__(self, comm: SimComm, nrows: int, row_bytes: int):
        self.buf = np.zeros((nrows, row_bytes), dtype=np.uint8)
        self.comm = comm
        self.bufs = comm.allgather(self.buf)

    def expose(self):
        self.comm.barrier()

    def pattern(self, starts, counts):
        return np.concatenate([np.arange(s, s + c) for s, c in zip(starts, counts)]) if len(starts) else \
            np.zeros(0, np.int64)

    def get(self, recvbuf, target, pattern):
        recvbuf.reshape(-1).view(np.uint8).reshape(len(pattern), -1)[:] = self.bufs[target][pattern]
        return _Req()

    def free(self):
        pass


class SimSegments:
    """Shared-memory segments of simulated ranks: their arrays, seen by every thread."""

    def __init__(self, comm: SimComm, nbytes: int):
        self.comm = comm
        self.mine = np.zeros(max(int(nbytes), 8), dtype=np.uint8)
        self._peers = comm.allgather(self.mine)

    def peer(self, rank):
        return self._peers[rank]

    def fence(self):
        pass

    def notify(self):
        w = self.comm.world
        with w.cv:
            w.cv.notify_all()

    def wait(self, flags, at, value, peer):
        if flags[at] < value:
            self.comm._wait_until(lambda: flags[at] >= value)

    def free(self):
        self._peers = []


def run_simulated(size: int, fn, *args, timeout: float = 60.0):
    """Run ``fn(comm, *args)`` on ``size`` simulated ranks (threads); returns the list of results.
    An exception on any rank aborts the others and is re-raised here."""
    # python-graphblas initialises itself and imports graphblas.io on first use, neither safely
    # from several threads at once (SPMD planning has every simulated rank convert at once)
    _ = gb.Matrix, gb.io.to_scipy_sparse
    comms = SimComm.create(size, timeout)
    results, errors = [None] * size, [None] * size

    def body(r):
        try:
            results[r] = fn(comms[r], *args)
        except SimAbort as e:
            errors[r] = errors[r] or e
        except BaseException as e:  # noqa: BLE001 - propagate to the caller
            errors[r] = e
            if getattr(e, "quiet", False) or getattr(e, "agreed", False):
                return   # (an agreed failure: every rank stops by itself and one reports, no abort)
            w = comms[r].world
            with w.cv:
                w.aborted = w.aborted or f"rank {r} failed: {type(e).__name__}: {e}"
                w.cv.notify_all()
            w.barrier.abort()

    threads = [threading.Thread(target=body, args=(r,), daemon=True) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    real = [e for e in errors if e is not None and not isinstance(e, SimAbort)]
    if real:   # the failing rank's own error before the others' word of it (PeerError)
        raise sorted(real, key=lambda e: bool(getattr(e, "quiet", False)))[0]
    if any(errors):
        raise next(e for e in errors if e is not None)
    return results
