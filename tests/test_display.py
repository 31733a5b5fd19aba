"""Notebook display: results, explain and stats have HTML and Markdown forms; missing entries
show as missing (never as zero); a distributed result shows no entries (no collective)."""
import numpy as np
import scipy.sparse as sp

import dspla as dp
from dspla.display import Stats, Text
from dspla.runtime.comm.sim import run_simulated


def _f():
    A, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    return dp.function(outputs={"T": dp.mxm(A, X, "min_plus")})


A = sp.csr_array(np.array([[0, 1.0, 0], [0, 0, 0], [2.0, 0, 0]]))
X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


def test_result_shows_its_entries_and_marks_missing_ones():
    t = _f()(A=A, X=X)["T"]
    md = t._repr_markdown_()
    assert "T: 3x2 float64, 4 present" in md
    assert "| 4 | 5 |" in md and "| · | · |" in md and "| 3 | 4 |" in md
    html = t._repr_html_()
    assert "<td>·</td>" in html and "<td>5</td>" in html


def test_a_large_result_is_previewed():
    x = np.arange(200.0).reshape(20, 10)
    X_ = dp.dense("X", ("n", "k"))
    t = dp.function(outputs={"Y": X_ * 1})(X=x)["Y"]
    md = t._repr_markdown_()
    assert md.count("\n| ") == 9   # header, separator, 6 rows, the ⋮ row
    assert "…" in md and "⋮" in md


def test_explain_and_stats_render():
    f = _f()
    e = f.explain(np=2, dims={"n": 50, "k": 4})
    assert isinstance(e, Text) and e._repr_markdown_().startswith("```\n") and "<pre>" in e._repr_html_()
    f.run({"A": A, "X": X})
    s = f.last_stats
    assert isinstance(s, Stats)
    assert "<table>" in s._repr_html_() and "| rank |" in s._repr_markdown_()
    assert f"| words_sent_total | {s['words_sent_total']} |" in s._repr_markdown_()


def test_a_distributed_result_shows_no_entries():
    f = _f()

    def body(comm):
        out = f.run({"A": A, "X": X} if comm.rank == 0 else None, comm=comm)
        return out["T"]._repr_markdown_()
    got = run_simulated(2, body, timeout=60)
    assert all("distributed" in g and "|" not in g for g in got)


def test_an_n_by_1_result_as_a_graphblas_vector():
    import graphblas as gb
    import pytest
    Ae, xe = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 1))
    out = dp.function(outputs={"y": dp.mxm(Ae, xe, "min_plus"), "M": Ae @ Ae})(A=A, x=X[:, :1])
    v = out["y"].to_graphblas(vector=True)
    assert isinstance(v, gb.Vector) and v.size == 3 and v.to_coo()[0].tolist() == [0, 2]   # row 1 is empty
    assert v.to_coo()[1].tolist() == [4.0, 3.0]
    with pytest.raises(ValueError, match="not a column vector"):
        out["M"].to_graphblas(vector=True)
