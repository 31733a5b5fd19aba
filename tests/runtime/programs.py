"""Random valid programs for the distributed fuzz test: a seeded generator over the ops of the
embedded DSL, each program paired with its expected results from the dense-numpy oracle of
tests/reference/golden (written from the GraphBLAS contract, not from dspla).

A program declares a few inputs over the dims n and m (sparse and dense; float64, float32, int64 and
bool; of awkward sizes: 0, 1, 2, 3 and a few more), then applies random ops to values it has already made
(products over semirings, element-wise unions and intersections, apply, select, reduce, transpose,
masks, softmax, nvals, cast, full; extract, kronecker, update with accumulator, mask and replace,
ewise_union, apply_index, a scalar assign; a traversal's levels, masked by what it has seen), and
outputs some of them. Values are small and exact (floats
are multiples of 1/4, ints in [-4, 4]) so integer results never overflow and float results agree
to rounding. An op the oracle says does not apply to its operands' dtypes, or that dspla refuses
to build, is not used."""
from __future__ import annotations

import numpy as np

import dspla as dp
from dspla.errors import DsplaError
from tests.reference.golden import oracle
from tests.reference.golden.gen import random_mat, to_input
from tests.reference.golden.oracle import OracleDomainError

SIZES = (0, 1, 1, 2, 3, 3, 5, 8)
SEMIRINGS = ("plus_times", "plus_second", "plus_first", "plus_pair", "plus_min", "min_plus", "max_plus",
             "min_times", "max_times", "min_second", "max_second", "min_first", "max_first", "min_max",
             "max_min", "lor_land", "land_lor")
EWISE = ("plus", "minus", "times", "min", "max", "first", "second", "div", "eq", "lt", "ge", "pair")
UNARY = ("relu", "abs", "neg", "exp", "sigmoid", "tanh", "sign", "square", "one", "identity", "step", "minv")
SELECT = (("tril", 0), ("triu", 1), ("diag", 0), ("offdiag", 0), ("nonzero", 0), (">", 0), ("<=", 0.5),
          ("!=", 1))
MONOIDS = ("plus", "min", "max", "times", "lor")
GRAPHBLAS = ("extract", "extract", "kron", "update", "union", "index", "assign", "frontier")


class Program:
    """outputs: name -> Expr; declared: the inputs' Exprs (some may be used by no output);
    inputs: name -> the value passed; expected: name -> oracle Mat."""

    def __init__(self, seed: int, outputs: dict, declared: list, inputs: dict, expected: dict, text: list[str],
                 wraps: bool = False):
        self.seed, self.outputs, self.declared, self.inputs = seed, outputs, declared, inputs
        self.expected, self.text = expected, text
        self.wraps = wraps   # (big programs: the output's true value leaves int64; expected is empty)

    def function(self):
        return dp.function(outputs=self.outputs, inputs=self.declared)

    @property
    def tol(self) -> float:
        """How close its float results must be: a value computed in float32 anywhere upstream has
        its last bits moved by a sum's order."""
        return 1e-5 if any(getattr(v, "dtype", None) == np.float32 for v in self.inputs.values()) else 1e-9

    def __repr__(self) -> str:
        return f"program {self.seed}:\n  " + "\n  ".join(self.text)


def _declare(rng, name: str, shape: tuple, sizes: dict, kind: str, dtype: str, eager: bool, scale: int = 0):
    concrete = tuple(sizes[d] if isinstance(d, str) else d for d in shape)
    density = "full" if kind == "dense" else str(rng.choice(["sparse", "half", "empty", "sparse"]))
    X = random_mat(rng, concrete, dtype, density)
    if scale and X.dtype == np.int64:
        X = oracle.Mat(X.values << np.int64(scale), X.present)
    value = to_input(X, kind)
    if eager:   # (the value itself: every step then runs at once)
        return dp.array(value, name), X, value
    e = dp.sparse(name, shape, dtype=dtype) if kind == "sparse" else dp.dense(name, shape, dtype=dtype)
    return e, X, value


def _inputs(rng, sizes: dict, eager: bool = False, scale: int = 0):
    """Declared inputs: (pool of (name, Expr or eager value, Mat), inputs passed); int64 values
    times 2^scale."""
    pool, given = [], {}
    specs = [("A", ("n", "n"), "sparse"), ("B", ("n", "m"), "sparse"), ("X", ("n", "f"), "dense"),
             ("Y", ("m", "f"), "dense"), ("v", ("n", 1), "dense"), ("S", ("m", "m"), "sparse")]
    chosen = [s for s in specs if rng.random() < 0.55] or [specs[int(rng.integers(len(specs)))]]
    for name, shape, kind in chosen:
        u = rng.random() * (0.4 if scale else 1.0)   # (big programs: mostly int64)
        dtype = "int64" if u < 0.3 else "bool" if u < 0.38 else "float32" if u < 0.48 else "float64"
        e, X, value = _declare(rng, name, shape, sizes, kind, dtype, eager, scale)
        pool.append((name, e, X))
        given[name] = value
    return pool, given


def _binary_pick(rng, pool, fits):
    pairs = [(a, b) for a in pool for b in pool if fits(a[1], b[1])]
    return pairs[int(rng.integers(len(pairs)))] if pairs else None


def _bcasts(a, b) -> bool:
    return all(x == y or y == 1 or x == 1 for x, y in zip(a.shape, b.shape))


def _step(rng, pool, k: int):
    """One random op on values of ``pool``: (text, Expr, oracle Mat) or None."""
    what = str(rng.choice(["mxm", "mxm", "masked", "ewise_add", "ewise_mult", "apply", "bind", "select", "reduce",
                           "transpose", "mask", "softmax", "nvals", "cast", "full", "arith", "loop", *GRAPHBLAS]))
    one = pool[int(rng.integers(len(pool)))]
    name, x, X = one
    if what in GRAPHBLAS:
        return _graphblas_step(rng, pool, what, one)
    if what == "mxm":
        pick = _binary_pick(rng, pool, lambda a, b: a.shape[1] == b.shape[0])
        if pick is None:
            return None
        (na, a, A), (nb, b, B) = pick
        s = str(rng.choice(SEMIRINGS))
        monoid, mult = s.split("_", 1)
        return f"mxm({na}, {nb}, {s})", lambda: dp.mxm(a, b, s), lambda: oracle.mxm(A, B, monoid, mult)
    if what == "masked":   # C<M> = A ⊕.⊗ B
        pick = _binary_pick(rng, pool, lambda a, b: a.shape[1] == b.shape[0])
        if pick is None:
            return None
        (na, a, A), (nb, b, B) = pick
        masks = [(n, e, X) for n, e, X in pool if e.shape == (a.shape[0], b.shape[1])]
        if not masks:
            return None
        nm, m, M = masks[int(rng.integers(len(masks)))]
        s = str(rng.choice(SEMIRINGS))
        monoid, mult = s.split("_", 1)
        comp, struct = bool(rng.random() < 0.4), bool(rng.random() < 0.5)
        return (f"mxm({na}, {nb}, {s}, mask={nm}, complement={comp}, structure={struct})",
                lambda: dp.mxm(a, b, s, mask=m, complement=comp, structure=struct),
                lambda: oracle.mask(oracle.mxm(A, B, monoid, mult, oracle.holds(M, comp, struct)), M, comp, struct))
    if what == "loop":   # k iterations of x = x op (A ⊕.⊗ x), A square
        pick = _binary_pick(rng, pool, lambda a, b: a.shape[0] == a.shape[1] == b.shape[0])
        if pick is None:
            return None
        (na, a, A), (nb, b, B) = pick
        s = str(rng.choice(["min_plus", "max_plus", "plus_times", "min_first", "max_second", "plus_second"]))
        monoid, mult = s.split("_", 1)
        op = str(rng.choice(["min", "max", "plus", "first", "second"]))
        k = int(rng.integers(0, 4))

        def build():
            return dp.while_loop(lambda x: dp.nvals(x) >= 0, lambda x: (dp.ewise_add(x, dp.mxm(a, x, s), op),),
                                 (b,), k)[0]

        def want():
            X = B
            for _ in range(k):
                X = oracle.ewise_add(X, oracle.mxm(A, X, monoid, mult), op)
                if X.dtype != B.dtype:
                    raise OracleDomainError("the loop changes the carried dtype")
            return X
        return f"loop {k} times: {nb} = ewise_add({nb}, mxm({na}, {nb}, {s}), {op})", build, want
    if what in ("ewise_add", "ewise_mult"):
        pick = _binary_pick(rng, pool, _bcasts)
        if pick is None:
            return None
        (na, a, A), (nb, b, B) = pick
        op = str(rng.choice(EWISE))
        fn = getattr(dp, what)
        ofn = oracle.ewise_add if what == "ewise_add" else oracle.ewise_mult
        return f"{what}({na}, {nb}, {op})", lambda: fn(a, b, op), lambda: ofn(A, B, op)
    if what == "arith":   # the operators: X + X, X - Y, X * Y
        pick = _binary_pick(rng, pool, lambda a, b: a.shape == b.shape)
        (na, a, A), (nb, b, B) = pick
        op = str(rng.choice(["+", "-", "*"]))
        build = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b}[op]
        want = {"+": lambda: oracle.ewise_add(A, B, "plus"), "-": lambda: oracle.subtract(A, B),
                "*": lambda: oracle.ewise_mult(A, B, "times")}[op]
        return f"{na} {op} {nb}", build, want
    if what == "apply":
        op = str(rng.choice(UNARY))
        return f"apply({name}, {op})", lambda: dp.apply(x, op), lambda: oracle.apply(X, op)
    if what == "bind":
        op = str(rng.choice(["plus", "times", "minus", "max", "min", "gt"]))
        s = int(rng.integers(-2, 3)) if rng.random() < 0.5 else float(rng.integers(-4, 5)) / 4
        side = "left" if rng.random() < 0.5 else "right"
        return (f"apply({name}, {op}, {side}={s})", lambda: dp.apply(x, op, **{side: s}),
                lambda: oracle.apply_bind(X, op, s, side))
    if what == "select":
        op, thunk = SELECT[int(rng.integers(len(SELECT)))]
        return f"select({name}, {op!r}, {thunk})", lambda: dp.select(x, op, thunk), lambda: oracle.select(X, op, thunk)
    if what == "reduce":
        m = str(rng.choice(MONOIDS))
        axis = str(rng.choice(["rows", "cols", "all"]))
        return f"reduce({name}, {m}, {axis})", lambda: dp.reduce(x, m, axis), lambda: oracle.reduce(X, m, axis)
    if what == "transpose":
        return f"{name}.T", lambda: x.T, lambda: oracle.transpose(X)
    if what == "mask":
        pick = _binary_pick(rng, pool, lambda a, b: a.shape == b.shape)
        (na, a, A), (nb, b, B) = pick
        comp, struct = bool(rng.random() < 0.4), bool(rng.random() < 0.5)
        return (f"mask({na}, {nb}, complement={comp}, structure={struct})",
                lambda: dp.mask(a, b, complement=comp, structure=struct),
                lambda: oracle.mask(A, B, comp, struct))
    if what == "softmax":
        if rng.random() < 0.5:
            return f"softmax({name})", lambda: dp.softmax(x), lambda: oracle.softmax(X)
        return f"log_softmax({name})", lambda: dp.log_softmax(x), lambda: oracle.log_softmax(X)
    if what == "nvals":
        return f"nvals({name})", lambda: dp.nvals(x), lambda: oracle.nvals(X)
    if what == "cast":
        dt = str(rng.choice(["float64", "int64", "bool"]))
        return f"cast({name}, {dt})", lambda: dp.cast(x, dt), lambda: oracle.cast_mat(X, dt)
    value = float(rng.integers(-4, 5)) / 4 if X.dtype.kind == "f" else int(rng.integers(-3, 4))
    return f"full({name}, {value})", lambda: dp.full(x, value), \
        lambda: oracle.Mat(np.full(X.shape, value, X.dtype), np.ones(X.shape, bool))


def _indices(rng, size: int, repeats: bool) -> list[int]:
    """A short index list into a dim of ``size`` (in any order; repeated only where allowed)."""
    if size == 0:
        return []
    if repeats:
        return [int(i) for i in rng.integers(0, size, size=int(rng.integers(1, 4)))]
    return [int(i) for i in rng.permutation(size)[:int(rng.integers(1, min(size, 3) + 1))]]


def _known(e) -> bool:
    return all(isinstance(d, int) for d in e.shape)


def _graphblas_step(rng, pool, what: str, one):
    """extract, kronecker (of values whose sizes are known: extracts), update, ewise_union,
    apply_index and a scalar assign."""
    name, x, X = one
    numeric = [(n, e, M) for n, e, M in pool if M.dtype.kind in "if"]
    if what == "extract":
        rows = None if rng.random() < 0.25 else _indices(rng, X.shape[0], True)
        cols = None if rows is not None and rng.random() < 0.3 else _indices(rng, X.shape[1], True)
        return (f"extract({name}, {rows}, {cols})", lambda: dp.extract(x, rows, cols),
                lambda: oracle.extract(X, rows, cols))
    if what == "index":
        op, thunk = str(rng.choice(["rowindex", "colindex", "diagindex"])), int(rng.integers(-2, 3))
        return (f"apply_index({name}, {op}, {thunk})", lambda: dp.apply_index(x, op, thunk),
                lambda: oracle.apply_index(X, op, thunk))
    if what == "kron":
        pick = _binary_pick(rng, [p for p in numeric if _known(p[1])], lambda a, b: True)
        if pick is None:
            return None
        (na, a, A), (nb, b, B) = pick
        op = str(rng.choice(["times", "plus", "min", "first", "second"]))
        return f"kronecker({na}, {nb}, {op})", lambda: dp.kronecker(a, b, op), lambda: oracle.kronecker(A, B, op)
    pick = _binary_pick(rng, numeric, lambda a, b: a.shape == b.shape and a.dtype == b.dtype)
    if what == "union" and pick is not None:
        (na, a, A), (nb, b, B) = pick
        op = str(rng.choice(["plus", "minus", "times", "min", "max", "first", "second"]))
        left, right = int(rng.integers(-1, 3)), int(rng.integers(-1, 3))
        return (f"ewise_union({na}, {nb}, {op}, {left}, {right})", lambda: dp.ewise_union(a, b, op, left, right),
                lambda: oracle.ewise_union(A, B, op, left, right))
    if what == "update" and pick is not None:
        (nc, c, C), (nt, t, T) = pick
        accum = [None, "plus", "min", "max", "first", "second"][int(rng.integers(6))]
        masks = [(n, e, M) for n, e, M in pool if e.shape == c.shape] if rng.random() < 0.7 else []
        nm, m, M = masks[int(rng.integers(len(masks)))] if masks else (None, None, None)
        comp, struct, repl = (bool(rng.random() < p) for p in (0.3, 0.5, 0.4))
        kw = {"accum": accum, "mask": m, "complement": comp and m is not None, "structure": struct,
              "replace": repl}
        return (f"update({nc}, {nt}, accum={accum}, mask={nm}, complement={kw['complement']}, structure={struct}, "
                f"replace={repl})", lambda: dp.update(c, t, **kw),
                lambda: oracle.update(C, T, accum, M, kw["complement"], struct, repl))
    if what == "frontier":   # k levels of a traversal: f = A ⊕.⊗ f outside v's pattern, then v<f> = f
        pick = _binary_pick(rng, pool, lambda a, b: a.shape[0] == a.shape[1] == b.shape[0])
        if pick is None:
            return None
        (na, a, A), (nf, f, F) = pick
        seen = [(n, e, M) for n, e, M in pool if e.shape == f.shape]
        nv, v, V = seen[int(rng.integers(len(seen)))]
        s = str(rng.choice(["min_plus", "plus_times", "max_second", "lor_land", "min_first", "plus_pair"]))
        monoid, mult = s.split("_", 1)
        k = int(rng.integers(0, 4))

        def step(q, seen):
            q = dp.mxm(a, q, s, mask=seen, complement=True, structure=True)
            return q, dp.update(seen, q, mask=q, structure=True)

        def want():
            Q, S = F, V
            for _ in range(k):
                Q = oracle.mask(oracle.mxm(A, Q, monoid, mult, oracle.holds(S, True, True)), S, True, True)
                if Q.dtype != F.dtype:
                    raise OracleDomainError("the loop changes the carried dtype")
                S = oracle.update(S, Q, None, Q, structure=True)
            return S
        return (f"loop {k} times: {nf} = mxm({na}, {nf}, {s}, mask={nv}, complement, structure); "
                f"{nv} = update({nv}, {nf}, mask={nf}, structure)",
                lambda: dp.while_loop(lambda q, seen: dp.nvals(q) >= 0, step, (f, v), k)[1], want)
    if what == "assign" and X.dtype.kind in "if" and X.shape[0] and X.shape[1]:
        rows, cols = _indices(rng, X.shape[0], False), _indices(rng, X.shape[1], False)
        value = float(rng.integers(-4, 5)) / 4 if X.dtype.kind == "f" else int(rng.integers(-3, 4))
        accum = [None, "plus", "max"][int(rng.integers(3))]
        return (f"assign({name}, {value}, {rows}, {cols}, accum={accum})",
                lambda: dp.assign(x, value, rows, cols, accum=accum),
                lambda: oracle.assign_scalar(X, value, rows, cols, accum))
    return None


def generate(seed: int, steps: tuple[int, int] = (1, 7), eager: bool = False, big: bool = False) -> Program:
    """The seed's program; ``eager``: its inputs are values (``dp.array``), so each step runs at
    once and the outputs are values (the picks then see sizes where a program sees dims).
    ``big``: mostly int64 inputs, times 2^48..2^61, and a step whose true value leaves int64 (the
    oracle's OracleOverflow) ends the program as its one output (``wraps``)."""
    rng = np.random.default_rng(seed)
    scale = int(rng.integers(48, 62)) if big else 0
    sizes = {"n": int(rng.choice(SIZES)), "m": int(rng.choice(SIZES)), "f": int(rng.choice((0, 1, 2, 3, 4)))}
    pool, given = _inputs(rng, sizes, eager, scale)
    text = [f"sizes {sizes}" + (f", int64 inputs times 2^{scale}" if big else "")] + \
        [f"input {n}: {f'{e.shape} {e.dtype}' if eager else e.type} ({X.present.sum()} present)" for n, e, X in pool]
    made, declared = [], [e for _, e, _ in pool]
    for k in range(int(rng.integers(*steps))):
        step = _step(rng, pool, k)
        if step is None:
            continue
        what, build, want = step
        try:
            expected = want()
        except oracle.OracleOverflow:
            if not big:
                continue
            expected = None   # (its true value leaves int64: it ends a big program)
        except (OracleDomainError, ValueError):
            continue
        try:
            e = build()
        except (DsplaError, TypeError):
            continue
        if expected is None:
            text += [f"t{k} = {what}  (leaves int64)", f"output t{k}"]
            return Program(seed, {f"t{k}": e}, declared, given, {}, text, wraps=True)
        if not big and expected.dtype.kind == "i" and expected.present.any() and \
                np.abs(expected.values).max() > 1 << 40:
            continue   # (kept far from int64's limits: big programs test the overflow check)
        name = f"t{k}"
        pool.append((name, e, expected))
        made.append(name)
        text.append(f"{name} = {what}")
    outs = made[-1:] + [m for m in made[:-1] if rng.random() < 0.3] if made else [pool[0][0]]
    by_name = {n: (e, X) for n, e, X in pool}
    text.append(f"output {', '.join(outs)}")
    return Program(seed, {o: by_name[o][0] for o in outs}, declared, given,
                   {o: by_name[o][1] for o in outs}, text)
