"""dspla generate: a seeded graph and node arrays in a folder, readable by every reader and by
scipy, the same for the same arguments; an SSSP run on its weighted graph equals scipy's
Dijkstra."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from dspla.cli.main import main

from conftest import ROOT


def _files(d):
    A = sp.csr_array(scipy.io.mmread(d / "graph.mtx"))
    return A, np.load(d / "x.npy"), np.load(d / "w.npy"), np.load(d / "labels.npy")


@pytest.mark.parametrize("graph", ["rmat", "random", "geometric", "sbm"])
def test_every_graph_is_written_with_its_arrays(tmp_path, graph, capsys):
    assert main(["generate", "--out", str(tmp_path / "d"), "--graph", graph, "--nodes", "300", "--features", "5",
                 "--width", "3", "--classes", "4", "--seed", "3"]) == 0
    A, X, W, y = _files(tmp_path / "d")
    n = A.shape[0]
    assert A.shape == (n, n) and (n == 512 if graph == "rmat" else n == 300)
    assert (A != A.T).nnz == 0 and A.diagonal().sum() == 0 and set(np.unique(A.data)) == {1.0}
    assert X.shape == (n, 5) and W.shape == (5, 3) and y.shape == (n,) and y.dtype == np.int64
    assert y.min() >= 0 and y.max() < 4
    out = capsys.readouterr().out
    assert f"graph.mtx: {n} x {n}, {A.nnz} entries" in out


def test_the_same_arguments_give_the_same_files(tmp_path):
    for d in ("a", "b"):
        assert main(["generate", "-o", str(tmp_path / d), "--graph", "random", "-n", "200", "-q",
                     "--weights", "random"]) == 0
    for name in ("graph.mtx", "x.npy", "w.npy", "labels.npy"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert main(["generate", "-o", str(tmp_path / "c"), "--graph", "random", "-n", "200", "-q", "--seed", "1"]) == 0
    assert (tmp_path / "a" / "graph.mtx").read_bytes() != (tmp_path / "c" / "graph.mtx").read_bytes()


def test_sssp_on_a_weighted_generated_graph_equals_dijkstra(tmp_path, capsys):
    d = tmp_path / "g"
    assert main(["generate", "-o", str(d), "--graph", "random", "-n", "150", "--avg-degree", "4", "--weights",
                 "random", "--directed", "-q"]) == 0
    A = sp.csr_array(scipy.io.mmread(d / "graph.mtx"))
    assert A.data.min() >= 1 and A.data.max() <= 9 and np.all(A.data == np.round(A.data))
    assert main(["run", str(ROOT / "examples" / "sssp.dspla"), "-i", f"A={d / 'graph.mtx'}", "-i", "s=unit:0",
                 "--out", str(tmp_path / "o.npz")]) == 0
    want = dijkstra(A, indices=0)
    with np.load(tmp_path / "o.npz") as z:
        got = np.full(A.shape[0], np.inf)
        got[z["d.rows"]] = z["d.values"]
    np.testing.assert_array_equal(got, want)


def test_bad_arguments_are_refused(tmp_path, capsys):
    assert main(["generate", "-o", str(tmp_path / "x"), "--graph", "sbm", "--directed"]) == 2
    assert "--directed: the sbm graph is undirected" in capsys.readouterr().err
    assert main(["generate", "-o", str(tmp_path / "x"), "--graph", "rmatt"]) == 2
    assert "invalid choice: 'rmatt' (did you mean 'rmat'?)" in capsys.readouterr().err
    assert main(["generate", "-o", str(tmp_path / "x"), "--nodes", "1"]) == 2
    assert "argument --nodes/-n: must be a whole number from 2 to" in capsys.readouterr().err
