"""What ``dspla train`` needs from a step program, and the IR rewrites it applies.

The convention (examples/gcn.dspla follows it): inputs ``A`` (sparse graph), ``X`` (features),
``Y`` (one-hot labels, dense n x c), ``T`` (loss weights, dense n x 1) and optionally ``seed``
(1 x 1 int64, fed a new value every step when the program uses dropout); parameters (``param``)
of any names; outputs ``loss`` (1 x 1), ``logits`` (n x c) and, for every parameter ``W``, its
gradient ``dW`` -- written by hand, or left out: :func:`differentiate` adds them to a
forward-only program (examples/gcn_auto.dspla).

Rewrites (pure functions Program -> Program, like the compiler's passes):

- :func:`set_dropout` sets p of every ``dropout_mask`` (``--dropout``);
- :func:`without_dropout` removes dropout (``X * dropout_mask(X, ...)`` becomes ``X``): the
  evaluation forward pass;
- :func:`training_program` the program the trainer runs each epoch: the loss and gradients of
  the step plus ``eval_logits``, the logits of the same weights without dropout, so one run per
  epoch gives the update and the accuracy (common subexpressions such as Â are shared).
"""
from __future__ import annotations

from ..algebra import get_unary
from ..autodiff import grad
from ..errors import DsplaError
from ..ir import Node, Op, Program
from ..ir.types import Kind
from ..passes.rewrite import rewrite

REQUIRED_INPUTS = ("A", "X", "Y", "T")


class StepProgramError(DsplaError):
    pass


def differentiate(program: Program) -> Program:
    """A forward-only program (outputs loss and logits, no d<param>) with the gradient of every
    parameter added as output d<param>, by reverse mode (dspla.autodiff). A program that outputs
    its gradients (written by hand) is returned as it is; one with some but not all of them is an
    error (which ones did the author mean to write?)."""
    outs = dict(program.outputs)
    params = [n for n in program.inputs if n.attr("role") == "param"]
    have = [p for p in params if "d" + p.attr("name") in outs]
    if have or "loss" not in outs or not params:
        return program      # hand-written (check_step says what is missing), or not a step program
    loss = outs["loss"]
    if tuple(loss.type.shape) != (1, 1):
        return program
    grads = grad(loss, params)
    extra = tuple(("d" + p.attr("name"), g.replace(name="d" + p.attr("name"))) for p, g in zip(params, grads))
    return Program(program.outputs + extra, program.declared, program.source)


def check_step(program: Program, where: str = "the step program") -> dict:
    """Validate the convention; returns {"params": [names in declaration order], "uses_seed": bool}."""
    inputs = {n.attr("name"): n for n in program.inputs}
    outs = dict(program.outputs)
    problems = []
    for name in REQUIRED_INPUTS:
        if name not in inputs:
            problems.append(f"it has no input {name!r}")
    if "A" in inputs and inputs["A"].type.kind is not Kind.sparse:
        problems.append("input 'A' must be sparse")
    params = [k for k, n in inputs.items() if n.attr("role") == "param"]
    if not params:
        problems.append("it declares no parameters (param W : dense[...])")
    for name in ("loss", "logits"):
        if name not in outs:
            problems.append(f"it has no output {name!r}")
    if "loss" in outs and tuple(outs["loss"].type.shape) != (1, 1):
        problems.append(f"output 'loss' must be 1 x 1, it is {outs['loss'].type}")
    for p in params:
        g = outs.get("d" + p)
        if g is None:
            problems.append(f"it has no output 'd{p}' (the gradient of parameter {p!r})")
        elif tuple(g.type.shape) != tuple(inputs[p].type.shape):
            problems.append(f"output 'd{p}' is {g.type}, parameter {p!r} is {inputs[p].type}")
    extra = [k for k, n in inputs.items() if n.attr("role") != "param" and k not in REQUIRED_INPUTS + ("seed",)]
    if extra:
        problems.append(f"it takes inputs the trainer cannot provide: {', '.join(extra)}")
    if problems:
        raise StepProgramError(f"{where} does not follow the training convention (docs/gcn.md): "
                               + "; ".join(problems) + ". It must take A (sparse), X, Y, T and optionally seed, "
                               "declare parameters, and output loss, logits and d<param> for each parameter (or no "
                               "d<param>: the gradients are then generated, docs/autodiff.md)")
    return {"params": params, "uses_seed": "seed" in inputs}


def set_dropout(program: Program, p: float) -> Program:
    """Every dropout_mask with probability p."""
    if not 0.0 <= p < 1.0:
        raise DsplaError(f"dropout must be in [0, 1), got {p}")

    def rule(n: Node):
        if n.op is Op.DROPOUT_MASK and n.attr("p") != float(p):
            return n.replace(attrs=tuple((k, float(p) if k == "p" else v) for k, v in n.attrs))
        return None
    return rewrite(program, rule)


def without_dropout(program: Program) -> Program:
    """Dropout removed: every ``dropout_mask(x, p, s)`` becomes ``one(x)`` (1.0 on x's pattern), and
    what that leaves trivial folds away: ``one(x) + 0 * x`` -> ``one(x)``, ``x * one(x)`` -> ``x``."""

    one = get_unary("one")

    def is_one_of(m: Node, x: Node) -> bool:
        return m.op is Op.APPLY and m.attr("op") == one and m.args[0] == x

    def rule(n: Node):
        if n.op is Op.DROPOUT_MASK:
            return Node(Op.APPLY, (n.args[0],), (("op", one),), n.type, n.span, n.name)
        if n.op is Op.EWISE_ADD and n.attr("op").name == "plus":
            a, b = n.args
            for m, z in ((a, b), (b, a)):
                if m.op is Op.APPLY and m.attr("op") == one and z.op is Op.APPLY_BIND \
                        and z.attr("op").name == "times" and z.attr("scalar") == 0 and z.args[0] == m.args[0]:
                    return m
        if n.op is Op.EWISE_MULT and n.attr("op").name == "times":
            a, b = n.args
            if is_one_of(b, a):
                return a
            if is_one_of(a, b):
                return b
        return None
    return rewrite(program, rule)


def training_program(program: Program, with_eval: bool = True, keep_logits: bool = False) -> Program:
    """loss + every d<param>, and (with_eval) ``eval_logits``: the logits without dropout."""
    info = check_step(program)
    outs = dict(program.outputs)
    keep = ["loss"] + (["logits"] if keep_logits else []) + ["d" + p for p in info["params"]]
    outputs = [(k, outs[k]) for k in keep]
    if with_eval:
        ev = without_dropout(Program((("logits", outs["logits"]),), (), program.source))
        # names of the evaluation pass get an eval_ prefix (values it shares with the step, such
        # as Â, are merged into the step's by common-subexpression elimination and keep theirs)
        ev = rewrite(ev, lambda n: n.replace(name="eval_" + n.name) if n.name and n.op is not Op.INPUT else None)
        outputs.append(("eval_logits", ev.outputs[0][1]))
    return Program(tuple(outputs), program.declared, program.source)


def eval_program(program: Program) -> Program:
    """Only the logits, without dropout."""
    outs = dict(program.outputs)
    return without_dropout(Program((("logits", outs["logits"]),), (), program.source))
