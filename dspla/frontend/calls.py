"""Function calls and literals in a .dspla file: the function table (made from the ops'
spellings, dspla/ops: every op a file may call registers its parameters), each argument read by
its kind (an expression, a name from an algebra table, a literal), and numeric literals checked
to fit and folded (``0.85 * 0.5``). ``Calls`` is the part of the parser's builder that does it."""
from __future__ import annotations

import math

import lark
import numpy as np

from .. import algebra
from ..errors import DsplaError, UnknownNameError
from ..ir.types import MAX_DIM
from ..ops import SPELLINGS, Expr
from ..ops import define as spelled
from ..ops.apply_index import INDEX_OPS, PREDICATES

# Parameter kinds: how a call argument is read. 'expr' evaluates an expression; the others
# read a bare name (or a string) from an algebra table, or a literal.
E, SR, BIN, MON, UN, SEL, SCAL, DT, AX, BOOL, DIM = (spelled.EXPR, spelled.SEMIRING, spelled.BINARY, spelled.MONOID,
                                                    spelled.UNARY, spelled.SELECT, spelled.SCALAR, spelled.DTYPE,
                                                    spelled.AXIS, spelled.BOOL, spelled.DIM)
THUNK = spelled.THUNK
_REQ = spelled.REQUIRED
# name -> (builder, [(parameter, kind, default)]): every op spelled for files (dspla/ops registers them)
FUNCTIONS = {name: (sp.fn, sp.file_params()) for name, sp in SPELLINGS.items() if sp.file is not None}

COMPARISONS = ("gt", "ge", "lt", "le", "eq", "ne")
MAX_LOOP_DEPTH = 64   # a loop body is built by a nested call: bounded, with a clear error past it

_TABLES = {SR: algebra.SEMIRINGS, BIN: algebra.BINARY, MON: algebra.MONOIDS, UN: algebra.UNARY,
           SEL: {**algebra.SELECT, **{k: None for k in algebra.SELECT_ALIASES}},
           spelled.INDEX_UNARY: {**INDEX_OPS, **PREDICATES}}


class Calls:
    """Calls and literals, for the builder (parser.py) that walks a file's syntax tree: it provides
    ``span(token or meta)`` and ``semirings`` (the file's own)."""

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
        if text == "inf":   # (the one infinity, written as a name is: a distance no path has)
            return sign * value
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
        for pname, pkind, _ in params:   # an operator (apply's): unary, or binary when a scalar is bound to it
            if pkind == spelled.OPERATOR and pname in kwargs:
                unary = kwargs.get("left") is None and kwargs.get("right") is None
                table, what = (algebra.UNARY, "unary operator") if unary else (algebra.BINARY, "binary operator")
                if str(kwargs[pname]) not in table:
                    raise UnknownNameError(what, str(kwargs[pname]), table, self.span(bound[pname][1].meta))
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
        if kind in _TABLES or kind == spelled.OPERATOR:
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
        if kind == spelled.THUNK:   # a literal, or a 1 x 1 value
            v = str(tree.children[0]) == "true" if _is_bool(tree) else self.operand(tree, vals)
            if isinstance(v, Expr) and tuple(v.node.type.shape) != (1, 1):
                raise DsplaError(f"{fname}(): {pname} is a number or a 1 x 1 value, got {v.node.type}", span)
            return v
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
