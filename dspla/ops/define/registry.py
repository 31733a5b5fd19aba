"""What an op is made of, and the registry every stage reads.

An op's module (dspla/ops/NAME.py) makes its Definition with ``define(name, attrs=...)`` and
gives it one rule per stage with the Definition's decorators:

    rule        read by                                        signature
    type        make (every node built), the IR verifier       (args, attrs, given, where, span) -> Type
    evaluate    the reference executor, the runtime's Local     (node, args, env[, into]) -> value
    facts       plan/facts (what planning proves full)          (node, the arguments' Facts) -> Facts
    lower       plan/lower                                      (lowering, node) -> None
    work        plan/lower (Local.work, priced by the model)    (node, argument shapes, result shape) -> int
    vjp         autodiff                                        (node, cotangent, needs, builder) -> cotangents
    prepare     the runtime (optional: one C call per step)     (node, signature) -> step or None

Shapes given to ``work`` are a rank's pieces, (rows, columns) as ints; the count is the entries the
step touches at most (``touched``: every argument and the result, as if full).

``check()`` fails when an op misses a rule; dspla.ops runs it once every module is loaded, so a
missing rule is an import error, not a surprise at run time.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ...errors import DomainMismatch, DsplaError, Span
from ...ir.node import Node, Op
from ...ir.types import Kind, Type


def _all_linked(n: Node) -> tuple:
    return (True,) * len(n.args)


RULES = ("type", "evaluate", "facts", "lower", "work", "vjp")   # every op has each (prepare is optional)


@dataclass(eq=False)
class Definition:
    """One op: its attributes and its rules (see the module's table). ``into``: its evaluation
    rule takes ``into=``, a free matrix it may write its result into (kernels/recycle.py).
    ``linked(node)``: which arguments the value depends on differentiably at all."""
    op: Op
    attrs: frozenset
    type: Callable | None = None
    evaluate: Callable | None = None
    into: bool = False
    facts: Callable | None = None
    lower: Callable | None = None
    work: Callable | None = None
    vjp: Callable | None = None
    linked: Callable = field(default=_all_linked)
    prepare: Callable | None = None
    views: bool = False   # its value is storage another value owns (a stack's top): never written in place

    # -- the rules, as decorators
    def type_rule(self, fn: Callable) -> Callable:
        self.type = fn
        return fn

    def eval_rule(self, into: bool = False) -> Callable:
        def register(fn: Callable) -> Callable:
            self.evaluate, self.into = fn, into
            return fn
        return register

    def fact_rule(self, fn: Callable) -> Callable:
        self.facts = fn
        return fn

    def lower_rule(self, fn: Callable) -> Callable:
        self.lower = fn
        return fn

    def work_rule(self, fn: Callable) -> Callable:
        self.work = fn
        return fn

    def vjp_rule(self, linked: Callable | None = None) -> Callable:
        def register(fn: Callable) -> Callable:
            self.vjp = fn
            if linked is not None:
                self.linked = linked
            return fn
        return register

    def prepare_rule(self, fn: Callable) -> Callable:
        self.prepare = fn
        return fn


class Family:
    """Several definitions sharing a rule: ``@Family(add, mult).fact_rule``."""

    def __init__(self, *defs: Definition) -> None:
        self.defs = defs

    def _each(self, rule: str, fn: Callable) -> Callable:
        for d in self.defs:
            getattr(d, rule)(fn)
        return fn

    def type_rule(self, fn: Callable) -> Callable:
        return self._each("type_rule", fn)

    def fact_rule(self, fn: Callable) -> Callable:
        return self._each("fact_rule", fn)

    def lower_rule(self, fn: Callable) -> Callable:
        return self._each("lower_rule", fn)

    def work_rule(self, fn: Callable) -> Callable:
        return self._each("work_rule", fn)

    def prepare_rule(self, fn: Callable) -> Callable:
        return self._each("prepare_rule", fn)

    def eval_rule(self, into: bool = False) -> Callable:
        def register(fn: Callable) -> Callable:
            for d in self.defs:
                d.eval_rule(into)(fn)
            return fn
        return register

    def vjp_rule(self, linked: Callable | None = None) -> Callable:
        def register(fn: Callable) -> Callable:
            for d in self.defs:
                d.vjp_rule(linked)(fn)
            return fn
        return register


DEFINITIONS: dict[Op, Definition] = {}
TAKES_STACKS: set[Op] = set()   # the ops a stack may be given to (ops/stack.py fills it)


def touched(args: list, out: tuple) -> int:
    """Entries of the arguments and the result, as if every one were present: what an
    element-wise step reads and writes at most (its ``work``, unless it says otherwise)."""
    return sum(int(r) * int(c) for r, c in args) + int(out[0]) * int(out[1])


def define(name: str, attrs: tuple = ()) -> Definition:
    """A new op named ``name`` (as explain prints it) whose nodes carry ``attrs``."""
    op = Op(name)
    if op in DEFINITIONS:
        raise AssertionError(f"op {name!r} is defined twice")
    d = DEFINITIONS[op] = Definition(op, frozenset(attrs))
    return d


def definition(op: Op) -> Definition:
    return DEFINITIONS[op]


def table(rule: str) -> dict:
    """op -> its ``rule``, for a stage to look up per node (built once, when the stage is imported)."""
    return {op: getattr(d, rule) for op, d in DEFINITIONS.items()}


# composites the front ends build from several ops (softmax), differentiated as a whole: (match,
# vjp); match(node) -> (kind, x) when the node is one, built from x; vjp(kind, node, g, builder)
COMPOSITES: list[tuple[Callable, Callable]] = []


def composite(match: Callable, vjp: Callable) -> None:
    COMPOSITES.append((match, vjp))


def check() -> None:
    """Every defined op has every rule."""
    missing = [f"{op.value}: {rule}" for op, d in DEFINITIONS.items() for rule in RULES if getattr(d, rule) is None]
    assert not missing, "ops without a rule: " + ", ".join(missing)


class Where:
    """The op and its arguments as error messages name them, spelled out only when a message
    is made (every node is type-checked at build and after each pass; few ever fail); and the
    dims its rule bound (``shape.unify``)."""
    __slots__ = ("op", "args", "attrs", "binds")

    def __init__(self, op: Op, args: tuple, attrs: tuple) -> None:
        self.op, self.args, self.attrs = op, args, attrs
        self.binds: list[tuple[str, int]] = []

    def __str__(self) -> str:
        probe = Node(self.op, self.args, self.attrs, Type(Kind.dense, (1, 1)))
        return f"{probe.op_text()}({', '.join(a.label for a in self.args)})"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    __repr__ = __str__


def make(op: Op, args: Any = (), attrs: Any = (), *, type: Type | None = None, span: Span | None = None,
         name: str | None = None) -> Node:
    """Build a node, inferring its type with the op's rule (leaves take their type as given):
    the only way nodes are built."""
    args = tuple(args)
    attrs = tuple(attrs)
    where = Where(op, args, attrs)
    if op not in TAKES_STACKS and any(getattr(a.type, "is_stack", False) for a in args):
        a = next(a for a in args if a.type.is_stack)
        raise DomainMismatch(f"{where}: {a.label} is a {a.type}; read its values with top(s)", span)
    try:
        inferred = DEFINITIONS[op].type(args, dict(attrs), type, where, span)
    except DsplaError as e:
        if e.span is None and span is not None:  # algebra rows do not know where they were used
            raise e.at(span) from None
        raise
    return Node(op, args, attrs, inferred, span, name, tuple(where.binds))


class Env:
    """What evaluation rules may look at besides their operands: the bound inputs, the dims'
    sizes, for an op holding sub-programs (a loop), how to run one (``evaluate(program,
    inputs by name) -> outputs by name``: the reference executor's), and what integer overflow
    does (kernels/overflow.py)."""

    def __init__(self, inputs: dict, dims: dict, evaluate: Callable | None = None, overflow: str = "error") -> None:
        self.inputs, self.dims, self.evaluate, self.overflow = inputs, dims, evaluate, overflow
