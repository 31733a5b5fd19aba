"""IR nodes, printing, passes and the verifier."""
from dataclasses import replace

import pytest

import dspla as dp
from dspla import compiler
from dspla.errors import VerificationError
from dspla.ir import Op, Program
from dspla.ir.types import Kind, Type
from dspla.passes import cse, simplify, verify


def test_nodes_are_structural_and_hashable():
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "f"))
    a, b = (A @ X).node, (A @ X).node
    assert a is not b and a == b and hash(a) == hash(b)
    assert (A @ X).node != dp.mxm(A, X, "min_plus").node
    assert len({a, b}) == 1


def test_cse_shares_repeated_subexpressions():
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "f"))
    y = dp.relu(A @ X) + dp.relu(A @ X)
    p = Program((("y", y.node),))
    assert len([n for n in p.toposort() if n.op is Op.MXM]) == 2
    q = cse(p)
    assert len([n for n in q.toposort() if n.op is Op.MXM]) == 1
    assert q == p  # same computation


def test_cse_keeps_a_scalars_sign():
    """0.0 == -0.0 in Python, but X / 0.0 is +inf where X / -0.0 is -inf: CSE merged the two."""
    import numpy as np
    X = dp.dense("X", ("n", 1))
    assert (X / 0.0).node != (X / -0.0).node
    out = dp.function(outputs={"a": X / 0.0, "b": X / -0.0})(X=np.array([[2.0], [-1.0]]))
    assert out["a"].to_numpy()[:, 0].tolist() == [np.inf, -np.inf]
    assert out["b"].to_numpy()[:, 0].tolist() == [-np.inf, np.inf]


def test_simplify_removes_double_transpose_and_noop_cast():
    A = dp.sparse("A", ("n", "m"))
    p = simplify(Program((("y", dp.cast(A.T.T, "float64").node),)))
    assert dict(p.outputs)["y"].op is Op.INPUT


def test_explain_prints_ssa_with_names_types_and_spans():
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "f"))
    text = dp.function(outputs={"H": dp.relu(A @ X)}).explain()
    assert "program(A: input sparse[n, n] float64, X: input dense[n, f] float64)" in text
    assert "H = apply[relu](%0)" in text and "mxm[plus_times](A, X)" in text
    assert "test_ir.py:" in text and "return H" in text


def test_verifier_names_the_node_and_its_neighbours():
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "f"))
    good = (A @ X).node
    bad = good.replace(type=Type(Kind.dense, ("n", "n")))  # a pass that got the type wrong
    out = dp.relu(dp.Expr(bad)).node
    with pytest.raises(VerificationError) as info:
        verify(Program((("y", out),)), after="broken-pass")
    msg = str(info.value)
    assert "broken-pass" in msg and "mxm[plus_times]" in msg and "dense[n, f]" in msg
    assert "argument A" in msg and "used by" in msg and "test_ir.py" in msg


def test_verification_checks_only_nodes_it_has_not_seen(monkeypatch):
    """A node that passed once is not checked again (nodes are immutable); a node a pass made
    from it with the wrong type, in a loop's body too, still fails."""
    from dspla.ops import DEFINITIONS
    A = dp.sparse("A", ("n", "n"))
    x = dp.dense("x", ("n", 1))
    (y,) = dp.while_loop(lambda v: dp.reduce_all(v) < 100.0, lambda v: (A @ v,), (x,), 10)
    prog = Program((("y", y.node),))
    verify(prog)
    calls = []
    d = DEFINITIONS[Op.MXM]
    real = d.type
    monkeypatch.setattr(d, "type", lambda *a: calls.append(a) or real(*a))
    verify(prog)
    assert not calls
    good = (A @ x).node
    verify(Program((("g", good),)))
    bad = good.replace(type=Type(Kind.dense, ("n", "n")))
    with pytest.raises(VerificationError, match="type is dense"):
        verify(Program((("y", dp.relu(dp.Expr(bad)).node),)), after="broken-pass")
    assert calls   # (the new node was checked)
    body = prog.outputs[0][1].args[0].attr("body")
    name, node = body.outputs[0]
    broken = Program(((name, node.replace(type=Type(Kind.dense, ("n", "n")))),), body.declared)
    with pytest.raises(VerificationError):
        verify(broken, after="broken-pass")


def test_pipeline_verifies_after_every_pass():
    A = dp.sparse("A", ("n", "n"))

    def breaks(program):
        node = dict(program.outputs)["y"]
        return Program((("y", node.replace(attrs=())),))

    steps = (*compiler.PIPELINE[:3], compiler.Step("breaks", lambda c: replace(c, program=breaks(c.program)),
                                                    lambda c: str(c.program)))
    with pytest.raises(VerificationError, match="after pass 'breaks'"):
        compiler.run(compiler.Compilation(Program((("y", (A @ A).node),))), pipeline=steps)


def test_semiring_namespace():
    assert str(dp.semiring.plus_second) == "plus_second"
    with pytest.raises(AttributeError, match="min_plus"):
        dp.semiring.min_plux  # noqa: B018 - the attribute access is what raises
    sr = dp.semiring.define("tropical_test", monoid="min", op="plus")
    assert dp.semiring.tropical_test is sr
    with pytest.raises(ValueError):
        dp.semiring.define("tropical_test", monoid="max", op="plus")
