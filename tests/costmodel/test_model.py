"""The cost model's arithmetic on hand-built counts, counts from real lowerings, the chain
pass, auto's choice and memory cap, and explain's output."""
import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.calibration.microbench import fit
from dspla.costmodel import Coefficients, predict, split
from dspla.plan.options import Options

K = Coefficients(alpha_p2p=1e-5, beta_p2p=1e-9, alpha_coll=2e-5, beta_coll=2e-9, alpha_get=3e-5, beta_get=3e-9,
                 beta_pack=5e-10, gamma=1e-9, delta=2e-9, kappa=1e-6)


def test_arithmetic_on_hand_built_counts():
    c = {"local_nnzk": 1000, "local_out": 100, "remote_nnzk": 500, "calls": 3, "pack_words": 200, "p2p_msgs": 4,
         "p2p_words": 400, "coll_steps": 2, "coll_words": 1000, "get_msgs": 5, "get_words": 50}
    t = split(c, K)
    assert t["local"] == pytest.approx(1000e-9 + 200e-9)
    assert t["remote"] == pytest.approx(500e-9)
    assert t["p2p_lat"] == pytest.approx(4e-5) and t["p2p_bw"] == pytest.approx(400e-9)
    assert t["coll_lat"] == pytest.approx(4e-5) and t["coll_bw"] == pytest.approx(2000e-9)
    assert t["get_lat"] == pytest.approx(15e-5) and t["get_bw"] == pytest.approx(150e-9)
    # p2p1d packs first (same thread), then overlaps the local product with its messages:
    # pack + max(local, transfer) + remote + overhead; here the transfer is the longer ...
    p = predict("p2p1d", [{"local_nnzk": 1000, "local_out": 100, "remote_nnzk": 500, "calls": 3, "pack_words": 200,
                           "p2p_msgs": 4, "p2p_words": 400}], K)
    assert p["predicted_s"] == pytest.approx(200 * 5e-10 + (400e-9 + 4e-5) + 500e-9 + 3e-6)
    # ... and here the local product, which hides the transfer entirely
    p = predict("p2p1d", [{"local_nnzk": 1e6, "remote_nnzk": 500, "calls": 3, "pack_words": 200,
                           "p2p_msgs": 4, "p2p_words": 400}], K)
    assert p["predicted_s"] == pytest.approx(200 * 5e-10 + 1e-3 + 500e-9 + 3e-6)
    # any other plan: the sum; the slowest rank decides
    q = predict("allgather1d", [{"local_nnzk": 10}, {"local_nnzk": 1000, "words_sent": 7, "messages_sent": 1}], K)
    assert q["predicted_s"] == pytest.approx(1000e-9) and q["slowest_rank"] == 1
    assert q["words_max"] == 7 and q["words_avg"] == 3.5 and q["messages_avg"] == 0.5


def test_more_processes_than_cores_share_them():
    from dataclasses import replace
    ranks = [{"local_nnzk": 1000}, {"local_nnzk": 600}, {"local_nnzk": 600}, {"local_nnzk": 200}]
    alone = predict("allgather1d", ranks, K)
    assert alone["predicted_s"] == pytest.approx(1000e-9) and not alone["oversubscribed"]
    # four processes on two cores: at least all their work shared by the two
    two = predict("allgather1d", ranks, replace(K, cores=2))
    assert two["predicted_s"] == pytest.approx(2400e-9 / 2) and two["oversubscribed"]
    # enough cores: the slowest process decides again
    assert predict("allgather1d", ranks, replace(K, cores=4))["predicted_s"] == pytest.approx(1000e-9)


def test_fit_recovers_known_coefficients():
    rng = np.random.default_rng(0)
    X = np.c_[np.ones(40), rng.uniform(1, 1e6, 40)]
    y = X @ np.array([3e-5, 2e-9]) * rng.uniform(0.98, 1.02, 40)
    f = fit(X, y, ["alpha", "beta"])
    assert f["coefficients"]["alpha"] == pytest.approx(3e-5, rel=0.1)
    assert f["coefficients"]["beta"] == pytest.approx(2e-9, rel=0.05)
    assert f["r2"] > 0.99


def test_refit_recovers_coefficients_despite_an_outlier_run():
    """The end-to-end refit on synthetic plan runs made from known coefficients: one run taking
    30x its time (a descheduled collective at P > cores) must not drag the fit."""
    from dataclasses import replace

    from dspla.costmodel.fit import refit
    rng = np.random.default_rng(0)
    true = replace(K, gamma=4e-10, beta_coll=3e-9)
    records = []
    for _ in range(30):
        counts = [{"local_nnzk": float(rng.uniform(1e5, 1e7)), "coll_words": float(rng.uniform(1e4, 1e6)),
                   "calls": 1.0, "instrs": 3.0} for _ in range(2)]
        t = predict("allgather1d", counts, true)["predicted_s"] * rng.uniform(0.97, 1.03)
        records.append({"plan": "allgather1d", "counts": counts, "measured_s": t})
    records[7]["measured_s"] *= 30
    fitted, report = refit(records, replace(true, gamma=1e-9, beta_coll=1e-8))
    assert fitted.gamma == pytest.approx(4e-10, rel=0.15)
    assert fitted.beta_coll == pytest.approx(3e-9, rel=0.3)
    assert report["after"]["within_0.67_1.5"] >= 29 / 30



def test_a_plans_own_cost_is_its_factor_and_the_coefficients_stay():
    """Two plans priced by the same coefficients, one taking 2.5x what its counts say (a plan
    that assembles whole operands): the refit gives that plan a factor 2.5x the other's, and
    leaves the coefficients the runs of both agree on."""
    from dataclasses import replace

    from dspla.costmodel.fit import refit
    rng = np.random.default_rng(1)
    records = []
    for plan, cost in (("p2p1d", 1.0), ("allgather1d", 2.5)):
        for _ in range(20):
            counts = [{"remote_nnzk" if plan == "p2p1d" else "local_nnzk": float(rng.uniform(1e5, 1e7)),
                       "p2p_words" if plan == "p2p1d" else "coll_words": float(rng.uniform(1e4, 1e6)),
                       "calls": 1.0}]
            records.append({"plan": plan, "counts": counts,
                            "measured_s": cost * predict(plan, counts, K)["predicted_s"] * rng.uniform(0.97, 1.03)})
    fitted, report = refit(records, replace(K, gamma=2e-9))
    assert fitted.factor("allgather1d") / fitted.factor("p2p1d") == pytest.approx(2.5, rel=0.1)
    assert fitted.factor("3d") == 1.0   # a plan not run: its counts alone
    assert report["after"]["within_0.67_1.5"] == 1.0 and report["plan_factors"]["p2p1d"] == fitted.factor("p2p1d")
    # the factor scales every part of the plan's time (explain's compute / comm / latency add up)
    p = predict("allgather1d", records[-1]["counts"], fitted)
    assert p["compute_s"] + p["comm_s"] + p["latency_s"] == pytest.approx(p["predicted_s"])
    assert p["predicted_s"] == pytest.approx(fitted.factor("allgather1d") * predict(
        "allgather1d", records[-1]["counts"], replace(fitted, plan_factors=()))["predicted_s"])


def test_plan_factors_are_kept_with_the_calibration(tmp_path):
    from dataclasses import replace

    from dspla.costmodel.coefficients import load, save
    path = save(replace(K, plan_factors=(("allgather1d", 1.4), ("p2p1d", 0.7))), {}, str(tmp_path / "c.json"))
    assert json.load(open(path))["coefficients"]["plan_factors"] == {"allgather1d": 1.4, "p2p1d": 0.7}
    back = load(path=path)
    assert back.factor("p2p1d") == 0.7 and back.factor("allgather1d") == 1.4 and back.factor("twoface") == 1.0


def _spmm():
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "k"))
    return dp.function(outputs={"T": A @ X})


def _data(n=80, k=6, seed=1):
    rng = np.random.default_rng(seed)
    return {"A": sp.random_array((n, n), density=0.06, random_state=rng, format="csr"), "X": rng.random((n, k))}


def test_counts_from_the_lowering_equal_the_analysis():
    from dspla.analysis import comm_stats
    d = _data()
    parts = np.random.default_rng(3).integers(0, 4, 80)
    plan = _spmm().plan(4, d, Options(plan="p2p1d", parts=parts, coefficients=K)).plan
    cand = plan.products[0].candidates[0]
    cs = comm_stats(d["A"], parts, 4, K=6)
    assert cand["words_avg"] * 4 == 6 * cs.volume_total
    assert cand["messages_avg"] * 4 == cs.messages_total


def test_p2p1d_local_product_counts_as_local_even_in_place():
    """The product on a rank's own rows is the one that overlaps the messages, whether it
    writes a new output or accumulates into a full one (B full: in place)."""
    d = _data()
    parts = np.random.default_rng(3).integers(0, 4, 80)
    plan = _spmm().plan(4, d, Options(plan="p2p1d", parts=parts, coefficients=K)).plan
    for r, c in enumerate(plan.products[0].counts["p2p1d"]):
        A = d["A"].tocsr()
        own = parts == r
        assert c["local_nnzk"] == 6 * A[own][:, own].nnz
        assert c["remote_nnzk"] == 6 * A[own][:, ~own].nnz


def test_auto_picks_the_lowest_prediction_and_respects_the_memory_cap():
    d = _data(200, 32)
    plan = _spmm().plan(4, d, Options(plan="auto", partition="random", coefficients=K)).plan
    cands = [c for c in plan.products[0].candidates if "predicted_s" in c and "skipped" not in c]
    assert len(cands) >= 2
    best = min(cands, key=lambda c: c["predicted_s"])
    assert plan.products[0].plan == best["plan"] and "lowest predicted time" in plan.products[0].why
    # a cap below the best plan's memory excludes it
    cap = best["memory_bytes"] - 1
    plan2 = _spmm().plan(4, d, Options(plan="auto", partition="random", coefficients=K, memory_cap=cap)).plan
    chosen = next(c for c in plan2.products[0].candidates if c["plan"] == plan2.products[0].plan)
    assert chosen["memory_bytes"] <= cap or "every plan exceeds" in " ".join(plan2.products[0].notes)


def test_chain_order_by_work():
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "f"))
    W = dp.dense("W", ("f", "o"))
    f = dp.function(outputs={"Z": A @ X @ W, "Q": dp.mxm(dp.mxm(A, X, "plus_pair"), W, "plus_pair")})
    rng = np.random.default_rng(0)
    a = sp.random_array((60, 60), density=0.1, random_state=rng, format="csr")
    for fi, fo, want_inner in [(50, 4, ("X", "W")), (4, 50, ("A", "X"))]:
        inputs = dict(A=a, X=rng.random((60, fi)), W=rng.random((fi, fo)))
        prog = f.bound(*f.bind(inputs))
        z = dict(prog.outputs)["Z"]
        inner = next(x for x in z.args if x.op.value == "mxm")
        assert tuple(x.label for x in inner.args) == want_inner
        q = dict(prog.outputs)["Q"]  # plus_pair is not associative: never re-ordered
        assert q.args[0].op.value == "mxm" and q.args[0].args[0].label == "A"
        out = f(**inputs)
        np.testing.assert_allclose(out["Z"].to_numpy(fill=0), a @ inputs["X"] @ inputs["W"], rtol=1e-12)


def test_chain_order_in_a_loop_body_and_none_elsewhere():
    """A chain inside a loop's body (on a carried value) is re-ordered like one outside: z W
    (width 4) before A, instead of A z (width 50); checked against numpy. A program with no chain
    comes back as the same object (nothing rebuilt)."""
    from dspla.passes import chain_order
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "f"))
    W = dp.dense("W", ("f", "o"))
    V = dp.dense("V", ("o", "f"))
    (Z, _) = dp.while_loop(lambda z, i: i < 2, lambda z, i: (A @ z @ W @ V, i + 1), (X, dp.scalar("i0", "int64")), 5)
    f = dp.function({"Z": Z})
    rng = np.random.default_rng(1)
    a = sp.random_array((60, 60), density=0.1, random_state=rng, format="csr")
    inputs = dict(A=a, X=rng.random((60, 50)), W=rng.random((50, 4)), V=rng.random((4, 50)), i0=0)
    prog = f.bound(*f.bind(inputs))
    body = next(n for n in prog.toposort() if n.op.value == "while").attr("body")
    prod = next(n for n in body.toposort() if n.op.value == "mxm" and n.args[0].label == "A")
    assert prod.args[1].op.value == "mxm"   # (as written, A's operand is the carried z itself)
    m = a.toarray()
    want = m @ (m @ inputs["X"] @ inputs["W"] @ inputs["V"]) @ inputs["W"] @ inputs["V"]
    np.testing.assert_allclose(f(**inputs)["Z"].to_numpy(fill=0), want, rtol=1e-10)
    g = dp.function({"Y": dp.mxm(A, X, "plus_pair") @ W})   # (plus_pair then plus_times: no chain)
    assert chain_order(g.program, {"n": 60, "f": 50, "o": 4}) is g.program


def test_explain_json_is_stable_and_parseable(tmp_path):
    (tmp_path / "p.dspla").write_text("input A : sparse[n, n]\ninput X : dense[n, k]\nT = A @ X\noutput T\n")
    cmd = [sys.executable, "-m", "dspla.cli.main", "explain", str(tmp_path / "p.dspla"), "--np", "3", "--dim", "n=500",
           "--dim", "k=16", "--partition", "random", "--json"]
    outs = [subprocess.run(cmd, capture_output=True, text=True) for _ in range(2)]
    assert all(o.returncode == 0 for o in outs), outs[0].stderr
    a, b = (json.loads(o.stdout) for o in outs)
    assert [p["chosen"] for p in a["products"]] == [p["chosen"] for p in b["products"]]
    assert a["P"] == 3 and len(a["products"]) == 1
    prod = a["products"][0]
    assert set(prod) >= {"expr", "chosen", "candidates"}
    keys = {"plan", "predicted_s", "compute_s", "comm_s", "latency_s", "words_avg", "words_max", "messages_avg",
            "messages_max", "memory_bytes"}
    assert any(set(c) >= keys for c in prod["candidates"])
    assert prod["chosen"] in {c["plan"] for c in prod["candidates"]}
    text = subprocess.run(cmd[:-1], capture_output=True, text=True).stdout
    assert "chosen:" in text and "program after passes" in text and "predicted" in text
