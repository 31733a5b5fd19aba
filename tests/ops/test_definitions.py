"""One definition per op (dspla/ops): every op has every rule, every stage's table covers every op,
both front ends spell what the definitions register, local work is counted and priced, and the
gradient rules read the algebra rows' facts (a semiring defined at run time from a linear monoid
and a multiply with derivatives has the gradient of the built-in one, checked by finite
differences, not against the code under test)."""
from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import dspla as dp
from dspla import instr as ir
from dspla.autodiff import VJP
from dspla.costmodel import RankView, count_rank, shipped, split
from dspla.frontend.parser import FUNCTIONS, parse
from dspla.ir import Op
from dspla.ops import DEFINITIONS, SPELLINGS, check
from dspla.ops.define import RULES
from dspla.plan.facts import FACTS
from dspla.plan.lower import LOWER, WORK
from dspla.plan.options import Options
from dspla.reference import EVAL

OPS = Path(dp.__file__).parent / "ops"


def test_every_op_has_every_rule_and_every_table_covers_every_op():
    check()
    for op, d in DEFINITIONS.items():
        for rule in RULES:
            assert callable(getattr(d, rule)), (op, rule)
    ops = set(Op)
    assert ops == set(DEFINITIONS) and len(ops) >= 18
    for table in (EVAL, FACTS, LOWER, WORK, VJP):
        assert set(table) == ops


def test_each_op_is_defined_in_one_module_of_its_own_family():
    """An op's rules all come from the module that defines it (no rule is added from elsewhere)."""
    for op, d in DEFINITIONS.items():
        modules = {inspect.getmodule(getattr(d, rule)).__name__ for rule in RULES}
        assert len(modules) == 1, (op, modules)
        assert next(iter(modules)).startswith("dspla.ops."), (op, modules)


def test_both_front_ends_spell_what_the_definitions_register():
    for name, sp_ in SPELLINGS.items():
        # dp.NAME is the builder, wrapped to run at once on concrete values (dspla/eager)
        assert getattr(dp, name).__wrapped__ is sp_.fn, name
        assert name in dp.__all__
        if sp_.file is not None:
            params = inspect.signature(sp_.fn).parameters
            assert all(p in params for p, _ in sp_.file), name
            assert FUNCTIONS[name][0] is sp_.fn
    assert set(FUNCTIONS) == {n for n, s in SPELLINGS.items() if s.file is not None}
    # a file and Python build the same IR from the registered spellings
    prog = parse("input A : sparse[n, n]\ninput X : dense[n, 4]\nT = relu(mxm(A, X, min_plus))\noutput T\n")
    A, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", 4))
    assert dict(prog.outputs)["T"] == dp.relu(dp.mxm(A, X, "min_plus")).node


def test_local_steps_carry_their_work_and_the_model_prices_it():
    """On P = 2 with the n x 4 values by rows, each rank's Local touches its rows of its operands
    and of the result: 2 x rows x 4 entries for ``Y * 2.0``, 3 x for ``Y + Z``; the cost model
    turns that into local seconds."""
    n, k, P = 30, 4, 2
    X = dp.dense("X", ("n", k))
    A = dp.sparse("A", ("n", "n"))
    f = dp.function({"Y": (A @ X) + (A @ X) * 2.0})
    a = sp.random_array((n, n), density=0.2, format="csr", random_state=3) + sp.eye_array(n, format="csr")
    c = f.plan(P, {"A": a, "X": np.ones((n, k))}, Options(partition="random", seed=1))
    counts = c.plan.dims["n"].counts
    for r, prog in enumerate(c.plan.programs):
        locals_ = [i for i in ir.walk(prog.instrs) if type(i) is ir.Local]
        touched = {Op.APPLY_BIND: 2, Op.EWISE_ADD: 3}
        assert sorted(i.node.op.value for i in locals_) == ["apply_bind", "ewise_add"]
        assert all(i.work == touched[i.node.op] * int(counts[r]) * k for i in locals_), [i.work for i in locals_]
        view = RankView(locals_, {}, r, P, k, (P,))
        got = count_rank(view)
        assert got["local_words"] == sum(i.work for i in locals_)
        assert split(got, shipped())["local"] > 0


def _fd_grad(f, W, eps=1e-6):
    g = np.zeros_like(W)
    for idx in np.ndindex(*W.shape):
        Wp, Wm = W.copy(), W.copy()
        Wp[idx] += eps
        Wm[idx] -= eps
        g[idx] = (f(Wp) - f(Wm)) / (2 * eps)
    return g


def test_a_semiring_defined_from_rows_with_facts_has_a_gradient():
    """plus over times (a user's name for it, defined at run time): one row, and its gradient
    equals central finite differences of the loss."""
    dp.semiring.define("facts_plus_times", monoid="plus", op="times")
    rng = np.random.default_rng(0)
    a = sp.random_array((6, 6), density=0.5, format="csr", random_state=1)
    x = rng.normal(size=(6, 3))
    w0 = rng.normal(size=(3, 2))
    A, X, W = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", 3)), dp.param("W", (3, 2))
    loss = dp.reduce_all(dp.mxm(dp.mxm(A, X, "facts_plus_times"), W, "facts_plus_times") ** 2)
    f = dp.function({"loss": loss, "dW": dp.grad(loss, W)})

    def value(w):
        return float(f(A=a, X=x, W=w)["loss"].to_numpy()[0, 0])
    got = f(A=a, X=x, W=w0)["dW"].to_numpy()
    np.testing.assert_allclose(got, _fd_grad(value, w0), rtol=1e-5, atol=1e-6)


def test_gradient_rules_do_not_choose_by_operator_name():
    """The rules read facts (Monoid.linear/selects, BinaryOp.selects/grad, UnaryOp.grad), so no
    rule module compares an operator's name with a literal."""
    for path in OPS.glob("*.py"):
        src = path.read_text()
        if "vjp_rule" not in src:
            continue
        body = src[src.index("vjp_rule"):]
        for needle in ('.name == "', ".name in (", 'mon == "', 'mult == "'):
            assert needle not in body, (path.name, needle)
