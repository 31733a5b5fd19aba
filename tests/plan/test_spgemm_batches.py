"""Sparse x sparse products made in column batches when their predicted memory exceeds the memory
per rank (--memory-per-rank): the result equals scipy's product exactly (integers), batched or
not, on every P and plan where batching applies; explain and the predicted memory show it."""
from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp
from test_spgemm import _entries, _graph, _masked, _square  # (the same products and oracle)

from harness import run_dist

CAP = 40_000   # bytes per rank: a 90-node product's blocks need ~50-90 kB unbatched


CASES = [("summa2d_sparse", 4, {}), ("spgemm3d", 2, {}), ("spgemm3d", 3, {"replication": 3}), ("spgemm3d", 4, {})]


@pytest.mark.parametrize("spmd", [True, False])
@pytest.mark.parametrize("plan,P,opt", CASES)
def test_batched_product_equals_scipy(plan, P, opt, spmd):
    A = _graph(90, 0.05, P)
    want = _entries(A @ A)
    got, stats = run_dist(_square(), {"A": A}, P, plan=plan, spmd=spmd, **opt)
    one = stats["products"][0]["predicted"]
    assert one["batches"] == 1 and _entries(got["C"].to_scipy()) == want
    got, stats = run_dist(_square(), {"A": A}, P, plan=plan, spmd=spmd, memory_cap=CAP, **opt)
    p = stats["products"][0]
    assert p["plan"] == plan and p["predicted"]["batches"] > 1
    assert _entries(got["C"].to_scipy()) == want
    # one batch of C and its triplets at a time: less memory predicted; the same entries moved
    assert p["predicted"]["memory_bytes"] < one["memory_bytes"]
    assert p["words_sent_total"] == stats["products"][0]["words_sent_total"]


@pytest.mark.parametrize("plan,P,opt", CASES)
def test_batched_masked_product_equals_scipy(plan, P, opt):
    A = _graph(80, 0.08, 10 + P)
    A = (A + A.T).astype(np.int64)
    got, stats = run_dist(_masked(), {"A": A}, P, plan=plan, memory_cap=CAP // 4, **opt)
    assert stats["products"][0]["predicted"]["batches"] > 1
    L = sp.tril(A, -1, format="csr")
    want = sp.csr_array((L @ L).multiply(L != 0))
    want.eliminate_zeros()
    assert _entries(got["T"].to_scipy()) == _entries(want)


def test_explain_shows_the_batches_and_p2p1d_keeps_its_rows():
    A = _graph(90, 0.05, 4)
    text = _square().explain(np=4, A=A, memory_cap=CAP, plan="summa2d_sparse")
    assert re.search(r"C in \d+ column batches", text) and "to fit the memory per rank" in text
    assert "rows of C stay whole" in _square().explain(np=4, A=A, memory_cap=CAP // 10, plan="p2p1d")
    text = _square().explain(np=4, A=A, memory_cap=CAP)
    assert re.search(r"\(C in \d+ column batches\)", text)
    assert all("over cap" not in ln for ln in text.splitlines() if "column batches" in ln)   # (b fits)
    line = next(ln for ln in text.splitlines() if ln.strip().startswith(("* p2p1d", "p2p1d")))
    assert "batches" not in line   # (p2p1d holds its rows of C whole: batches would not lower its peak)
    assert "column batches" not in _square().explain(np=4, A=A)
