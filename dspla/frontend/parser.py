"""The expression-file frontend: parse a .dspla file with the lark grammar in lang/ and build
the same IR the embedded DSL builds, by calling the same functions.

Nothing in a file is evaluated as Python: names resolve against the tables below and the
file's own declarations only.
"""
from __future__ import annotations

import os
from functools import lru_cache

import lark

from .. import algebra
from ..errors import (
    DimensionMismatch,
    DsplaError,
    DsplaSyntaxError,
    Span,
    UnknownNameError,
)
from ..ir import Node, Op, Program
from ..ir.check import check_loop_bound, input_dims
from ..ops import SPELLINGS, Expr, make
from ..ops.define import arith, compare
from ..ops.loop import loop_node
from . import dsl, tables
from .calls import COMPARISONS, FUNCTIONS, MAX_LOOP_DEPTH, SCAL, THUNK, Calls, E, _constant, _is_bool


@lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    # (a path beside this package, not importlib.resources: its readers load zipfile, for nothing here)
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "grammar", "dspla.lark")
    with open(path, encoding="utf-8") as fh:
        return tables.parser(fh.read())


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


class _Builder(Calls):
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
        rest, default = self._default(t.children[3:])
        dtype = "float64"
        if rest and getattr(rest[-1], "type", None) == "DTYPE":
            dtype = str(rest[-1])
            rest = rest[:-1]
        dims = [self.number(d) if d.type == "INT" else str(d) for d in rest]
        span = self.span(t.meta)
        form = "matrix"
        if str(kind) == "vector":
            if len(dims) != 1:
                raise DimensionMismatch(f"vector[...] takes one dim, got {len(dims)}", span)
            kind, dims, form = "dense", [dims[0], 1], "vector"
        elif len(dims) != 2:
            raise DimensionMismatch(f"{kind}[...] takes two dims (rows, columns), got {len(dims)}", span)
        self.declared(name, kind, dims, dtype, str(role), form, span, default)

    def st_scalar_decl(self, t):
        role, name, *rest = t.children
        rest, default = self._default(rest)
        self.declared(name, "dense", [1, 1], str(rest[0]) if rest else "float64", str(role), "scalar",
                      self.span(t.meta), default)

    def _default(self, rest: list) -> tuple[list, object]:
        """(the declaration's other parts, its default value or None): ``= 1``, ``= -0.5``, ``= true``."""
        if not rest or not isinstance(rest[-1], lark.Tree):
            return rest, None
        d = rest[-1]
        tok = d.children[0]
        value = str(tok) == "true" if d.data == "default_bool" else \
            self.number(tok, -1 if d.data == "default_negative" else 1)
        return rest[:-1], value

    def declared(self, name, kind, dims, dtype, role, form, span, default=None):
        self._defines(name)
        if str(name) in self.env:
            raise DsplaError(f"{name!s} is already defined", self.span(name))
        e = SPELLINGS["declare"].fn(str(name), str(kind), tuple(dims), dtype, role=role, form=form, default=default,
                                    span=span)
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

    def _defines(self, name) -> None:
        """A name given a value here: not ``inf``, which in an expression is float64's infinity."""
        if str(name) == "inf":
            raise DsplaError("inf is float64's infinity (a literal); choose another name", self.span(name))

    def st_assign(self, t):
        name, expr = t.children
        self._defines(name)
        if not self.loops and str(name) in self.env and any(d.attr("name") == str(name) for d in self.decls):
            raise DsplaError(f"cannot assign to {name!s}: it is an input (a loop may carry it on, as its "
                             "starting value)", self.span(name))
        value = self.expr(expr)
        self.env[str(name)] = Expr(value.node.replace(name=str(name)))

    def st_index_assign(self, t, accum: str | None = None):
        """``C[I, J] = A``: GraphBLAS's assign into C's region (A an expression or a number)."""
        name, *idx, value = t.children
        c = self._updated(name)
        rows, cols = (self.index(i) for i in idx) if len(idx) == 2 else (self.index(idx[0]), None)
        v = self.fold(value) if _constant(value) else self.expr(value)
        e = SPELLINGS["assign"].fn(c, v, rows, cols, accum=accum, span=self.span(t.meta))
        self.env[str(name)] = Expr(e.node.replace(name=str(name)))

    def st_index_accum_assign(self, t):
        """``C[I, J] += A``: the assign with plus as its accumulator (C's entries outside the
        region, and inside it where A has none, stay)."""
        self.st_index_assign(t, accum="plus")

    def st_accum_assign(self, t):
        """``C += T``: C accum= T under plus (an entry of either stays; both: their sum)."""
        name, value = t.children
        c = self._updated(name)
        e = SPELLINGS["update"].fn(c, self.expr(value), accum="plus", span=self.span(t.meta))
        self.env[str(name)] = Expr(e.node.replace(name=str(name)))

    def _updated(self, name) -> Expr:
        if str(name) not in self.env:
            self._unknown_var(name)
        if not self.loops and any(d.attr("name") == str(name) for d in self.decls):
            raise DsplaError(f"cannot assign to {name!s}: it is an input (give the result a name: "
                             f"B = {name!s} ... )", self.span(name))
        return self.env[str(name)]

    def index(self, t):
        """An index as extract and assign take it: an int, a slice or a list of ints (literals)."""
        def whole(c):
            if not _constant(c):
                raise DsplaError("an index is an integer literal (or arithmetic on literals)", self.span(c.meta))
            v = self.fold(c)
            if isinstance(v, bool) or not isinstance(v, int):
                raise DsplaError(f"an index is an integer, got {v!r}", self.span(c.meta))
            return v
        if t.data == "index_one":
            return whole(t.children[0])
        if t.data == "index_list":
            return [whole(c) for c in t.children]
        return slice(*(whole(b.children[0]) if b.children else None for b in t.children))

    def st_multi_assign(self, t):
        *names, expr = t.children
        span = self.span(t.meta)
        if not (isinstance(expr, lark.Tree) and expr.data == "call" and str(expr.children[0]) == "grad"):
            raise DsplaError(f"only grad(...) gives several values; assign other expressions to one name "
                             f"({names[0]!s} = ...)", span)
        seen = set()
        for tok in names:
            self._defines(tok)
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
            node = loop_node(carried, [outer[nm].node for nm in carried], cond_fn, body_fn, max_iter, span)
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
        if kind in ("neg", "transpose", "extract"):
            return [t.children[0]]
        if kind in ("add", "sub", "mul", "div", "matmul", "pow") or kind in COMPARISONS:
            return [c for c in t.children if not _constant(c)]
        if kind == "call" and str(t.children[0]) == "grad":
            return []   # grad builds its own arguments
        if kind == "call":
            _, _, bound = self._bind_call(t, self.span(t.meta))
            return [tree for pkind, tree in bound.values()
                    if pkind == E or pkind in (SCAL, THUNK) and not _constant(tree) and not _is_bool(tree)]
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
            return SPELLINGS["apply"].fn(vals[id(t.children[0])], "neg", span=span)
        if kind == "transpose":
            return SPELLINGS["transpose"].fn(vals[id(t.children[0])], span=span)
        if kind == "extract":
            x, *idx = t.children
            rows, cols = (self.index(i) for i in idx) if len(idx) == 2 else (self.index(idx[0]), None)
            return SPELLINGS["extract"].fn(vals[id(x)], rows, cols, span=span)
        if kind in COMPARISONS:
            a, b = (self.operand(c, vals) for c in t.children)
            if not isinstance(a, Expr) and not isinstance(b, Expr):
                raise DsplaError("a comparison needs a matrix on at least one side", span)
            return compare(a, b, kind, span)
        if kind in ("add", "sub", "mul", "div", "matmul", "pow"):
            if _constant(t):
                raise DsplaError(f"numbers alone ({self.fold(t)!r} here) are only allowed as an operand of an operator "
                                 "or a function argument", span)
            a, b = (self.operand(c, vals) for c in t.children)
            if kind == "matmul":
                return SPELLINGS["mxm"].fn(self._need_expr(a, t.children[0]), self._need_expr(b, t.children[1]),
                                           "plus_times", span=span)
            op = {"add": "plus", "sub": "minus", "mul": "times", "div": "div", "pow": "pow"}[kind]
            try:
                return arith(a, b, op, span)
            except TypeError as e:
                if isinstance(e, DsplaError):   # (already placed, with its caret)
                    raise
                raise DsplaError(str(e), span) from None
        raise DsplaError(f"unsupported expression {kind}", span)

def _assignments(stmts):
    """The assignments of a loop body, nested loops' included (with a stack: nesting is bounded
    by MAX_LOOP_DEPTH, but no traversal here recurses)."""
    todo = list(reversed(stmts))
    while todo:
        st = todo.pop()
        if st.data in ("assign", "index_assign", "index_accum_assign", "accum_assign"):
            yield st
        elif st.data == "while_stmt":
            todo.extend(reversed(st.children[2:]))


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


__all__ = ["FUNCTIONS", "max_program_bytes", "parse", "parse_file"]
