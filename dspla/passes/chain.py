"""Matrix-chain order: (A X) W or A (X W), by predicted work, once sizes are known.

A chain is a run of products over one semiring whose intermediate results nobody else uses.
Its factors are re-parenthesised by the classic dynamic programme, with the cost of one
product taken as its multiply-adds: nnz(S) x width for a sparse factor S, p x q x r for dense
ones. For a GCN layer with f_in = 1433 and f_out = 16 this turns A (X W) into the order that
moves rows of width 16 instead of 1433.

Only semirings that are associative over every value are re-associated: the fact is on the
algebra rows (``Semiring.associative``: the multiply is associative and distributes over the
monoid, as in plus_times, min_plus, max_plus); ones like plus_pair or plus_second, where the
order changes the result, are left alone, and so are chains of more than MAX_FACTORS factors.
"""
from __future__ import annotations

from ..ir import Node, Op, Program
from ..ops import make
from .rewrite import rewrite

# The dynamic programme is cubic in the factors (0.3 s at 128); a longer chain keeps the order it
# was written in.
MAX_FACTORS = 128


def chain_order(program: Program, sizes: dict, nnz_hint=None) -> Program:
    """``sizes``: dim symbol -> size. ``nnz_hint(node)``: the number of entries of a sparse
    factor when known (inputs), else None (estimated from the sparse inputs of that shape)."""
    if not _has_chain(program):   # (most programs: nothing to re-associate, nothing rebuilt)
        return program
    users = program.use_counts()

    def dim(d):
        return d if isinstance(d, int) else sizes.get(d, 1)

    def entries(n: Node) -> float:
        r, c = dim(n.type.nrows), dim(n.type.ncols)
        if n.type.kind.value == "dense":
            return float(r * c)
        hint = nnz_hint(n) if nnz_hint else None
        return float(hint) if hint is not None else 0.05 * r * c

    def chainable(n: Node, sr) -> bool:   # masked products end a chain: their mask needs their exact result
        return n.op is Op.MXM and n.attr("semiring") is sr and n.attr("mask") is None

    def factors(n: Node, sr) -> list[Node]:
        """The chain's factors left to right (with a stack: a chain may be thousands long)."""
        if not chainable(n, sr):
            return [n]
        out, stack = [], list(reversed(n.args))
        while stack:
            a = stack.pop()
            if chainable(a, sr) and users.get(id(a), 0) == 1:
                stack.extend(reversed(a.args))
            else:
                out.append(a)
        return out

    # products inside a longer chain are handled by the chain's root
    inner = {id(a) for n in program.toposort() if n.op is Op.MXM and n.attr("mask") is None for a in n.args
             if chainable(a, n.attr("semiring")) and users.get(id(a), 0) == 1}
    done: set[int] = set()

    def rule(n: Node):
        if not chainable(n, n.attr("semiring")) or id(n) in done or id(n) in inner \
                or not n.attr("semiring").associative:
            return None
        sr = n.attr("semiring")
        fs = factors(n, sr)
        if not 3 <= len(fs) <= MAX_FACTORS:
            return None
        best = _dp(fs, dim, entries)
        new = _build(best, fs, sr, n)
        done.add(id(new))
        return new if new != n else None

    return rewrite(program, rule, sub=lambda p: chain_order(p, sizes, nnz_hint))


def _has_chain(program: Program) -> bool:
    """Some unmasked product over an associative semiring reads another over the same one, here
    or in a sub-program (a loop's body): the only place a chain can start."""
    for n in program.toposort():
        if any(isinstance(v, Program) and _has_chain(v) for _, v in n.attrs):
            return True
        if n.op is Op.MXM and n.attr("mask") is None and n.attr("semiring").associative and \
                any(a.op is Op.MXM and a.attr("semiring") is n.attr("semiring") and a.attr("mask") is None
                    for a in n.args):
            return True
    return False


def _dp(fs, dim, entries):
    k = len(fs)
    rows = [dim(f.type.nrows) for f in fs]
    cols = [dim(f.type.ncols) for f in fs]
    cost = {(i, i): 0.0 for i in range(k)}
    split, est = {}, {(i, i): entries(fs[i]) for i in range(k)}
    dense = {(i, i): fs[i].type.kind.value == "dense" for i in range(k)}
    for length in range(2, k + 1):
        for i in range(k - length + 1):
            j = i + length - 1
            best = None
            for s in range(i, j):
                left, right = (i, s), (s + 1, j)
                p, q, r = rows[i], cols[s], cols[j]
                if not dense[left]:
                    work = est[left] * r
                elif not dense[right]:
                    work = est[right] * p
                else:
                    work = float(p) * q * r
                c = cost[left] + cost[right] + work
                if best is None or c < best[0]:
                    best = (c, s)
            cost[(i, j)], split[(i, j)] = best
            est[(i, j)] = float(rows[i] * cols[j])   # products of a dense factor are dense
            dense[(i, j)] = dense[(i, best[1])] or dense[(best[1] + 1, j)]
    return split


def _build(split, fs, sr, root: Node) -> Node:
    def go(i, j):
        if i == j:
            return fs[i]
        s = split[(i, j)]
        return make(Op.MXM, (go(i, s), go(s + 1, j)), (("semiring", sr), ("mask", None), ("complement", False)),
                    span=root.span)
    out = go(0, len(fs) - 1)
    return out.replace(name=root.name) if out.op is Op.MXM else out
