"""explain's line about what moves outside products names the words those instructions send on
all ranks, and a run measures the same (a reduction's partials combined across ranks)."""
import pytest
import scipy.sparse as sp

import dspla as dp
from tests.harness import run_dist


@pytest.mark.parametrize("P", [2, 3, 4])
def test_words_outside_products_are_printed_and_measured(P):
    A = dp.sparse("A", ("n", 6))
    f = dp.function({"c": dp.reduce_cols(A * 2.0, "max"), "s": dp.reduce_all(A * 3.0)})
    a = sp.random_array((20, 6), density=0.4, random_state=P, format="csr")
    text = str(f.explain(P, A=a, partition="block"))
    line = next(ln for ln in text.splitlines() if "moved outside products" in ln)
    words = int(line.rsplit("words sent, all ranks: ", 1)[1])
    _, stats = run_dist(f, {"A": a}, P, partition="block")
    assert words == stats["words_sent_total"] > 0
