"""Loops in both front ends: one WHILE node carrying its condition and body as sub-programs,
values from outside computed once before it, run by the reference executor, by one process and
by P simulated ones with the same iterations and results; errors with locations."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.errors import DomainMismatch, DsplaError
from dspla.frontend.parser import parse
from dspla.ir import Op

from harness import assert_same, run_dist


def _power(tol=1e-9, maxit=200):
    """Normalised power iteration on A + I until the change is below tol."""
    A = dp.sparse("A", ("n", "n"))
    x0 = dp.dense("x0", ("n", 1))
    B = A + dp.eye("n")

    def body(x, delta):
        y = B @ x
        y = y / dp.sqrt(dp.reduce_all(y * y))
        return y, dp.reduce_all(dp.abs(y - x))

    (x, delta), it = dp.while_loop(lambda x, d: d > tol, body, (x0, dp.reduce_all(x0)), maxit, count=True)
    return dp.function({"x": x, "delta": delta, "it": it})


def _numpy_power(a, x0, tol=1e-9, maxit=200):
    B = a.toarray() + np.eye(a.shape[0])
    x, delta, it = x0, float(x0.sum()), 0
    while it < maxit and delta > tol:
        y = B @ x
        y = y / np.sqrt((y * y).sum())
        x, delta, it = y, float(np.abs(y - x).sum()), it + 1
    return x, it


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    a = sp.random_array((n, n), density=0.1, random_state=rng, format="csr")
    return a, np.full((n, 1), 1.0 / n)


def test_the_loop_is_one_node_with_sub_programs_and_invariants_hoisted():
    f = _power()
    (w,) = [n for n in f.program.toposort() if n.op is Op.WHILE]
    body = w.attr("body")
    # A + I is computed once, outside: the body only sees it through a placeholder
    assert not any(n.op is Op.IDENTITY or n.op is Op.EWISE_ADD and n.type.shape == ("n", "n")
                   for n in body.toposort())
    assert any(n.op is Op.EWISE_ADD and n.type.shape == ("n", "n") for n in f.program.toposort())
    text = str(f.program)
    assert "while[200, 2]" in text and "cond program(" in text and "body program(" in text


def test_reference_one_process_and_numpy_agree():
    a, x0 = _data()
    f = _power()
    want, it = _numpy_power(a, x0)
    ref = f._reference({"A": a, "x0": x0})
    assert int(ref["it"].to_numpy()[0, 0]) == it > 3
    np.testing.assert_allclose(ref["x"].to_numpy(), want, rtol=1e-12)
    out = f(A=a, x0=x0)
    assert int(out["it"].to_numpy()[0, 0]) == it
    np.testing.assert_allclose(out["x"].to_numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("plan", ["p2p1d", "allgather1d"])
def test_distributed_runs_the_same_iterations(P, plan):
    a, x0 = _data(seed=P)
    f = _power()
    want = f._reference({"A": a, "x0": x0})
    got, stats = run_dist(f, {"A": a, "x0": x0}, P, plan=plan, partition="random")
    assert got["it"].to_numpy()[0, 0] == want["it"].to_numpy()[0, 0]
    assert_same({"x": got["x"]}, {"x": want["x"]}, exact=False)
    # delta is a difference of nearly equal sums: equal up to summation order, absolutely
    np.testing.assert_allclose(got["delta"].to_numpy(), want["delta"].to_numpy(), rtol=0, atol=1e-15)
    (loop,) = stats["loops"]
    assert loop["loop"] == 0 and loop["iterations"] == int(want["it"].to_numpy()[0, 0])
    assert len(loop["words_per_iteration"]) == loop["iterations"] and loop["seconds"] > 0
    (prod,) = stats["products"]
    assert prod["loop"] == 0 and prod["iterations"] == stats["loops"][0]["iterations"]
    assert prod["words_sent_per_iteration"] * prod["iterations"] == prod["words_sent_total"]


@pytest.mark.filterwarnings("ignore::dspla.LoopBoundWarning")   # (the point of the test)
def test_max_iter_bounds_the_loop_and_zero_runs_none():
    a, x0 = _data()
    for m in (0, 3):
        A = dp.sparse("A", ("n", "n"))
        x = dp.dense("x", ("n", 1))
        (y,), it = dp.while_loop(lambda y: dp.reduce_all(y) > -1.0, lambda y: (A @ y + y,), (x,), m, count=True)
        out = dp.function({"y": y, "it": it})(A=a, x=x0)
        assert out["it"].to_numpy()[0, 0] == m
        want = x0
        for _ in range(m):
            want = a @ want + want
        np.testing.assert_allclose(out["y"].to_numpy(), want, rtol=1e-12)


def test_a_loop_stopped_by_its_bound_says_so(recwarn):
    x = dp.dense("x", ("n", 1))
    (y,) = dp.while_loop(lambda y: dp.reduce_all(y) < 100.0, lambda y: (y * 2.0,), (x,), 3)
    f = dp.function({"y": y})
    with pytest.warns(dp.LoopBoundWarning, match=r"test_loops.py:\d+:\d+: loop 0 ran all 3 iterations") as rec:
        out = f(x=np.ones((2, 1)))   # sum 2 -> 16 after 3 doublings: still below 100
    assert rec[0].filename == __file__   # attributed to the caller's line, not to dspla
    assert out["y"].to_numpy()[0, 0] == 8.0 and f.last_stats["loops"][0]["stopped_at_bound"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # ending on the condition: no warning
        f(x=np.full((2, 1), 30.0))   # sum 60, then 120: one iteration
    assert not f.last_stats["loops"][0]["stopped_at_bound"] and f.last_stats["loops"][0]["iterations"] == 1


def test_a_loop_ending_in_its_last_allowed_iteration_is_not_cut_short():
    # x = 1 halves once to 0.5, where the condition (sum > 0.6) is false: the bound of 1 was enough
    x = dp.dense("x", ("n", 1))
    (y,), it = dp.while_loop(lambda y: dp.reduce_all(y) > 0.6, lambda y: (y * 0.5,), (x,), 1, count=True)
    f = dp.function({"y": y, "it": it})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = f(x=np.ones((1, 1)))
    assert out["y"].to_numpy()[0, 0] == 0.5 and out["it"].to_numpy()[0, 0] == 1
    assert not f.last_stats["loops"][0]["stopped_at_bound"]
    with pytest.warns(dp.LoopBoundWarning, match="ran all 1 iterations"):
        f(x=np.full((1, 1), 4.0))   # 4 -> 2, still above 0.6: cut short
    assert f.last_stats["loops"][0]["stopped_at_bound"]


def test_a_missing_condition_entry_is_false():
    x = dp.sparse("x", ("n", 1))
    (y,), it = dp.while_loop(lambda y: dp.reduce_all(y) > 0.0, lambda y: (y * 2.0,), (x,), 10, count=True)
    out = dp.function({"y": y, "it": it})(x=sp.csr_array((5, 1)))
    assert out["it"].to_numpy()[0, 0] == 0


def test_a_dense_start_carried_sparse():
    A, x = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 1))
    (y,) = dp.while_loop(lambda y: dp.reduce_all(y, "lor"), lambda y: (dp.mxm(A, y, "lor_land", mask=y,
                                                                                complement=True, structure=True),),
                         (x > 0.5,), 5)
    assert y.kind.value == "sparse"


def test_loop_errors_name_what_is_wrong():
    x = dp.dense("x", ("n", 1))
    with pytest.raises(DsplaError, match="gives 2 values for 1"):
        dp.while_loop(lambda y: dp.reduce_all(y) > 0, lambda y: (y, y), (x,), 3)
    with pytest.raises(DomainMismatch, match="1 x 1 bool"):
        dp.while_loop(lambda y: y > 0, lambda y: (y,), (x,), 3)
    with pytest.raises(DomainMismatch, match="cast it"):
        dp.while_loop(lambda y: dp.reduce_all(y) > 0, lambda y: (dp.cast(y, "int64"),), (x,), 3)
    with pytest.raises(DsplaError, match="max_iter"):
        dp.while_loop(lambda y: dp.reduce_all(y) > 0, lambda y: (y,), (x,), -1)


PAGERANK = """\
input A : sparse[n, n]
input r : dense[n, 1]
deg = reduce_rows(A)
N = reduce_all(r * 0 + 1)
delta = reduce_all(r)
while delta > 1e-10 max n {
  w = ewise_mult(r, deg, div)
  dangling = reduce_all(r) - reduce_all(w * deg)
  new = 0.85 * (A.T @ w) + (0.85 * dangling + 0.15) / N
  delta = reduce_all(abs(new - r))
  r = new
}
output r, delta
"""


def test_a_file_loop_carries_what_the_body_reassigns():
    f = dp.Function(parse(PAGERANK, "pr.dspla"))
    (w,) = [n for n in f.program.toposort() if n.op is Op.WHILE]
    assert w.attr("max_iter") == "n" and [p.attr("name") for p in w.attr("body").declared[:2]] == ["delta", "r"]
    a, r0 = _data(60, 3)
    a.data[:] = 1.0
    out = f(A=a, r=np.full((60, 1), 1 / 60))
    nx = pytest.importorskip("networkx")
    pr = nx.pagerank(nx.from_scipy_sparse_array(a, create_using=nx.DiGraph), alpha=0.85, tol=1e-13)
    np.testing.assert_allclose(out["r"].to_numpy()[:, 0], [pr[i] for i in range(60)], atol=1e-9)


@pytest.mark.parametrize("text,where,what", [
    ("input x : dense[n, 1]\nwhile reduce_all(x) > 0 max 3 {\n  y = x\n}\noutput x\n", "bad.dspla:2:1",
     "changes nothing defined before it"),
    ("input x : dense[n, 1]\nwhile reduce_all(x) > 0 max 3 {\n  x = x * 2\n  output x\n}\n", "bad.dspla:4:3",
     "'output' belongs after the loop"),
    ("input x : dense[n, 1]\nwhile reduce_all(x) > 0 max 3 {\n  t = x * 2\n  x = t\n}\noutput t\n", "bad.dspla:6:8",
     "unknown variable 't'"),
    ("input x : dense[n, 1]\nwhile x > 0 max 3 {\n  x = x * 2\n}\noutput x\n", "bad.dspla:2:7", "1 x 1 bool"),
    ("input x : dense[n, 1]\nwhile reduce_all(x) > 0 {\n  x = x * 2\n}\noutput x\n", "bad.dspla:2:25",
     "a loop needs its bound: while CONDITION max N"),
])
def test_file_loop_errors_point_at_the_line(text, where, what):
    with pytest.raises(DsplaError) as e:
        parse(text, "bad.dspla")
    assert where in str(e.value) and what in str(e.value)


def test_comparisons_in_files_and_python():
    f = dp.Function(parse("input x : dense[n, 1]\ninput y : dense[n, 1]\na = x > 0.5\nb = x <= y\n"
                          "c = 0.5 < x\noutput a, b, c\n", "c.dspla"))
    xv, yv = np.array([[0.2], [0.7], [0.5]]), np.array([[0.1], [0.9], [0.5]])
    out = f(x=xv, y=yv)
    np.testing.assert_array_equal(out["a"].to_numpy(), xv > 0.5)
    np.testing.assert_array_equal(out["b"].to_numpy(), xv <= yv)
    np.testing.assert_array_equal(out["c"].to_numpy(), xv > 0.5)
    x = dp.dense("x", ("n", 1))
    e = x == 0.7
    assert isinstance(e, dp.Expr) and e.dtype.value == "bool"
    assert {x: 1}[x] == 1   # expressions stay usable as dict keys


@pytest.mark.parametrize("P", [1, 2, 3])
def test_a_result_that_is_another_carried_value_is_its_old_value(P):
    """body(x, p) -> (x + 1, x): p takes x's value from before the step (carried values are
    assigned all at once, not one after another), against a Fibonacci-like hand count."""
    x0 = dp.dense("x", ("n", 1))

    def body(x, p, q):
        return x + p, x, p   # (a, b, c) -> (a + b, a, b)

    (x, p, q), _ = dp.while_loop(lambda x, p, q: dp.reduce_all(x) < 1e9, body, (x0, x0, x0 * 0), 6, count=True)
    f = dp.function({"x": x, "p": p, "q": q})
    start = np.ones((4, 1))
    a, b, c = 1.0, 1.0, 0.0
    for _ in range(6):
        a, b, c = a + b, a, b
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (the loop stops at its bound)
        out = f(x=start) if P == 1 else run_dist(f, {"x": start}, P)[0]
    for name, want in (("x", a), ("p", b), ("q", c)):
        np.testing.assert_array_equal(out[name].to_numpy(), np.full((4, 1), want), err_msg=name)


def test_a_loop_bounded_by_max_0_is_warned_about_where_it_is(tmp_path, capsys):
    """`max 0` lets the body never run: valid, but the results are the starting values whatever
    the condition says, which is unlikely to be meant. check and explain say so at the loop, for
    a loop inside a loop too and for the DSL's while_loop; a bound above 0 or a dim is not warned."""
    from dspla.cli.main import main
    from dspla.frontend.parser import parse
    from dspla.ir.lint import lint_warnings
    src = ("input x : dense[n, 1]\ns = reduce_all(x)\nt = s\n"
           "while s > 0 max 0 {\n  s = s - 1\n}\n"
           "while t > 0 max 3 {\n  u = t\n  while u > 0 max 0 {\n    u = u - 1\n  }\n  t = t - u\n}\n"
           "while t > 0 max n {\n  t = t - 1\n}\noutput s, t\n")
    (tmp_path / "p.dspla").write_text(src)
    assert main(["check", str(tmp_path / "p.dspla")]) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "warning" in ln]
    assert [ln.split(": warning")[0].rsplit(":", 2)[1:] for ln in lines] == [["4", "1"], ["9", "3"]]
    assert all("runs at most 0 times (max 0)" in ln for ln in lines)
    f = dp.Function(parse(src, "p.dspla"))
    assert "p.dspla:4:1: warning: this loop runs at most 0 times" in f.explain()
    x = dp.dense("x", ("n", 1))
    (y,) = dp.while_loop(lambda v: dp.reduce_all(v) > 0, lambda v: (v - 1,), (x,), 0)
    assert len(lint_warnings(dp.function({"y": y}).source_program)) == 1
    (y,) = dp.while_loop(lambda v: dp.reduce_all(v) > 0, lambda v: (v - 1,), (x,), 5)
    assert lint_warnings(dp.function({"y": y}).source_program) == []
