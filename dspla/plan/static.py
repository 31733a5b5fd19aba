"""Static evaluation: the values that depend only on the graph (A, Aᵀ, the normalised A, degree
vectors) are computed once. Those planning must see (the sparse left operands of products and
what they are made from) are computed at planning, with the reference executor; static
products and loops planning does not need (a triangle count's L·L, a label propagation on the
graph alone) are deferred: lowered like the rest
into a setup block that every rank runs once, distributed, on the first run of the plan. What
is left is the dynamic program the plan distributes."""
from __future__ import annotations

from dataclasses import dataclass, field

import graphblas as gb

from ..ir import Node, Op
from ..ir.types import Kind, concrete
from ..kernels import gbops
from ..ops.ewise import ewise_cast
from ..reference import environment
from ..reference import evaluate as evaluate_node


@dataclass
class Static:
    ids: set            # id(node) of every node computed at planning
    values: dict        # id(node) -> graphblas Matrix, for those a dynamic node or an output needs
    deferred: set = field(default_factory=set)   # static nodes the plan's setup block computes
    patterns: dict = field(default_factory=dict)  # id(sparse param) -> its value as given (its pattern planned on)

    def describe(self, order: list, names: dict) -> str:
        rows = [f"  {names.get(id(n), n.label)} = {n.op_text()}: {n.type}  (computed at planning)"
                for n in order if id(n) in self.values]
        rows += [f"  {names.get(id(n), n.label)} = {n.op_text()}: {n.type}  (computed once, distributed, by the "
                 "setup block)" for n in order if id(n) in self.deferred]
        return "static values:\n" + ("\n".join(rows) if rows else "  (none)")


def is_static_leaf(n: Node) -> bool:
    """The graph: sparse inputs over two dims bound from the data (``sparse[n, n]``, features
    ``sparse[n, f]``), and identities. A sparse vector or block of them (a BFS frontier,
    distances with missing entries: a fixed number of columns) changes from call to call: it is
    dynamic, planned for any contents."""
    if n.op is Op.IDENTITY:
        return True
    return n.op is Op.INPUT and n.type.kind is Kind.sparse and n.attr("role") == "input" and \
        all(isinstance(d, str) for d in n.type.shape)


def is_pattern_leaf(n: Node) -> bool:
    """A sparse parameter over two dims bound from the data (edge weights ``sparse[n, n]``): its
    values change every step, its pattern does not, and planning may read the pattern (the
    sampled product's send sets, plan/sampled.py); the session plans again when it changes."""
    return n.op is Op.INPUT and n.type.kind is Kind.sparse and n.attr("role") == "param" and \
        all(isinstance(d, str) for d in n.type.shape)


def _read_transposed(users) -> bool:
    """Every user is an element-wise op of two same-shaped operands, which GraphBLAS can give a
    transposed operand directly."""
    return bool(users) and all(u.op in (Op.EWISE_ADD, Op.EWISE_MULT) and u.args[0].type.shape == u.args[1].type.shape
                               for u in users)


_UNBUILT = object()   # an identity only reduced by rows or columns: never built


def _reduced_by_rows(users) -> bool:
    """Every user reduces each row (or column) of an identity: one entry each, so the result is
    a full vector of that entry, whatever the monoid."""
    return bool(users) and all(u.op is Op.REDUCE and u.attr("axis") in ("rows", "cols") for u in users)


def classify(order: list[Node], outputs) -> tuple[set, set, set]:
    """(static: computed once, at planning; needed: the static values a dynamic node, a deferred
    one or an output reads; deferred: static, but computed by the plan's setup block)."""
    st: set[int] = set()
    for n in order:
        if is_static_leaf(n) or (n.args and all(id(a) in st for a in n.args)):
            st.add(id(n))
    # planning reads the left operands of products (and what they are made from)
    seen: set[int] = set()
    for n in reversed(order):
        if n.op is Op.MXM and id(n.args[0]) in st:
            seen.add(id(n.args[0]))
        if id(n) in seen:
            seen.update(id(a) for a in n.args if id(a) in st)
    deferred: set[int] = set()
    for n in order:
        if id(n) in st and id(n) not in seen and (n.op in (Op.MXM, Op.WHILE) or any(id(a) in deferred for a in n.args)):
            deferred.add(id(n))
    st -= deferred
    users = _users(order)
    outs = {id(n) for _, n in outputs}
    needed = {i for i in st if i in outs or any(id(u) not in st for u in users.get(i, []))}
    return st, needed, deferred


def _users(order: list[Node]) -> dict:
    users: dict[int, list] = {}
    for n in order:
        for a in n.args:
            users.setdefault(id(a), []).append(n)
    return users


def evaluate(order: list[Node], outputs, mats: dict, dims: dict, overflow: str = "error") -> Static:
    st, needed, deferred = classify(order, outputs)
    users = _users(order)
    last: dict[int, int] = {}
    for i, n in enumerate(order):
        for a in n.args:
            last[id(a)] = i
    env = environment(mats, dims, overflow)
    values: dict[int, object] = {}
    for i, n in enumerate(order):
        if id(n) not in st:
            continue
        if n.op is Op.TRANSPOSE and id(n) not in needed and _read_transposed(users.get(id(n), ())):
            # Aᵀ only for A + Aᵀ and the like: GraphBLAS reads A transposed (a descriptor);
            # building Aᵀ would cost as much as the element-wise op itself
            values[id(n)] = values[id(n.args[0])].T
            continue
        if n.op is Op.IDENTITY and id(n) not in needed and _reduced_by_rows(users.get(id(n), ())):
            values[id(n)] = _UNBUILT   # (its reductions below are full vectors of 1)
            continue
        if n.op is Op.REDUCE and values.get(id(n.args[0])) is _UNBUILT:
            # reduce_rows(eye(n)), as a program makes a full n x 1 value (cc's labels): building
            # the 82K-row identity and reducing it took 1 ms on soc-Slashdot0902
            r, c = (concrete(d, env.dims, "a reduced identity") for d in n.type.shape)
            values[id(n)] = gbops.full(r, c, 1, n.type.dtype)
            continue
        args = [values[id(a)] for a in n.args]
        u = users.get(id(n), ())
        if n.op in (Op.EWISE_ADD, Op.EWISE_MULT) and id(n) not in needed and len(u) == 1 and u[0].op is Op.CAST:
            values[id(n)] = ewise_cast(n, args, u[0].attr("dtype"))   # cast(A + Aᵀ, bool): one pass
            continue
        values[id(n)] = evaluate_node(n, args, env)
        for a in n.args:  # drop static intermediates nobody else needs
            if last.get(id(a)) == i and id(a) not in needed:
                values.pop(id(a), None)
    patterns = {id(n): mats[n.attr("name")] for n in order if is_pattern_leaf(n)
                and isinstance(mats.get(n.attr("name")), gb.Matrix)}   # (not a Meta: passed distributed)
    return Static(st, {i: values[i] for i in needed}, deferred, patterns)
