"""The plan verifier: checks every rank's program against the others before anything runs, so a
planning bug is an error naming the rank and instruction instead of a hang or a wrong result.

- every slot is written before it is read, and read in the state it is in (a posted receive
  only by what completes it; nothing after it was freed or consumed);
- every Send has its Recv (same pair of ranks, tag, order, size, dtype and presence);
- every collective is called by the whole group, in the same order, with agreeing arguments
  (roots, sizes, dtypes; exactly the root has the data), and the blocking ones of different
  groups are not ordered so that ranks wait on each other in a cycle (a deadlock);
- one-sided gets stay inside the target's window.
"""
from __future__ import annotations

from collections import defaultdict

from .. import instr as ir
from ..errors import VerificationError

VALUE, POSTED, DEAD = "value", "posted", "dead"
_POSTS = (ir.Recv, ir.Get, ir.IBcast, ir.ISmallAllreduce)
# the instructions that complete posted receives (their ``recvs``) and compute on what arrives
_COMPLETES = (ir.RecvMxM, ir.StackMxM, ir.SampledMxM, ir.StackRows)
# the instructions that only wait for what others posted: (what posts it, the slots they complete)
_WAITED = {ir.WaitSends: ("send", lambda i: i.bufs), ir.WaitAllreduce: ("ISmallAllreduce", lambda i: (i.req,))}


def _fail(rank: int, k: int | None, instr, why: str):
    where = f"rank {rank}" + (f", instruction {k} ({instr})" if k is not None else "")
    raise VerificationError(f"plan verification failed: {where}: {why}")


def _slots(prog: ir.RankProgram):
    state = {s: VALUE for s in prog.consts}
    state.update({s: VALUE for s in prog.inputs.values()})
    _block_slots(prog, prog.setup, state)
    _block_slots(prog, prog.instrs, state)
    for name, (s, _) in prog.outputs.items():
        if state.get(s) != VALUE:
            _fail(prog.rank, None, None, f"output {name} (slot s{s}) is not computed")
    left = [s for s, st in state.items() if st == POSTED]
    if left:
        _fail(prog.rank, None, None, f"transfers posted into slots {left} are never completed")


def _loop_slots(prog, k, i: ir.Loop, state: dict):
    """A loop's blocks start from the state before it, with the carried values set; what they
    write is theirs (the loop may run 0 times): after it, only the carried values and the count."""
    for s in i.init:
        if state.get(s) != VALUE:
            _fail(prog.rank, k, i, f"starts a loop from slot s{s}, which holds no value")
    inner = {**state, **{s: VALUE for s in i.carry}}
    _block_slots(prog, i.cond, inner)
    if inner.get(i.cond_slot) != VALUE:
        _fail(prog.rank, k, i, f"the loop condition (slot s{i.cond_slot}) is not computed by its block")
    _block_slots(prog, i.body, inner)
    for s in i.results:
        if inner.get(s) != VALUE:
            _fail(prog.rank, k, i, f"a loop result (slot s{s}) is not computed by the body")
    left = [s for s, st in inner.items() if st == POSTED and state.get(s) != POSTED]
    if left:
        _fail(prog.rank, k, i, f"transfers posted in the loop into slots {left} are not completed in it")
    for s in (*i.carry, i.count):
        state[s] = VALUE


def _block_slots(prog, instrs: list, state: dict):
    for k, i in enumerate(instrs):
        if type(i) is ir.Loop:
            _loop_slots(prog, k, i, state)
            continue
        if type(i) is ir.Choice:
            _fail(prog.rank, k, i, "a product placeholder was never replaced by a plan")
        if type(i) is ir.Free:
            for s in i.slots:
                state[s] = DEAD
            continue
        if type(i) in _COMPLETES:
            for s in i.recvs:
                if state.get(s) != POSTED:
                    _fail(prog.rank, k, i, f"slot s{s} is completed here but no receive posted it")
            if type(i) in (ir.StackMxM, ir.StackRows):   # the runtime stacks the rows each Recv brings
                posters = {s: j for j in instrs[:k] for s in j.writes()}
                for s in i.recvs:
                    j = posters.get(s)
                    if type(j) is not ir.Recv or j.deferred:
                        _fail(prog.rank, k, i, f"stacks slot s{s}, which is not a Recv's posted at once")
            reads = [s for s in i.reads() if s not in i.recvs]
        elif type(i) in _WAITED:
            what, slots = _WAITED[type(i)]
            for s in slots(i):
                if state.get(s) != POSTED:
                    _fail(prog.rank, k, i, f"slot s{s} is waited for here but no {what} posted it")
            reads = []
        else:
            reads = i.reads()
        for s in reads:
            st = state.get(s)
            if st != VALUE:
                _fail(prog.rank, k, i, f"reads slot s{s}, which is " +
                      ("never written before" if st is None else "freed" if st == DEAD else "a posted transfer"))
        if type(i) in _COMPLETES:
            for s in i.recvs:
                state[s] = DEAD
        elif type(i) in _WAITED:
            for s in _WAITED[type(i)][1](i):
                state[s] = DEAD
        posted = type(i) in _POSTS or type(i) is ir.Send
        for s in i.writes():
            state[s] = POSTED if posted else VALUE


def _messages(blocks: list):
    """Sends and receives of one block (per rank: the same block, e.g. the body of the same loop)."""
    sends, recvs = defaultdict(list), defaultdict(list)
    for rank, instrs in enumerate(blocks):
        for k, i in enumerate(instrs):
            if type(i) is ir.Send:
                sends[(rank, i.dest, i.tag)].append((i.words, i.dtype, i.presence, i.sparse, k, i))
            elif type(i) is ir.Recv:
                words = i.expect if i.sparse and i.expect is not None else i.nrows * i.k
                recvs[(i.source, rank, i.tag)].append((words, i.dtype, i.presence, i.sparse, k, i))
            elif type(i) is ir.SendRecvRows:
                if i.group:
                    _fail(rank, k, i, "ring exchanges run on the world communicator")
                sends[(rank, i.dest, i.tag)].append((i.send_nrows * i.k, i.dtype, i.presence, False, k, i))
                recvs[(i.source, rank, i.tag)].append((i.nrows * i.k, i.dtype, i.presence, False, k, i))
    for key in sorted(set(sends) | set(recvs)):
        src, dst, tag = key
        s, r = sends.get(key, []), recvs.get(key, [])
        if len(s) != len(r):
            at = (src, s[len(r)]) if len(s) > len(r) else (dst, r[len(s)])
            _fail(at[0], at[1][4], at[1][5], f"rank {src} sends {len(s)} message(s) with tag {tag} to rank {dst}, "
                  f"which receives {len(r)}")
        for a, b in zip(s, r):
            if a[:4] != b[:4]:
                _fail(dst, b[4], b[5], f"receives {b[0]} words of {b[1]} (presence {b[2]}, sparse {b[3]}) from rank "
                      f"{src}, which sends {a[0]} words of {a[1]} (presence {a[2]}, sparse {a[3]}) as instruction "
                      f"{a[4]} ({a[5]})")


def _signature(i) -> tuple:
    t = type(i)
    if t is ir.AllgatherRows:
        return (t.__name__, tuple(int(x) for x in i.counts), i.k, i.dtype, i.presence)
    if t is ir.Allreduce:
        return (t.__name__, i.monoid.name, i.entries, i.presence)
    if t in (ir.SmallAllreduce, ir.ISmallAllreduce):
        return (t.__name__, tuple(m.name for m in i.monoids), i.entries)
    if t in (ir.Bcast, ir.IBcast):
        return (t.__name__, i.root, i.nrows, i.k, i.dtype, i.presence)
    if t is ir.BcastSparse:
        return (t.__name__, i.root, i.nrows, i.ncols, i.nnz, i.dtype)
    if t is ir.Alltoall:
        return (t.__name__, i.stack, i.dtype, i.presence, len(i.send_rows))
    if t is ir.WinExpose:
        return (t.__name__, i.win)
    if t is ir.AllgatherSparse:
        return (t.__name__, i.axis, tuple(i.shape))
    if t is ir.Loop:
        return (t.__name__, i.loop, i.max_iter, i.agreed)
    if t is ir.Redistribute:
        return (t.__name__, i.axis, i.width)
    if t is ir.TransposeRows:
        return (t.__name__, i.ncols)
    if t in (ir.FetchMxM, ir.FetchGather):
        return (t.__name__, len(i.parts))
    if t is ir.AlltoallSparse:
        return (t.__name__, len(i.bounds), i.ncols)
    raise AssertionError(f"no signature for collective {t.__name__}")


def _groups(programs) -> dict:
    """(group id, colour) -> member world ranks in group order (MPI_Comm_split with key 0)."""
    P = len(programs)
    out = {(0, 0): list(range(P))}
    ngroups = {len(p.splits) for p in programs}
    if len(ngroups) > 1:
        _fail(0, None, None, f"ranks create different numbers of sub-communicators: {sorted(ngroups)}")
    for g in range(ngroups.pop() if ngroups else 0):
        for p in programs:
            c = p.splits[g]
            if c is not None:
                out.setdefault((g + 1, c), []).append(p.rank)
    return out


# what ranks must call together: the collectives, and loops (each check of a loop's condition
# broadcasts rank 0's answer to the world)
_SYNC = (*ir.COLLECTIVES, ir.Loop)


def _members(programs) -> dict:
    """(group, world rank) -> (colour, position in the group, group size)."""
    member = {}
    for (g, c), ranks in _groups(programs).items():
        for pos, r in enumerate(ranks):
            member[(g, r)] = (c, pos, len(ranks))
    return member


def _collectives(blocks: list, member: dict):
    calls = defaultdict(list)   # (group, colour) -> per member: list of (signature, k, instr, pos)
    for rank, instrs in enumerate(blocks):
        seqs = defaultdict(list)
        for k, i in enumerate(instrs):
            if not isinstance(i, _SYNC):
                continue
            g = getattr(i, "group", 0)
            if (g, rank) not in member:
                _fail(rank, k, i, f"uses group {g}, of which this rank is not a member")
            c, pos, size = member[(g, rank)]
            me = getattr(i, "me", None)
            if type(i) in (ir.AllgatherRows, ir.Alltoall) and me is not None and me != pos:
                _fail(rank, k, i, f"says it is member {me} of group {g}, but it is member {pos}")
            seqs[(g, c)].append((_signature(i), k, i, pos))
        for key, seq in seqs.items():
            calls[key].append((rank, seq))
    for (g, c), per_rank in calls.items():
        members = [r for (gg, r), (cc, _, _) in member.items() if gg == g and cc == c]
        if len(per_rank) != len(members):
            absent = sorted(set(members) - {r for r, _ in per_rank})
            r0, seq0 = per_rank[0]
            _fail(r0, seq0[0][1], seq0[0][2], f"a collective of group {g} that rank(s) {absent} never call")
        r0, seq0 = per_rank[0]
        for r, seq in per_rank[1:]:
            for a, b in zip(seq0, seq):
                if a[0] != b[0]:
                    _fail(r, b[1], b[2], f"collective {b[0]} meets {a[0]} on rank {r0} (instruction {a[1]})")
            if len(seq) != len(seq0):
                longer = (r, seq) if len(seq) > len(seq0) else (r0, seq0)
                x = longer[1][min(len(seq), len(seq0))]
                _fail(longer[0], x[1], x[2], f"group {g} calls {len(seq0)} collectives on rank {r0} but {len(seq)} "
                      f"on rank {r}")
        for step in range(len(seq0)):
            _check_roots([(r, seq[step]) for r, seq in per_rank], g)
    _no_cycle(blocks, member)


def _no_cycle(blocks: list, member: dict):
    """Blocking collectives as nodes (group, colour, step), each rank's program order as edges:
    a cycle means some ranks wait in one collective for ranks waiting in another."""
    edges, where = defaultdict(set), {}
    for rank, instrs in enumerate(blocks):
        steps, prev = defaultdict(int), None
        for k, i in enumerate(instrs):
            if not isinstance(i, _SYNC):
                continue
            g = getattr(i, "group", 0)
            key = (g, member[(g, rank)][0])
            node = (*key, steps[key])
            steps[key] += 1
            if type(i) in (ir.IBcast, ir.ISmallAllreduce):   # posted, not waited for here
                continue
            where.setdefault(node, (rank, k, i))
            if prev is not None:
                edges[prev].add(node)
            prev = node
    state: dict = {}
    for start in list(edges):
        stack = [(start, iter(edges[start]))]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                r, k, i = where[nxt]
                cycle = [n for n, _ in stack]
                _fail(r, k, i, "ranks would wait for each other in a cycle of collectives (a deadlock): groups "
                      + " -> ".join(f"{n[0]}/{n[1]} step {n[2]}" for n in cycle[cycle.index(nxt):] + [nxt]))
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(edges.get(nxt, ()))))


def _check_roots(calls, g):
    """At one collective step of a group: the root (and only it) has the data; all-to-all sizes agree."""
    i0 = calls[0][1][2]
    if type(i0) in (ir.Bcast, ir.IBcast, ir.BcastSparse):
        for r, (_, k, i, pos) in calls:
            if (i.src is not None) != (pos == i.root):
                _fail(r, k, i, f"member {pos} of group {g} " + ("sends as root but the root is member "
                      f"{i.root}" if i.src is not None else "is the root but has nothing to send"))
    if type(i0) is ir.Alltoall:
        by_pos = {pos: (r, k, i) for r, (_, k, i, pos) in calls}
        for pos, (r, k, i) in by_pos.items():
            for m, sent in enumerate(i.sent()):
                other = by_pos[m][2]
                want = other.recv_shapes[pos][0] * other.recv_shapes[pos][1]
                if sent != want:
                    _fail(r, k, i, f"sends {sent} words to member {m} of group {g}, which expects {want}")


def _walk(instrs):
    """(position, instruction) of a block and, recursively, of its loops' blocks."""
    for k, i in enumerate(instrs):
        yield k, i
        if type(i) is ir.Loop:
            yield from _walk(i.cond)
            yield from _walk(i.body)


def _windows(programs):
    nwin = {len(p.windows) for p in programs}
    if len(nwin) > 1:
        _fail(0, None, None, f"ranks create different numbers of windows: {sorted(nwin)}")
    for p in programs:
        for k, i in _walk(p.setup + p.instrs):
            if type(i) is ir.Get:
                if i.win >= len(p.windows):
                    _fail(p.rank, k, i, f"window {i.win} does not exist")
                exposed = programs[i.target].windows[i.win][0]
                if i.target_nrows != exposed or (len(i.starts) and int((i.starts + i.counts).max()) > exposed):
                    _fail(p.rank, k, i, f"gets rows outside the {exposed} rows rank {i.target} exposes")
                if int(i.counts.sum()) != i.nrows:
                    _fail(p.rank, k, i, f"fetches {int(i.counts.sum())} rows into a buffer of {i.nrows}")


def _block(blocks: list, member: dict):
    """One block of every rank (the program, or the same loop's condition or body): its messages
    and collectives, then its loops' blocks, each on its own (every rank runs a loop the same
    number of times)."""
    _messages(blocks)
    _collectives(blocks, member)
    loops = [[i for i in b if type(i) is ir.Loop] for b in blocks]
    for j in range(len(loops[0]) if loops else 0):
        for part in ("cond", "body"):
            _block([getattr(ls[j], part) for ls in loops], member)


def verify_plan(programs: list) -> list:
    """Check every rank's program (all of them, as planning has them); returns them unchanged."""
    for p in programs:
        _slots(p)
    member = _members(programs)
    _block([p.setup for p in programs], member)
    _block([p.instrs for p in programs], member)
    _windows(programs)
    return programs
