"""A plan asked for by name is run or refused: one that cannot run a product is an error naming
the reason (exit 2 on the command line, a DsplaError in Python), on every P; it was replaced by
another silently. Plans can be asked per product, by the product's output or value name."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import dspla as dp
from dspla.errors import PlanError, UnknownNameError
from dspla.runtime.comm.sim import run_simulated

LAYER = """input A : sparse[n, n]
input X : dense[n, f]
Z = A @ X
T = mxm(A, X, plus_second)
H = relu(Z)
output H, T
"""

BFS_STEP = """input A : sparse[n, n]
input s : sparse[n, 1] bool
visited = s
f = mxm(A.T, s, any_pair, mask=visited, complement=true, structure=true)
output f
"""


def dspla(*args):
    return subprocess.run([sys.executable, "-m", "dspla.cli.main", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def files(tmp_path):
    a = sp.random_array((40, 40), density=0.1, random_state=1, format="coo")
    scipy.io.mmwrite(tmp_path / "a.mtx", a)
    np.save(tmp_path / "x.npy", np.arange(40 * 3, dtype=np.float64).reshape(40, 3))
    (tmp_path / "layer.dspla").write_text(LAYER)
    (tmp_path / "bfs.dspla").write_text(BFS_STEP)
    return tmp_path


def _layer(files, *extra):
    return dspla("run", files / "layer.dspla", "-i", f"A={files / 'a.mtx'}", "-i", f"X={files / 'x.npy'}", *extra)


def test_an_impossible_plan_exits_2_on_one_process(files):
    r = _layer(files, "--plan", "shift1d", "--replication", "2")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == ("dspla: error: plan shift1d, asked for Z = mxm[plus_times](A, X), cannot run it on "
                                "1 process: replication c=2 must divide P=1 (use --replication with a divisor of P)")
    r = dspla("run", files / "bfs.dspla", "-i", f"A={files / 'a.mtx'}", "-i", "s=unit:0", "--np", "1", "--plan", "2d")
    assert r.returncode == 2 and "2d does not run masked products" in r.stderr and "Traceback" not in r.stderr
    r = _layer(files, "--plan", "2d")   # a plan that can run (a 1 x 1 grid) runs
    assert r.returncode == 0, r.stderr


@pytest.mark.mpi
@pytest.mark.parametrize("P", [2, 3])
def test_an_impossible_plan_exits_2_on_several_processes(files, P):
    r = _layer(files, "--np", P, "--plan", "2d")
    assert r.returncode == 2, r.stderr
    err = r.stderr.strip().splitlines()
    assert err == [f"dspla: error: plan 2d, asked for Z = mxm[plus_times](A, X), cannot run it on {P} processes: 2d "
                   f"needs a square process count (s x s grid); P={P} is not square: use p2p1d, 15d or shift1d (with "
                   "a replication c dividing P)"]
    r = dspla("run", files / "bfs.dspla", "-i", f"A={files / 'a.mtx'}", "-i", "s=unit:0", "--np", "2", "--plan", "2d",
              "--rank0-planning")
    assert r.returncode == 2 and "2d does not run masked products" in r.stderr, r.stderr


@pytest.mark.mpi
def test_plans_asked_per_product_on_the_command_line(files):
    r = _layer(files, "--np", "2", "--plan", "T=p2p1d", "--plan", "Z=allgather1d", "--stats", files / "s.json")
    assert r.returncode == 0, r.stderr
    import json
    stats = json.loads((files / "s.json").read_text())
    assert {p["expr"].split(" =")[0]: p["plan"] for p in stats["products"]} == {"Z": "allgather1d", "T": "p2p1d"}


@pytest.mark.parametrize("args,said", [
    (["--plan", "2d", "--plan", "T=p2p1d"], "--plan takes one plan for every product"),
    (["--plan", "T=p2p1d", "--plan", "T=2d"], "--plan T= given twice"),
    (["--plan", "Tx=p2p1d"], "unknown product 'Tx' in the plan option (products are named by their output or value "
                             "name) (did you mean 'T'?); valid products: T, Z"),
    (["--plan", "H=p2p1d"], "unknown product 'H'"),
    (["--plan", "T=p2pd1"], "unknown plan 'p2pd1' (did you mean 'p2p1d'?)"),
])
def test_a_bad_plan_option_is_refused_before_any_work(files, args, said):
    r = _layer(files, *args)
    assert r.returncode == 2 and said in r.stderr and r.stdout == "", r.stderr


def _fn():
    A, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "f"))
    return dp.function(outputs={"Z": A @ X, "T": dp.mxm(A, X, "plus_second")})


def _data():
    a = sp.random_array((50, 50), density=0.1, random_state=3, format="csr")
    return a, np.random.default_rng(0).random((50, 4))


def test_configure_an_impossible_plan_raises_on_one_process():
    a, x = _data()
    f = _fn().configure(plan="shift1d", replication=2)
    with pytest.raises(PlanError, match="replication c=2 must divide P=1"):
        f(A=a, X=x)


def test_configure_an_impossible_plan_raises_at_p2():
    a, x = _data()
    f = _fn().configure(plan="2d")

    def body(comm):
        return f.run({"A": a, "X": x} if comm.rank == 0 else None, comm=comm)

    with pytest.raises(dp.DsplaError, match=r"plan 2d, asked for (Z|T) = .*cannot run it on 2 processes: 2d needs a "
                                            r"square process count"):
        run_simulated(2, body, timeout=60)


def test_configure_plans_per_product_runs_each_as_asked():
    a, x = _data()
    f = _fn().configure(plan={"T": "p2p1d", "Z": "allgather1d"})

    def body(comm):
        out = f.run({"A": a, "X": x} if comm.rank == 0 else None, comm=comm)
        return {k: v.to_numpy(fill=np.nan) for k, v in out.items()}, f.last_stats

    (got, stats), _ = run_simulated(2, body, timeout=60)
    assert {p["expr"].split(" =")[0]: (p["plan"], p["why"]) for p in stats["products"]} == {
        "Z": ("allgather1d", "requested with --plan allgather1d"), "T": ("p2p1d", "requested with --plan p2p1d")}
    # the oracle: scipy's product; rows of A with no entry are missing in both outputs
    empty = np.diff(a.indptr) == 0
    z = a @ x
    t = a.astype(bool).astype(float) @ x
    z[empty], t[empty] = np.nan, np.nan
    np.testing.assert_allclose(got["Z"], z, rtol=1e-12)
    np.testing.assert_allclose(got["T"], t, rtol=1e-12)


def test_configure_names_products_that_exist():
    a, x = _data()
    with pytest.raises(UnknownNameError) as e:
        _fn().configure(plan={"Zz": "p2p1d"})(A=a, X=x)
    assert e.value.suggestions == ["Z"] and e.value.valid == ["T", "Z"]
    with pytest.raises(UnknownNameError, match="unknown plan 'twofase' .did you mean 'twoface'"):
        _fn().configure(plan={"Z": "twofase"})(A=a, X=x)
