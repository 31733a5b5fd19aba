"""The expression-file frontend: parse a .dspla file with the lark grammar in lang/ and build
the same IR the embedded DSL builds, by calling the same functions.

Nothing in a file is evaluated as Python: names resolve against the tables below and the
file's own declarations only.
"""
from __future__ import annotations

import math
import os
from functools import lru_cache
from importlib import resources

import lark
import numpy as np

from .. import algebra
from ..errors import (
    DimensionMismatch,
    DsplaError,
    DsplaSyntaxError,
    Span,
    UnknownNameError,
)
from ..ir import Node, Op, Program, make
from ..ir.check import check_loop_bound, input_dims
from ..ir.types import MAX_DIM
from . import dsl, tables
from .dsl import Expr

# Parameter kinds: how a call argument is read. 'expr' evaluates an expression; the others
# read a bare name (or a string) from an algebra table, or a literal.
E, SR, BIN, MON, UN, SEL, SCAL, DT, AX, BOOL, DIM = ("expr", "semiring", "binary operator", "monoid",
                                                    "unary operator", "select predicate", "scalar", "dtype",
                                                    "axis", "bool", "dim")
_UNARY_FNS = ("relu", "relu_grad", "sigmoid", "tanh", "exp", "log", "abs", "neg", "sqrt", "step", "transpose",
              "softmax", "log_softmax")
# name -> (dsl function, [(param, kind, default)]); default _REQ means required
_REQ = object()
_MASKED = [("mask", E, None), ("complement", BOOL, False), ("structure", BOOL, False)]
FUNCTIONS = {
    "mxm": (dsl.mxm, [("a", E, _REQ), ("b", E, _REQ), ("semiring", SR, "plus_times"), *_MASKED]),
    "mxv": (dsl.mxv, [("a", E, _REQ), ("v", E, _REQ), ("semiring", SR, "plus_times"), *_MASKED]),
    "vxm": (dsl.vxm, [("u", E, _REQ), ("a", E, _REQ), ("semiring", SR, "plus_times"), *_MASKED]),
    "update": (dsl.update, [("c", E, _REQ), ("t", E, _REQ), ("accum", BIN, None), *_MASKED,
                            ("replace", BOOL, False)]),
    "ewise_add": (dsl.ewise_add, [("a", E, _REQ), ("b", E, _REQ), ("op", BIN, "plus")]),
    "ewise_mult": (dsl.ewise_mult, [("a", E, _REQ), ("b", E, _REQ), ("op", BIN, "times")]),
    "apply": (dsl.apply, [("x", E, _REQ), ("op", "op", _REQ), ("left", SCAL, None), ("right", SCAL, None)]),
    "reduce": (dsl.reduce, [("x", E, _REQ), ("monoid", MON, "plus"), ("axis", AX, "rows")]),
    "reduce_rows": (dsl.reduce_rows, [("x", E, _REQ), ("monoid", MON, "plus")]),
    "reduce_cols": (dsl.reduce_cols, [("x", E, _REQ), ("monoid", MON, "plus")]),
    "reduce_all": (dsl.reduce_all, [("x", E, _REQ), ("monoid", MON, "plus")]),
    "nvals": (dsl.nvals, [("x", E, _REQ)]),
    "select": (dsl.select, [("x", E, _REQ), ("op", SEL, _REQ), ("thunk", SCAL, 0)]),
    "mask": (dsl.mask, [("x", E, _REQ), ("m", E, _REQ), ("complement", BOOL, False), ("structure", BOOL, False)]),
    "cast": (dsl.cast, [("x", E, _REQ), ("dtype", DT, _REQ)]),
    "eye": (dsl.eye, [("n", DIM, _REQ), ("dtype", DT, "float64")]),
    "full": (dsl.full, [("like", E, _REQ), ("value", SCAL, _REQ), ("dtype", DT, None)]),
    "dropout_mask": (dsl.dropout_mask, [("x", E, _REQ), ("p", SCAL, _REQ), ("seed", E, _REQ)]),
}
for _f in _UNARY_FNS:
    FUNCTIONS[_f] = ({"abs": dsl.abs_}.get(_f) or getattr(dsl, _f), [("x", E, _REQ)])

COMPARISONS = ("gt", "ge", "lt", "le", "eq", "ne")
MAX_LOOP_DEPTH = 64   # a loop body is built by a nested call: bounded, with a clear error past it

_TABLES = {SR: algebra.SEMIRINGS, BIN: algebra.BINARY, MON: algebra.MONOIDS, UN: algebra.UNARY,
           SEL: {**algebra.SELECT, **{k: None for k in algebra.SELECT_ALIASES}}}


@lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    return tables.parser(resources.files("dspla.grammar").joinpath("dspla.lark").read_text())


_TOKEN_TEXT = {"NAME": "a name", "NUMBER": "a number", "INT": "an integer", "STRING": "a string",
               "_NEWLINE": "end of line", "$END": "end of file", "KIND": "sparse/dense/vector",
               "DTYPE": "a dtype", "ROLE": "input/param", "BOOL": "true/false"}


def _expected(terms) -> str:
    """Readable names for the terminals lark expected: literal text for punctuation."""
    shown = set()
    for t in terms:
        if t in _TOKEN_TEXT:
            shown.add(_TOKEN_TEXT[t])
            continue
        try:
            pat = _parser().get_terminal(t).pattern
            shown.add(repr(pat.value) if pat.type == "str" else t.lower())
        except KeyError:
            shown.add(t.lower())
    return ", ".join(sorted(shown))


class _Builder:
    def __init__(self, text: str, filename: str):
        self.lines = text.splitlines()
        self.file = filename
        self.env: dict[str, Expr] = {}      # name -> current value
        self.decls: list[Node] = []
        self.outputs: list[tuple[str, Node]] = []
        self.loops = 0                      # how deep in loop bodies the builder is
        self.semirings: dict = {}           # the file's own semirings (`semiring NAME = monoid.op`)
        self.bounds: list = []              # (dim name, where) of each `max NAME` loop bound

    def span(self, meta_or_tok) -> Span:
        line = getattr(meta_or_tok, "line", 1)
        col = getattr(meta_or_tok, "column", 1)
        end_line = getattr(meta_or_tok, "end_line", line)
        end = getattr(meta_or_tok, "end_column", None) if end_line == line else None
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else None
        return Span(self.file, line, col, end, text)

    # ----------------------------------------------------------------- statements
    def program(self, tree: lark.Tree) -> Program:
        for st in tree.children:
            getattr(self, "st_" + st.data)(st)
        if not self.outputs:
            raise DsplaError("the program has no 'output' statement", Span(self.file, max(1, len(self.lines)), 1))
        dims = input_dims(self.decls)   # (an input declared after a loop may give its bound)
        for name, span in self.bounds:
            check_loop_bound(name, dims, span)
        return Program(tuple(self.outputs), tuple(self.decls), self.file)

    def st_decl(self, t):
        role, name, kind = t.children[0], t.children[1], t.children[2]
        rest = t.children[3:]
        dtype = "float64"
        if rest and getattr(rest[-1], "type", None) == "DTYPE":
            dtype = str(rest[-1])
            rest = rest[:-1]
        dims = [self.number(d) if d.type == "INT" else str(d) for d in rest]
        span = self.span(t.meta)
        if str(name) in self.env:
            raise DsplaError(f"{name!s} is already defined", self.span(name))
        if str(kind) == "vector":
            if len(dims) != 1:
                raise DimensionMismatch(f"vector[...] takes one dim, got {len(dims)}", span)
            kind, dims = "dense", [dims[0], 1]
        elif len(dims) != 2:
            raise DimensionMismatch(f"{kind}[...] takes two dims (rows, columns), got {len(dims)}", span)
        e = dsl.declare(str(name), str(kind), tuple(dims), dtype, role=str(role), span=span)
        self.env[str(name)] = e
        self.decls.append(e.node)

    def st_semiring_decl(self, t):
        """`semiring NAME = MONOID.OP`: a semiring of this file only (no global registration, so
        two files may each have their own `tropical`), from names in the algebra tables."""
        name, mon, op = t.children
        if str(name) in algebra.SEMIRINGS or str(name) in self.semirings:
            raise DsplaError(f"semiring {name!s} is already defined; choose another name", self.span(name))
        if str(mon) not in algebra.MONOIDS:
            raise UnknownNameError("monoid", str(mon), algebra.MONOIDS, self.span(mon))
        if str(op) not in algebra.BINARY:
            raise UnknownNameError("binary operator", str(op), algebra.BINARY, self.span(op))
        self.semirings[str(name)] = algebra.Semiring(str(name), algebra.MONOIDS[str(mon)], algebra.BINARY[str(op)],
                                                     builtin=False)

    def st_assign(self, t):
        name, expr = t.children
        if not self.loops and str(name) in self.env and any(d.attr("name") == str(name) for d in self.decls):
            raise DsplaError(f"cannot assign to {name!s}: it is an input (a loop may carry it on, as its "
                             "starting value)", self.span(name))
        value = self.expr(expr)
        self.env[str(name)] = Expr(value.node.replace(name=str(name)))

    def st_multi_assign(self, t):
        *names, expr = t.children
        span = self.span(t.meta)
        if not (isinstance(expr, lark.Tree) and expr.data == "call" and str(expr.children[0]) == "grad"):
            raise DsplaError(f"only grad(...) gives several values; assign other expressions to one name "
                             f"({names[0]!s} = ...)", span)
        seen = set()
        for tok in names:
            if str(tok) in seen:
                raise DsplaError(f"{tok!s} is assigned twice", self.span(tok))
            seen.add(str(tok))
            if not self.loops and any(d.attr("name") == str(tok) for d in self.decls):
                raise DsplaError(f"cannot assign to {tok!s}: it is an input", self.span(tok))
        values = self.grad_call(expr, self.span(expr.meta))
        if len(values) != len(names):
            raise DsplaError(f"grad(...) gives {len(values)} gradients (one per parameter) for {len(names)} names",
                             span)
        for tok, v in zip(names, values):
            self.env[str(tok)] = Expr(v.node.replace(name=str(tok)))

    def grad_call(self, t, span) -> list:
        """grad(loss, W1, W2, ...): the gradients of a 1 x 1 loss with respect to parameters, by
        reverse mode over the program built so far (docs/autodiff.md)."""
        args = [c for c in t.children[1:] if c is not None]
        if any(isinstance(a, lark.Tree) and a.data == "kwarg" for a in args):
            raise DsplaError("grad(loss, W1, W2, ...) takes the loss and parameter names, no keywords", span)
        if len(args) < 2:
            raise DsplaError("grad(loss, W1, W2, ...) needs the loss and at least one parameter", span)
        if self.loops:
            raise DsplaError("grad(...) is not allowed inside a loop", span)
        params = []
        for a in args[1:]:
            if not (isinstance(a, lark.Tree) and a.data == "var"):
                raise DsplaError("grad(): differentiate with respect to a parameter, given by its name",
                                 self.span(a.meta))
            tok = a.children[0]
            d = next((d for d in self.decls if d.attr("name") == str(tok)), None)
            if d is None:
                if str(tok) not in self.env:
                    self._unknown_var(tok)
                raise DsplaError(f"grad(): {tok!s} is not an input; differentiate with respect to a declared "
                                 "parameter (param W : dense[...])", self.span(tok))
            params.append(Expr(d))
        loss = self.expr(args[0])
        return list(dsl.grad(loss, params, span=span))

    def st_while_stmt(self, t):
        cond_tree, bound, *stmts = t.children
        span = self.span(t.meta)
        max_iter = self.number(bound) if bound.type == "INT" else str(bound)
        if bound.type != "INT":
            self.bounds.append((max_iter, self.span(bound)))
        if self.loops >= MAX_LOOP_DEPTH:
            raise DsplaError(f"loops nested more than {MAX_LOOP_DEPTH} deep", span)
        assigned = []
        for st in _assignments(stmts):
            if str(st.children[0]) not in assigned:
                assigned.append(str(st.children[0]))
        carried = [nm for nm in assigned if nm in self.env]
        if not carried:
            raise DsplaError("the loop changes nothing defined before it: assign to a name given a value "
                             "before the loop (its value then carries from one iteration to the next)", span)
        outer = dict(self.env)

        def enter(holders):
            self.env = {**outer, **{nm: Expr(h) for nm, h in zip(carried, holders)}}

        def cond_fn(*holders):
            enter(holders)
            return self.expr(cond_tree)

        def body_fn(*holders):
            enter(holders)
            for st in stmts:
                if st.data == "output":
                    raise DsplaError("'output' belongs after the loop, not in it", self.span(st.meta))
                if st.data == "decl":
                    raise DsplaError("declarations belong before the loop", self.span(st.meta))
                getattr(self, "st_" + st.data)(st)
            return [self.env[nm].node for nm in carried]

        self.loops += 1
        try:
            node = dsl.loop_node(carried, [outer[nm].node for nm in carried], cond_fn, body_fn, max_iter, span)
        finally:
            self.env = outer   # names first assigned in the body stay inside it
            self.loops -= 1
        for i, nm in enumerate(carried):
            self.env[nm] = Expr(make(Op.ITEM, (node,), (("index", i),), span=span, name=nm))

    def st_output(self, t):
        for tok in t.children:
            if str(tok) not in self.env:
                self._unknown_var(tok)
            if any(k == str(tok) for k, _ in self.outputs):
                raise DsplaError(f"{tok!s} is output twice", self.span(tok))
            self.outputs.append((str(tok), self.env[str(tok)].node))

    # ---------------------------------------------------------------- expressions
    def _unknown_var(self, tok):
        raise UnknownNameError("variable", str(tok), self.env, self.span(tok))

    def expr(self, root) -> Expr:
        """Evaluate an expression tree without recursion (a 10,000-term sum is as fine as a short
        one): every subtree that is an expression is built after the ones it uses."""
        vals: dict[int, Expr] = {}
        stack = [(root, False)]
        while stack:
            t, ready = stack.pop()
            if id(t) in vals:
                continue
            if ready:
                vals[id(t)] = self._build(t, vals)
                continue
            stack.append((t, True))
            stack.extend((c, False) for c in reversed(self._needs(t)) if id(c) not in vals)
        return vals[id(root)]

    def _needs(self, t) -> list:
        """The subtrees of ``t`` to evaluate as expressions before ``t`` itself (checking first
        what can be checked without them, so errors come in reading order)."""
        if isinstance(t, lark.Token):
            raise DsplaError(f"expected an expression, got {t!s}", self.span(t))
        kind = t.data
        if kind in ("neg", "transpose"):
            return [t.children[0]]
        if kind in ("add", "sub", "mul", "div", "matmul", "pow") or kind in COMPARISONS:
            return [c for c in t.children if not _constant(c)]
        if kind == "call" and str(t.children[0]) == "grad":
            return []   # grad builds its own arguments
        if kind == "call":
            _, _, bound = self._bind_call(t, self.span(t.meta))
            return [tree for pkind, tree in bound.values()
                    if pkind == E or pkind == SCAL and not _constant(tree) and not _is_bool(tree)]
        return []

    def _build(self, t, vals) -> Expr:
        span = self.span(t.meta)
        kind = t.data
        if kind == "var":
            tok = t.children[0]
            if str(tok) not in self.env:
                self._unknown_var(tok)
            return self.env[str(tok)]
        if kind in ("number", "boolean", "string"):
            raise DsplaError(f"a {kind} literal is only allowed as an operand of an operator or a function "
                             "argument", span)
        if kind == "call" and str(t.children[0]) == "grad":
            values = self.grad_call(t, span)
            if len(values) != 1:
                raise DsplaError(f"grad(...) gives {len(values)} gradients: assign them to as many names "
                                 "(dW1, dW2 = grad(loss, W1, W2))", span)
            return values[0]
        if kind == "call":
            return self.call(t, span, vals)
        if kind == "neg":
            return dsl.apply(vals[id(t.children[0])], "neg", span=span)
        if kind == "transpose":
            return dsl.transpose(vals[id(t.children[0])], span=span)
        if kind in COMPARISONS:
            a, b = (self.operand(c, vals) for c in t.children)
            if not isinstance(a, Expr) and not isinstance(b, Expr):
                raise DsplaError("a comparison needs a matrix on at least one side", span)
            return dsl._compare(a, b, kind, span)
        if kind in ("add", "sub", "mul", "div", "matmul", "pow"):
            if _constant(t):
                raise DsplaError(f"numbers alone ({self.fold(t)!r} here) are only allowed as an operand of an operator "
                                 "or a function argument", span)
            a, b = (self.operand(c, vals) for c in t.children)
            if kind == "matmul":
                return dsl.mxm(self._need_expr(a, t.children[0]), self._need_expr(b, t.children[1]), "plus_times",
                               span=span)
            op = {"add": "plus", "sub": "minus", "mul": "times", "div": "div", "pow": "pow"}[kind]
            try:
                return dsl._arith(a, b, op, span)
            except TypeError as e:
                raise DsplaError(str(e), span) from None
        raise DsplaError(f"unsupported expression {kind}", span)

    def operand(self, t, vals):
        """An operator operand: a numeric literal, or arithmetic on literals only (folded here),
        stays a Python scalar (bound to the operator)."""
        if _constant(t):
            return self.fold(t)
        return vals[id(t)]

    def fold(self, t):
        """The value of arithmetic on numeric literals (``0.85 * 0.5``, ``1 / (2 + 1)``), as
        Python's arithmetic gives it (``1 / 2`` is 0.5; whole numbers stay whole under + - * and
        ** with an exponent of 0 or more), checked to fit in 64 bits. Floats follow IEEE: a
        division by zero gives inf or nan as it does on a matrix's entries. Iterative: such an
        operand may nest as deep as any expression."""
        done: dict[int, object] = {}
        stack = [(t, False)]
        while stack:
            x, expanded = stack.pop()
            lit = _literal(x)
            if lit is not None:
                done[id(x)] = self.number(*lit)
            elif not expanded:
                stack.append((x, True))
                stack.extend((c, False) for c in x.children)
            else:
                done[id(x)] = self._fold_one(x, [done[id(c)] for c in x.children])
        return done[id(t)]

    def _fold_one(self, t, args: list):
        span = self.span(t.meta)
        if t.data == "neg":
            return self._fits(-args[0], span)
        a, b = args
        whole = isinstance(a, int) and isinstance(b, int)
        if t.data == "div" or t.data == "pow" and not (whole and b >= 0) or not whole:
            x, y = np.float64(a), np.float64(b)
            with np.errstate(all="ignore"):
                v = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
                     "pow": np.power}[t.data](x, y)
            return float(v)
        if t.data == "pow" and b > 64 and abs(a) > 1:   # (2 ** 10**9 would be computed before the check)
            raise DsplaError(f"{a} ** {b} does not fit in 64 bits", span)
        v = {"add": a + b, "sub": a - b, "mul": a * b}[t.data] if t.data != "pow" else a ** b
        return self._fits(v, span)

    def _fits(self, v, span):
        if isinstance(v, int) and not -(1 << 63) <= v < (1 << 63):
            raise DsplaError(f"{v} does not fit in 64 bits", span)
        return v

    def number(self, tok, sign: int = 1):
        """A numeric literal, checked: integers must fit in 64 bits, floats in float64."""
        text, span = str(tok), self.span(tok)
        if text.isdigit():
            if len(text) > 19 or int(text) > MAX_DIM:
                raise DsplaError(f"integer literal {_short(text)} does not fit in 64 bits", span)
            return sign * int(text)
        value = float(text)
        if math.isinf(value):
            raise DsplaError(f"number {_short(text)} is beyond the range of float64 (about 1.8e308)", span)
        if value == 0.0 and any(ch in "123456789" for ch in text.lower().split("e")[0]):
            raise DsplaError(f"number {_short(text)} is too small for float64 (it would become 0)", span)
        return sign * value

    def _need_expr(self, v, tree):
        if not isinstance(v, Expr):
            raise DsplaError("@ needs matrices on both sides", self.span(tree.meta))
        return v

    def _bind_call(self, t, span):
        """(the DSL function, its parameter table, parameter -> (kind, argument tree)), checked."""
        fname = t.children[0]
        if str(fname) not in FUNCTIONS:
            raise UnknownNameError("function", str(fname), [*FUNCTIONS, "grad"], self.span(fname))
        fn, params = FUNCTIONS[str(fname)]
        args = [c for c in t.children[1:] if c is not None]
        pos = [a for a in args if not (isinstance(a, lark.Tree) and a.data == "kwarg")]
        kws = [a for a in args if isinstance(a, lark.Tree) and a.data == "kwarg"]
        if len(pos) > len(params):
            raise DsplaError(f"{fname}() takes at most {len(params)} arguments "
                             f"({', '.join(p for p, _, _ in params)}), got {len(pos)}", span)
        bound = {}
        for (pname, pkind, _), a in zip(params, pos):
            bound[pname] = (pkind, a)
        names = {p for p, _, _ in params}
        for kw in kws:
            key, val = kw.children
            if str(key) not in names:
                raise UnknownNameError("argument", str(key), names, self.span(key), context=f"of {fname}()")
            if str(key) in bound:
                raise DsplaError(f"{fname}() got {key!s} twice", self.span(key))
            bound[str(key)] = (dict((p, k) for p, k, _ in params)[str(key)], val)
        return fn, params, bound

    def call(self, t, span, vals):
        fname = t.children[0]
        fn, params, bound = self._bind_call(t, span)
        kwargs = {}
        for pname, pkind, default in params:
            if pname not in bound:
                if default is _REQ:
                    raise DsplaError(f"{fname}() is missing its argument {pname!r} "
                                     f"({fname}({', '.join(p for p, _, _ in params)}))", span)
                if default is not None:
                    kwargs[pname] = default
                continue
            kwargs[pname] = self.argument(pkind, bound[pname][1], str(fname), pname, vals)
        if str(fname) == "apply" and kwargs.get("left") is None and kwargs.get("right") is None:
            if str(kwargs["op"]) not in algebra.UNARY:
                raise UnknownNameError("unary operator", str(kwargs["op"]), algebra.UNARY,
                                       self.span(bound["op"][1].meta))
        elif str(fname) == "apply" and str(kwargs["op"]) not in algebra.BINARY:
            raise UnknownNameError("binary operator", str(kwargs["op"]), algebra.BINARY,
                                   self.span(bound["op"][1].meta))
        try:
            return fn(**kwargs, span=span)  # table params are the DSL functions' names
        except (TypeError, ValueError) as e:
            if isinstance(e, DsplaError):
                raise
            raise DsplaError(f"{fname}(): {e}", span) from None

    def argument(self, kind, tree, fname, pname, vals):
        if kind == E:
            return vals[id(tree)]
        word = self._word(tree)
        span = self.span(tree.meta) if isinstance(tree, lark.Tree) else self.span(tree)
        if kind == SR and word in self.semirings:
            return self.semirings[word]
        if kind in _TABLES or kind == "op":
            table = _TABLES.get(kind) or {**algebra.UNARY, **algebra.BINARY}
            if kind == SR:
                table = {**table, **self.semirings}
            if word is None:
                raise DsplaError(f"{fname}(): {pname} is a {kind if kind != 'op' else 'operator'} name such as "
                                 f"{', '.join(sorted(table)[:4])}", span)
            if word not in table and kind != "op":   # apply's op: unary or binary, checked by call()
                raise UnknownNameError(kind, word, table, span)
            return word
        if kind == DT:
            if word not in ("float64", "float32", "int64", "bool"):
                raise UnknownNameError("dtype", str(word), ["float64", "float32", "int64", "bool"], span)
            return word
        if kind == AX:
            if word not in ("rows", "cols", "all"):
                raise UnknownNameError("axis", str(word), ["rows", "cols", "all"], span)
            return word
        if kind == DIM:
            if isinstance(tree, lark.Tree) and tree.data == "number":
                text = str(tree.children[0])
                if not text.isdigit():
                    raise DsplaError(f"{fname}(): {pname} is a dimension: a name or a whole number, got {_short(text)}",
                                     span)
                return self.number(tree.children[0])
            if word is None or not word.isidentifier():
                raise DsplaError(f"{fname}(): {pname} is a dimension (a name or an integer)", span)
            return word
        if kind == BOOL:
            if _is_bool(tree):
                return str(tree.children[0]) == "true"
            raise DsplaError(f"{fname}(): {pname} is true or false", span)
        if kind == SCAL:
            if _is_bool(tree):
                return str(tree.children[0]) == "true"
            v = self.operand(tree, vals)
            if isinstance(v, Expr):
                raise DsplaError(f"{fname}(): {pname} is a number", span)
            return v
        raise AssertionError(kind)

    def _word(self, tree):
        if isinstance(tree, lark.Tree) and tree.data == "var":
            return str(tree.children[0])
        if isinstance(tree, lark.Tree) and tree.data == "string":
            text = str(tree.children[0])[1:-1]
            if "\\" in text:   # strings are names: nothing to escape, and nothing is evaluated
                raise DsplaError("a string holds a name (e.g. \"plus_times\"); backslash escapes are not "
                                 "allowed", self.span(tree.meta))
            return text
        return None


def _assignments(stmts):
    """The assignments of a loop body, nested loops' included (with a stack: nesting is bounded
    by MAX_LOOP_DEPTH, but no traversal here recurses)."""
    todo = list(reversed(stmts))
    while todo:
        st = todo.pop()
        if st.data == "assign":
            yield st
        elif st.data == "while_stmt":
            todo.extend(reversed(st.children[2:]))


_FOLDED = ("add", "sub", "mul", "div", "pow")


def _constant(t) -> bool:
    """Whether ``t`` is a numeric literal or arithmetic (+ - * / **, negation) on literals only."""
    stack = [t]
    while stack:
        x = stack.pop()
        if not isinstance(x, lark.Tree):
            return False
        if x.data == "number":
            continue
        if x.data not in _FOLDED and x.data != "neg":
            return False
        stack.extend(x.children)
    return True


def _literal(t):
    """(number token, sign) when ``t`` is a numeric literal or a negated one, else None."""
    if isinstance(t, lark.Tree) and t.data == "number":
        return t.children[0], 1
    if isinstance(t, lark.Tree) and t.data == "neg" and isinstance(t.children[0], lark.Tree) \
            and t.children[0].data == "number":
        return t.children[0].children[0], -1
    return None


def _is_bool(t) -> bool:
    return isinstance(t, lark.Tree) and t.data == "boolean"


def _short(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text)} characters)"


def parse(text: str, filename: str = "<string>") -> Program:
    """Parse and type-check a program; raises DsplaError subclasses with file:line:col."""
    try:
        tree = _parser().parse(text if text.endswith("\n") else text + "\n")
    except lark.UnexpectedCharacters as e:
        b = _Builder(text, filename)
        src = b.lines[e.line - 1] if e.line <= len(b.lines) else None
        raise DsplaSyntaxError(f"unexpected character {text[e.pos_in_stream]!r}; expected {_expected(e.allowed)}",
                               Span(filename, e.line, e.column, None, src)) from None
    except lark.UnexpectedToken as e:
        b = _Builder(text, filename)
        tok = e.token
        what = "end of file" if tok.type == "$END" else ("end of line" if tok.type == "_NEWLINE" else repr(str(tok)))
        line = tok.line if tok.line is not None else len(b.lines)
        col = tok.column if tok.column is not None else 1
        if tok.type == "_NEWLINE":
            line, col = tok.line, tok.column
        src = b.lines[line - 1] if 0 < line <= len(b.lines) else None
        expected = _expected(e.expected)
        if str(tok) == "{" and "'max'" in expected:
            raise DsplaSyntaxError("a loop needs its bound: while CONDITION max N { ... } (N an integer, or a dim "
                                   "such as n)", Span(filename, line, col, None, src)) from None
        raise DsplaSyntaxError(f"unexpected {what}; expected {expected}",
                               Span(filename, line, col, None, src)) from None
    except lark.UnexpectedEOF as e:
        raise DsplaSyntaxError(f"unexpected end of file; expected {_expected(e.expected)}",
                               Span(filename, len(text.splitlines()) or 1, 1)) from None
    return _Builder(text, filename).program(tree)


def max_program_bytes() -> int:
    """The largest program file read (DSPLA_MAX_PROGRAM_BYTES, default 16 MB): a program is
    text someone wrote; anything larger is a mistake such as ``dspla check /dev/zero``."""
    env = os.environ.get("DSPLA_MAX_PROGRAM_BYTES", "")
    return int(env) if env.isdigit() and int(env) > 0 else 16 << 20


def parse_file(path) -> Program:
    path = str(path)
    limit = max_program_bytes()
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise DsplaError(f"cannot read {path}: {e.strerror}") from None
    if len(data) > limit:
        raise DsplaError(f"{path}: larger than {limit} bytes: not a program (DSPLA_MAX_PROGRAM_BYTES raises the "
                         "limit)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DsplaError(f"{path}: not a UTF-8 text file ({e.reason} at byte {e.start})") from None
    return parse(text, path)
