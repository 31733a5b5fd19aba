"""mxm: C = A ⊕.⊗ B over a semiring (attributes: semiring; mask None | 'value' | 'structure' and
complement, with the mask as a third argument: C<M> = A ⊕.⊗ B, entries outside the mask are not
computed). Python: ``dp.mxm``, ``dp.mxv``, ``dp.vxm``, ``A @ B``; files: the same names, ``@``.

A sparse x dense product over a partitioned dim is where data moves: lowering hands it to the
distributed plans (plan/product.py), which the cost model chooses among."""
from __future__ import annotations

from .. import algebra
from .._types import SemiringLike
from ..errors import NoGradient, Span
from ..instr import FetchMxM, Fill, MxM
from ..instr.layout import REP
from ..ir.node import Node, Op
from ..ir.types import Kind, Type, fitting
from .define import (
    EXPR,
    MASKED,
    NOTHING,
    SEMIRING,
    Expr,
    Facts,
    bool_mask,
    check_mask,
    define,
    dims_differ,
    make,
    mask_args,
    named,
    node_of,
    span_or_caller,
    spelling,
    touched,
    unify,
    vector_check,
)
from .define.lazy import kernel
from .form import as_vector
from .transpose import transpose

gbops = kernel("gbops")
overflow = kernel("overflow")
routes = kernel("routes")
spmspv = kernel("spmspv")

MXM = define("mxm", attrs=("semiring", "mask", "complement"))


@MXM.type_rule
def _type(args, attrs, given, where, span):
    a, b = args[0], args[1]
    if unify(a.type.ncols, b.type.nrows, where) is None:
        dims_differ(where, "inner dimensions differ", a, b, a.type.ncols, b.type.nrows, span)
    _, out = attrs["semiring"].dtypes(a.type.dtype, b.type.dtype, where)
    shape = (a.type.nrows, b.type.ncols)
    check_mask(args, attrs, shape, where, span, 2)
    # a masked product holds entries inside its mask only: stored sparse
    sparse = a.type.kind is Kind.sparse and b.type.kind is Kind.sparse or attrs["mask"] is not None
    return Type(Kind.sparse if sparse else Kind.dense, shape, out, fitting(b.type.form, shape))


def output_mask(node, args, first: int):
    """The GraphBLAS mask object of a (maybe) masked op whose mask is args[first]."""
    return gbops.mask_of(args[first], node.attr("mask"), node.attr("complement")) if node.attr("mask") else None


@MXM.eval_rule()
def _evaluate(node, args, env):
    a, b = args[0], args[1]
    sr = node.attr("semiring")
    da, db = gbops.dtype_of(a), gbops.dtype_of(b)
    compute, out = sr.dtypes(da, db)
    ca, cb = sr.operand_dtypes(da, db, compute)
    a, b = gbops.cast(a, ca), gbops.cast(b, cb)
    return gbops.cast(gbops.mxm(a, b, sr, compute, mask=output_mask(node, args, 2)), out)


@MXM.fact_rule
def _facts(n, a):
    if n.attr("mask") is not None:
        return NOTHING   # only entries inside the mask
    x, y = a
    return Facts((x.rows and y.full) or (x.full and y.cols), rows=x.rows and y.full, cols=x.full and y.cols)


@MXM.work_rule
def _work(n, args, out):
    return touched(args, out)


# ------------------------------------------------------------------------------- lowering
def _sole_union(pl, n: Node) -> tuple:
    """(u, X) when the unmasked product n is read only by ``u = ewise_add(n, X, ⊕)`` with its
    semiring's own ⊕ (X on the left only for a commutative ⊕), else (None, None)."""
    users = pl.uses.get(id(n), [])
    if n.attr("mask") is not None or len(users) != 1 or users[0] is None:
        return None, None
    u = users[0]
    if u.op is not Op.EWISE_ADD or u.attr("op").name != n.attr("semiring").monoid.op.name or u.args[0] is u.args[1]:
        return None, None
    if u.args[0] is n and not u.attr("op").commutative:
        return None, None
    return u, (u.args[1] if u.args[0] is n else u.args[0])


def _accumulated(pl, n: Node, layout) -> bool:
    """``ewise_add(X, A ⊕.⊗ B, ⊕)``, the product used nowhere else, as GraphBLAS's own
    ``C ⊕= A ⊕.⊗ B`` on a copy of X (an accumulator is exactly an eWiseAdd with it): the
    product's output is never built and X is combined in the same pass (label propagation,
    Bellman-Ford). Emits it and returns True, or returns False to lower the product as usual."""
    sr = n.attr("semiring")
    u, x = _sole_union(pl, n)
    if u is None:
        return False
    if not pl.computed(x):
        return False   # X comes later in the order (X @ S + A @ (X @ N): both products accumulate-able)
    compute = sr.dtypes(n.args[0].type.dtype, n.args[1].type.dtype)[0]
    if not (x.type.shape == n.type.shape == u.type.shape and x.type.dtype == n.type.dtype == u.type.dtype == compute):
        return False
    if pl.layout(x) != layout or pl.layout(u) != layout:
        return False
    out = pl.slot()
    copy = Node(Op.APPLY, (x,), (("op", algebra.UNARY["identity"]),), x.type)   # the accumulation writes in place
    pl.emit_local(out, copy, (pl.value(x, layout),), (layout,), layout)
    pl.emit(MxM(out, operand(pl, n, n.args[0]), operand(pl, n, n.args[1]), sr, accumulate=True,
                label=pl.message_label(u)))
    pl.set(u, out, layout)
    pl.fused.add(id(u))
    return True


def _plus_constant(pl, n: Node, layout) -> bool:
    """``ewise_add(A ⊕.⊗ b, s)`` for a column b and a 1 x 1 s (a teleport term: PageRank's
    ``Aᵀ w + c``), the product used nowhere else, as ``C = s everywhere; C ⊕= A ⊕.⊗ b`` (LAGraph's
    PageRank): the union's pass over the product and the product's own fill at the identity
    become one fill at s, and rows of A with no entries keep s, as the union gives them (a
    missing s: C starts with no entries). Equal to rounding: SuiteSparse may add an entry's terms
    to s one by one where the union adds s to their sum. Only a column, and only where
    accumulating in place is SuiteSparse's faster kernel for the product anyway (kernels/routes.py,
    IN_PLACE). When s comes later in the order (it reads the product's operand: PageRank's
    dangling mass), the product waits for it: the union's lowering emits both. Returns False to
    lower the product as usual."""
    sr = n.attr("semiring")
    u, s = _sole_union(pl, n)
    if u is None or tuple(s.type.shape) != (1, 1) or n.type.shape[1] != 1:
        return False
    compute = sr.dtypes(n.args[0].type.dtype, n.args[1].type.dtype)[0]
    if not (s.type.dtype == n.type.dtype == u.type.dtype == compute) or u.type.shape != n.type.shape or \
            pl.layout(u) != layout or pl.concrete(n.type.nrows) == 1:
        return False
    a = pl.static_value(n.args[0])   # (static on this path) where SuiteSparse's in-place kernel is the faster
    covered = pl.full_where_read(n.args[0], pl.facts[id(n.args[1])])
    if not routes.in_place_pays(gbops.unit_times(a, sr), compute, 1, covered) or a.nvals == a.nrows * a.ncols:
        return False

    def emit():
        out = pl.slot()
        pl.emit(Fill(out, pl.concrete(n.type.nrows), 1, sr.monoid, compute.value, value=pl.value(s)))
        pl.emit(MxM(out, operand(pl, n, n.args[0]), operand(pl, n, n.args[1]), sr, accumulate=True,
                    label=pl.message_label(u)))
        pl.set(u, out, layout)
    if pl.computed(s):
        emit()
        pl.fused.add(id(u))
    else:
        pl.takeover[id(u)] = emit
    return True


def operand(pl, n: Node, x: Node, layout=None) -> int:
    """A product's operand: a static one already in the dtype the semiring reads it in."""
    sr, (a, b) = n.attr("semiring"), (y.type.dtype for y in n.args[:2])
    wanted = sr.operand_dtypes(a, b, sr.dtypes(a, b)[0])
    return pl.value(x, layout, wanted[0] if x is n.args[0] else wanted[1])


def mask_fields(pl, n: Node, layout) -> dict:
    """The MxM fields of a (maybe) masked product: the mask's slot in ``layout``."""
    if n.attr("mask") is None:
        return {}
    return {"mask": pl.value(n.args[2], layout), "mask_kind": n.attr("mask"), "complement": n.attr("complement")}


def _one_process(pl, n: Node, layout) -> None:
    """One process: nothing moves, the product is the local kernel's."""
    pl.check_forced(n)
    if _accumulated(pl, n, layout) or _plus_constant(pl, n, layout):
        return
    a, b = n.args[0], n.args[1]
    out = pl.slot()
    # (a is static here; a masked product, which takes SuiteSparse's masked route, never reads them)
    empty = gbops.empty_rows(pl.static_value(a)) if n.attr("mask") is None else None
    covered = n.attr("mask") is None and pl.full_where_read(a, pl.facts[id(b)])   # (masked: its own route)
    a_slot = operand(pl, n, a)
    b_slot, flipped = transposed_operand(pl, n)
    pl.emit(MxM(out, a_slot, b_slot, n.attr("semiring"), **mask_fields(pl, n, layout),
                a_empty_rows=empty, b_covered=covered, b_transposed=flipped,
                push=pl.const_all(lambda r: frontier(pl.consts[r][a_slot], pl.concrete(n.type.nrows)))
                if pushes(pl, n) else None, label=pl.message_label(n)))
    pl.set(n, out, layout)


def transposed_operand(pl, n: Node, layout=None) -> tuple[int, bool]:
    """(b's slot, whether it holds Bᵀ). A masked product with b = xᵀ on one process reads x through
    SuiteSparse's transpose descriptor, as python-graphblas's ``A @ X.T`` does: the masked dot
    product runs on x's rows, where a materialised xᵀ sent it to a saxpy 2-3x slower (the triangles
    of Slashdot's L, L Lᵀ in L: 1.1 s against 2.1-3.3 s). On P processes: b's value in ``layout``."""
    b = pl.resolve(n.args[1])   # (inside a loop: the transpose outside it that a placeholder stands for)
    if pl.P == 1 and b.op is Op.TRANSPOSE and n.attr("mask") is not None and b.type.shape[1] != 1 \
            and b.args[0].type.dtype == b.type.dtype and _held(pl, b.args[0]) and not _checked(pl, n):
        return operand(pl, n, b.args[0]), True
    return (operand(pl, n, b) if pl.P == 1 else pl.value(n.args[1], layout)), False


def _checked(pl, n: Node) -> bool:
    """Whether n is an int64 product checked for overflow: the check reads a made bᵀ, not one read
    through the descriptor, so xᵀ is then a value of its own (made once at planning when x is)."""
    sr, (a, b) = n.attr("semiring"), (y.type.dtype for y in n.args[:2])
    return pl.opt.overflow == "error" and overflow.int_product(sr, sr.dtypes(a, b)[0])


def lower_vxm(pl, n: Node) -> bool:
    """(uᵀ ⊕.⊗ A)ᵀ for a column u, as ``vxm`` spells it on a vector, on one process: one MxM
    that runs GraphBLAS's vxm on u itself (no transposes; a mask given as the row's transpose
    read as its column). n is uᵀ, read only by the product, which only the transpose reads:
    True when n, the product and that transpose are lowered so."""
    u, users = n.args[0], pl.uses.get(id(n), [])
    if pl.P != 1 or u.type.shape[1] != 1 or len(users) != 1 or users[0] is None:
        return False
    m = users[0]
    after = pl.uses.get(id(m), [])
    if m.op is not Op.MXM or m.args[0] is not n or m.args[1] is n or len(after) != 1 or after[0] is None \
            or after[0].op is not Op.TRANSPOSE or not pl.computed(m.args[1]):
        return False
    mask = m.args[2] if m.attr("mask") is not None else None
    if mask is not None and (mask.op is not Op.TRANSPOSE or not pl.computed(mask.args[0])):
        return False
    fields = {} if mask is None else {"mask": pl.value(mask.args[0]), "mask_kind": m.attr("mask"),
                                      "complement": m.attr("complement")}
    out, t = pl.slot(), after[0]
    pl.emit(MxM(out, pl.value(u), operand(pl, m, m.args[1]), m.attr("semiring"), vxm=True,
                label=pl.message_label(m), **fields))
    pl.set(t, out)
    pl.fused.update((id(m), id(t)))
    if mask is not None and not pl.computed(mask) and all(x is m for x in pl.uses.get(id(mask), [None])):
        pl.fused.add(id(mask))   # (the row mask is not made either)
    return True


def _held(pl, x: Node) -> bool:
    """Whether x's value is at hand (lowered, outside the loop, or a static value planning kept)."""
    return id(x) in pl.vals or id(x) in pl.alias or id(x) in pl.static


def pushes(pl, n: Node) -> bool:
    """Whether a product is a frontier's (a static a times a dynamic sparse vector under a
    complemented mask, a BFS level) that may be pushed or pulled (kernels/spmspv.py): both
    give the same bits."""
    a, b = n.args[0], n.args[1]
    sr = n.attr("semiring")
    return bool(n.attr("complement")) and b.type.shape[1] == 1 and b.type.kind is Kind.sparse and \
        pl.is_static(a) and not pl.is_static(b) and spmspv.exact_either_way(sr, sr.dtypes(a.type.dtype,
                                                                                           b.type.dtype)[0])


def frontier(A, length: int):
    """The pieces of a frontier's product with (a block of) A: its transpose held by row, A
    itself when symmetric (no copy), and the frontier's whole length."""
    T = A.T.new()
    symmetric = A.nrows == A.ncols and T.isequal(A)
    return spmspv.Frontier(A if symmetric else T, length, copied=not symmetric)


def frontier_count(pl, n: Node) -> int | None:
    """The slot of nvals(b) where the loop's test computed it (its sum over ranks), else None."""
    for u in pl.uses.get(id(n.args[1]), []):
        if u is not None and u.op is Op.NVALS and id(u) in pl.vals:
            return pl.vals[id(u)].slots
    return None


def _fetched(pl, n: Node, layout) -> None:
    """a ⊕.⊗ b for a row-distributed a computed at run time and a sparse b whose rows are
    distributed too: the rows of b that a names are fetched from their owners, one owner at a
    time (FetchMxM), where gathering b whole put all of it on every rank. Words: at most every
    entry of b that the others hold (a static b's, counted here; else found when it runs)."""
    a, b = n.args[0], n.args[1]
    cols = pl.dims[a.type.ncols]
    expect = {r: (0, 0, 0, 0) for r in pl.ranks}
    if pl.is_static(b):
        value = pl.static_value(b)
        own = [int(value.nvals)] if pl.me is not None else \
            [int(value[cols.owned[r], :].new().nvals) for r in range(pl.P)]
        every = pl.comm.allgather(own[0]) if pl.me is not None else own
        expect = {r: (every[r] * (pl.P - 1), pl.P - 1, sum(every) - every[r], pl.P - 1) for r in pl.ranks}
    out = pl.slot()
    pl.emit(lambda r: FetchMxM(out, pl.value(a), pl.value(b), n.attr("semiring"), cols.parts, cols.pos,
                               **mask_fields(pl, n, layout), expect=expect[r]))
    pl.set(n, out, layout)


@MXM.lower_rule
def _lower(pl, n: Node):
    a, b = n.args[0], n.args[1]
    sr = n.attr("semiring")
    nl = pl.layout(n)
    if isinstance(a.type.ncols, str) and a.type.ncols in pl.dims:   # the inner dim is partitioned
        al = pl.layout(a)
        wide = isinstance(b.type.ncols, str) and b.type.ncols in pl.dims   # B's columns distributed too
        if al.kind == "row" and pl.is_static(a) and pl.layout(b).kind == "row" \
                and (not wide or b.type.kind is Kind.sparse):
            return _one_process(pl, n, al) if pl.P == 1 else pl.product(n)
        if al.kind == "row" and not pl.is_static(a) and wide and b.type.kind is Kind.sparse and pl.P > 1 \
                and pl.layout(b).kind == "row":   # (a loop's carried C in C lor.land A): b's rows fetched
            return _fetched(pl, n, al)
        if al.kind == "row" and not pl.is_static(a):   # a dynamic row-distributed operand: gather B
            out = pl.slot()
            b_slot, flipped = transposed_operand(pl, n, REP)
            pl.emit(MxM(out, pl.value(a), b_slot, sr, **mask_fields(pl, n, al), label=pl.message_label(n),
                        b_transposed=flipped))
            return pl.set(n, out, al)
        if al.kind == "col":   # a's columns are distributed like b's rows: local partial (inside the mask) + reduce
            part = pl.slot()
            b_slot, flipped = transposed_operand(pl, n)
            pl.emit(MxM(part, pl.value(a), b_slot, sr, **mask_fields(pl, n, REP), label=pl.message_label(n),
                        b_transposed=flipped))
            return pl.reduced(n, part, sr.monoid)
        return pl.via_rep(n)
    if pl.sampled(n):   # (G Bᵀ) on a sparse pattern: the SpMM's send sets (plan/sampled.py)
        return None
    # inner dim not distributed: a's rows and b's columns decide the result's layout
    al, bl = pl.layout(a), pl.layout(b)
    out = pl.slot()
    a_slot = operand(pl, n, a, al if al in (nl, REP) else REP)
    b_slot = operand(pl, n, b, bl if bl in (nl, REP) else REP)
    if al == nl and bl == nl and nl != REP:  # both distributed the same way: one must be whole
        b_slot = operand(pl, n, b, REP)
    pl.emit(MxM(out, a_slot, b_slot, sr, **mask_fields(pl, n, nl), label=pl.message_label(n)))
    pl.set(n, out, nl)


# ------------------------------------------------------------------------------- gradient
def _linked(n):
    mult = n.attr("semiring").mult   # first / second read one operand's value only
    return (mult.reads if mult.grad is not None else (True, True)) + (False,) * (len(n.args) - 2)


@MXM.vjp_rule(linked=_linked)
def _vjp(n, g, needs, b):
    sr = n.attr("semiring")
    d = sr.mult.grad
    if n.attr("mask") is not None:   # (outside the mask the product has terms and no value; G may be there)
        g = b.mask(g, n.args[2], structure=n.attr("mask") == "structure", complement=n.attr("complement"))
    if sr.monoid.linear and d is not None and d.product is not None:
        return _sum_product(n, g, needs, b, d.product) + (None,) * (len(n.args) - 2)
    if sr.monoid.selects is not None and d is not None and d.term is not None:
        return _selective_product(n, g, needs, b, d.term == "other") + (None,) * (len(n.args) - 2)
    raise NoGradient(f"products over {sr.name} have no gradient (differentiable: plus_times, plus_first, "
                     "plus_second, and min/max with plus, times, first or second)")


def _sum_product(n, g, needs, b, mults):
    """C = A ⊕.⊗ B over plus: dA = G Bᵀ, dB = Aᵀ G, each restricted to its operand's pattern when
    that operand is sparse (a masked product: the sampled dense-dense product, SDDMM, for a sparse
    parameter). ``mults``: the multiplies of those products (the row's ``Derivatives.product``:
    first/second drop the other operand's value, a plus_first/plus_second product)."""
    A, B = n.args[0], n.args[1]
    dA = dB = None
    if needs[0]:
        dA = b.mxm(g, b.T(B), f"plus_{mults[0]}", mask=A if A.type.kind is Kind.sparse else None)
    if needs[1]:
        if _row_sum_form(A, B):
            dB = b.T(b.mxm(b.T(g), A, f"plus_{mults[2]}"))
        else:
            dB = b.mxm(b.T(A), g, f"plus_{mults[1]}", mask=B if B.type.kind is Kind.sparse else None)
    return dA, dB


def _row_sum_form(A, B) -> bool:
    """Aᵀ G written (Gᵀ A)ᵀ, as examples/gcn.dspla does by hand, for a sparse A over two
    different data-bound dims (features: n x f) and a dense B (a weight): both dims of A are
    partitioned, so Aᵀ would be laid out by f and G gathered whole; Gᵀ A keeps A and G in their
    row layout and sums the small partial products with one Allreduce."""
    r, c = A.type.shape
    return (A.type.kind is Kind.sparse and B.type.kind is not Kind.sparse and isinstance(r, str)
            and isinstance(c, str) and r != c)


def _selective_product(n, g, needs, b, scales: bool):
    """C = A min.⊗ B with one operand a vector: the terms A[i,k] ⊗ B[k] (or u[k] ⊗ B[k,j]) are a
    broadcast element-wise product T on A's (B's) pattern; the winner of each result entry is the
    lowest k whose term equals it, K; the cotangent goes to that term only. ``scales``: the
    derivative of a term is the other factor (times), else 1 (plus, first, second)."""
    A, B = n.args[0], n.args[1]
    mult = n.attr("semiring").mult.name
    if B.type.shape[1] == 1:        # mxv: C[i] = ⊕_k A[i,k] ⊗ B[k]
        terms = b.mul(A, b.T(B), mult)
        idx, axis, other = b.un(terms, "colindex"), "rows", "cols"
    elif A.type.shape[0] == 1:      # vxm: C[j] = ⊕_k A[k] ⊗ B[k,j]
        terms = b.mul(b.T(A), B, mult)
        idx, axis, other = b.un(terms, "rowindex"), "cols", "rows"
    else:
        return _selective_matrices(n, g, needs, b, scales)
    hits = b.mul(terms, n, "eq")                                  # terms equal to their result
    K = b.reduce(b.mask(idx, hits), "min", axis)                  # the lowest winning k: the tie rule
    win = b.mask(b.spread(terms, g), b.mul(idx, K, "eq"))         # G on the winning term of each entry
    mat_is_A = axis == "rows"
    mat, vec = (A, B) if mat_is_A else (B, A)
    vec_b = b.T(vec)                                              # broadcast like the terms
    d_mat = b.mul(win, vec_b) if scales else win
    d_vec = b.mul(win, mat) if scales else win
    g_mat = d_mat if needs[0 if mat_is_A else 1] else None
    g_vec = b.T(b.reduce(d_vec, "plus", other)) if needs[1 if mat_is_A else 0] else None
    return (g_mat, g_vec) if mat_is_A else (g_vec, g_mat)


def _selective_matrices(n, g, needs, b, scales: bool):
    """Both operands matrices (max aggregation: A max.+ H): the winners K are one ARGBEST node
    computed from the forward operands and result; ROUTE sends G[i,j] to A[i, K[i,j]] and to
    B[K[i,j], j] (times the other factor for a times multiply)."""
    A, B = n.args[0], n.args[1]
    K = b.make(Op.ARGBEST, (A, B, n), (("semiring", n.attr("semiring")),))
    dA = b.make(Op.ROUTE, (g, K, B), (("axis", "cols"), ("factor", scales))) if needs[0] else None
    dB = b.make(Op.ROUTE, (g, K, A), (("axis", "rows"), ("factor", scales))) if needs[1] else None
    return dA, dB


# ------------------------------------------------------------------------------- spellings
@spelling(file=(("a", EXPR), ("b", EXPR), ("semiring", SEMIRING), *MASKED))
def mxm(a: Expr, b: Expr, semiring: SemiringLike = "plus_times", *, mask: Expr | None = None,
        complement: bool = False, structure: bool = False, span: Span | None = None) -> Expr:
    """C = A ⊕.⊗ B over a semiring (by name or ``dp.semiring.NAME``).

    With ``mask=M``: C<M> = A ⊕.⊗ B, only the entries where M's value is true (or, with
    ``structure=True``, where M has an entry; ``complement=True``: where it does not) are
    computed, by SuiteSparse's masked product. The result has no entries outside the mask
    (as a fresh GraphBLAS output; to merge into an existing value use ``update``)."""
    sr = named(algebra.get_semiring, semiring, span) if not isinstance(semiring, Span) else semiring
    extra, mattrs = mask_args(mask, complement, structure)
    return Expr(bool_mask(make(MXM.op, (node_of(a), node_of(b), *extra), (("semiring", sr), *mattrs),
                               span=span_or_caller(span))))


@spelling(file=(("a", EXPR), ("v", EXPR), ("semiring", SEMIRING), *MASKED))
def mxv(a: Expr, v: Expr, semiring: SemiringLike = "plus_times", *, mask: Expr | None = None,
        complement: bool = False, structure: bool = False, span: Span | None = None) -> Expr:
    """A ⊕.⊗ v for an n x 1 column vector v (masks as in ``mxm``)."""
    vector_check(v, "column", span)
    return mxm(a, v, semiring, mask=mask, complement=complement, structure=structure, span=span_or_caller(span))


@spelling(file=(("u", EXPR), ("a", EXPR), ("semiring", SEMIRING), *MASKED))
def vxm(u: Expr, a: Expr, semiring: SemiringLike = "plus_times", *, mask: Expr | None = None,
        complement: bool = False, structure: bool = False, span: Span | None = None) -> Expr:
    """u ⊕.⊗ A: for a vector u (``dp.vector``), the vector (uᵀ A)ᵀ; for a 1 x n row u, a 1 x m row."""
    span = span_or_caller(span)
    if node_of(u).type.form == "vector":
        if mask is not None:
            mask = transpose(mask, span=span)
        row = mxm(transpose(u, span=span), a, semiring, mask=mask, complement=complement, structure=structure,
                  span=span)
        return as_vector(transpose(row, span=span), span=span)
    vector_check(u, "row", span)
    return mxm(u, a, semiring, mask=mask, complement=complement, structure=structure, span=span)
