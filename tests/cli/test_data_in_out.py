"""Data in and out exactly as given, from the command line: a weighted edge list's distances
(against scipy's Dijkstra), original node ids (unit:ID in, NAME.ids out), the results file read
with numpy, whole-number floats into an integer input, a shard set serving a program that takes
some of its inputs, and a program binding a symbolic dim to a size."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from dspla.cli.main import main
from dspla.formats.results import read_results

from conftest import ROOT

SSSP = str(ROOT / "examples" / "sssp.dspla")


def test_weighted_edge_list_sssp_matches_dijkstra(tmp_path, capsys):
    (tmp_path / "w3.txt").write_text("0 1 5.0\n1 2 7.5\n0 2 20\n")
    assert main(["run", SSSP, "-i", f"A={tmp_path / 'w3.txt'}", "-i", "s=unit:0",
                 "--out", str(tmp_path / "o.npz")]) == 0
    d = np.load(tmp_path / "o.npz")["d"]          # every node reached: a plain array
    assert d[:, 0].tolist() == [0.0, 5.0, 12.5]
    A = sp.csr_array(([5.0, 7.5, 20.0], ([0, 1, 0], [1, 2, 2])), shape=(3, 3))
    assert d[:, 0].tolist() == dijkstra(A, indices=0).tolist()
    # dropped on request: every edge 1
    assert main(["run", SSSP, "-i", f"A={tmp_path / 'w3.txt'}:unweighted", "-i", "s=unit:0",
                 "--out", str(tmp_path / "u.npz")]) == 0
    assert np.load(tmp_path / "u.npz")["d"][:, 0].tolist() == [0.0, 1.0, 1.0]


def test_a_larger_weighted_list_with_sparse_ids(tmp_path, capsys):
    rng = np.random.default_rng(5)
    n, m = 80, 300
    names = np.sort(rng.choice(10**9, n, replace=False))
    src, dst = rng.integers(0, n, m), rng.integers(0, n - 10, m)
    w = rng.integers(1, 20, m)
    (tmp_path / "g.txt").write_text("".join(f"{names[a]} {names[b]} {x}\n" for a, b, x in zip(src, dst, w)))
    source = int(names[src[0]])
    assert main(["run", SSSP, "-i", f"A={tmp_path / 'g.txt'}", "-i", f"s=unit:{source}",
                 "--out", str(tmp_path / "o.npz")]) == 0
    res = read_results(tmp_path / "o.npz")["d"]
    used = np.unique(np.r_[src, dst])
    assert res.ids.tolist() == names[used].tolist()   # row k is the node the file calls ids[k]
    # the oracle: scipy's dijkstra on the first weight of each listed edge, by original id
    first: dict = {}
    for a, b, x in zip(src, dst, w):
        first.setdefault((names[a], names[b]), float(x))
    where = {v: k for k, v in enumerate(names[used])}
    D = np.zeros((len(used), len(used)))
    for (a, b), x in first.items():
        if a != b:
            D[where[a], where[b]] = x
    want = dijkstra(D, indices=where[source])
    got = np.where(res.present, res.values, np.inf)[:, 0]
    assert np.isinf(want).any()
    np.testing.assert_array_equal(got, want)
    merged = m - len(first)
    err = capsys.readouterr().err
    assert (f"{merged} edges listed more than once, merged" in err) == (merged > 0)


def test_ids_round_trip_and_unit_by_original_id(tmp_path, capsys):
    (tmp_path / "ids.txt").write_text("# SNAP\n5 10\n10 2000\n2000 77777\n5 10\n")
    assert main(["run", SSSP, "-i", f"A={tmp_path / 'ids.txt'}", "-i", "s=unit:10", "--out",
                 str(tmp_path / "o.npz")]) == 0
    assert "1 edge listed more than once, merged" in capsys.readouterr().err
    z = np.load(tmp_path / "o.npz")
    assert z["d.ids"].tolist() == [5, 10, 2000, 77777]
    # from 10: 5 unreached (missing), 10 at 0, 2000 at 1, 77777 at 2 (unweighted: 1 an edge)
    assert z["d.rows"].tolist() == [1, 2, 3] and z["d.values"].tolist() == [0.0, 1.0, 2.0]
    assert main(["run", SSSP, "-i", f"A={tmp_path / 'ids.txt'}", "-i", "s=unit:3"]) == 2
    assert "the graph A has no node 3 (4 nodes; its ids run 5..77777)" in capsys.readouterr().err
    assert main(["run", SSSP, "-i", f"A={tmp_path / 'ids.txt'}:duplicates=error", "-i", "s=unit:5"]) == 2
    assert "ids.txt:5: an edge listed again: '5 10'" in capsys.readouterr().err


def test_whole_floats_in_a_real_mtx_feed_an_int64_input(tmp_path, capsys):
    (tmp_path / "p.dspla").write_text("input A : sparse[n, n] int64\nC = mxm(A, A, plus_times)\noutput C\n")
    (tmp_path / "a.mtx").write_text("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 2 2.0\n2 1 3\n2 2 1e0\n")
    assert main(["run", str(tmp_path / "p.dspla"), "-i", f"A={tmp_path / 'a.mtx'}", "--out",
                 str(tmp_path / "o.npz")]) == 0
    C = np.load(tmp_path / "o.npz")["C"]
    assert C.dtype == np.int64 and C.tolist() == [[6, 2], [3, 7]]
    (tmp_path / "b.mtx").write_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 2.0\n2 1 3.5\n")
    assert main(["run", str(tmp_path / "p.dspla"), "-i", f"A={tmp_path / 'b.mtx'}"]) == 2
    err = capsys.readouterr().err
    assert "b.mtx: the entry at (1, 0) (0-based) is 3.5, not a whole number, but A is declared int64" in err


def test_a_shard_set_serves_a_program_taking_some_of_its_inputs(tmp_path):
    rng = np.random.default_rng(0)
    A = sp.random_array((50, 50), density=0.1, rng=rng, format="csr")
    scipy.io.mmwrite(tmp_path / "g.mtx", A)
    np.save(tmp_path / "x.npy", rng.random((50, 3)))
    assert main(["shard", "-i", f"A={tmp_path / 'g.mtx'}", "-i", f"X={tmp_path / 'x.npy'}", "-P", "1",
                 "--out", str(tmp_path / "s"), "-q"]) == 0
    (tmp_path / "deg.dspla").write_text("input A : sparse[n, n]\ninput r : dense[n, 1]\nD = A @ r\noutput D\n")
    assert main(["run", str(tmp_path / "deg.dspla"), "--shards", str(tmp_path / "s"), "-i", "r=full:1",
                 "--out", str(tmp_path / "o.npz")]) == 0   # X is not read; n comes from the set
    vals, pres = read_results(tmp_path / "o.npz")["D"]
    has = np.diff(sp.csr_array(A).indptr) > 0
    np.testing.assert_allclose(vals[has, 0], A.sum(axis=1)[has], rtol=1e-12)
    assert not pres[~has].any()
    (tmp_path / "none.dspla").write_text("input B : sparse[n, n]\nC = B @ B\noutput C\n")
    assert main(["run", str(tmp_path / "none.dspla"), "--shards", str(tmp_path / "s")]) == 2


def test_a_file_binds_a_symbolic_dim_to_a_size(tmp_path, capsys):
    (tmp_path / "p.dspla").write_text("input X : dense[n, 4]\ninput Y : dense[n, c]\nZ = X + Y\noutput Z\n")
    np.save(tmp_path / "x.npy", np.ones((3, 4)))
    np.save(tmp_path / "y.npy", np.arange(12.0).reshape(3, 4))
    assert main(["run", str(tmp_path / "p.dspla"), "-i", f"X={tmp_path / 'x.npy'}", "-i", f"Y={tmp_path / 'y.npy'}",
                 "--out", str(tmp_path / "o.npz")]) == 0
    assert np.load(tmp_path / "o.npz")["Z"].tolist() == (np.arange(12.0).reshape(3, 4) + 1).tolist()
    assert main(["run", str(tmp_path / "p.dspla"), "-i", f"X={tmp_path / 'x.npy'}", "-i", "Y=full:2",
                 "--out", str(tmp_path / "f.npz")]) == 0    # c's size from the program
    assert np.load(tmp_path / "f.npz")["Z"].tolist() == np.full((3, 4), 3.0).tolist()
    np.save(tmp_path / "y3.npy", np.ones((3, 3)))
    assert main(["run", str(tmp_path / "p.dspla"), "-i", f"X={tmp_path / 'x.npy'}", "-i",
                 f"Y={tmp_path / 'y3.npy'}"]) == 2
    assert "dimension 'c' is 4 from the program, where it meets that size" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["0 1 nan\n"])
def test_a_non_finite_weight_is_refused_unless_unweighted(tmp_path, capsys, text):
    (tmp_path / "n.txt").write_text(text)
    assert main(["run", SSSP, "-i", f"A={tmp_path / 'n.txt'}", "-i", "s=unit:0"]) == 2
    assert "n.txt:1: 1 NaN or infinite weight(s)" in capsys.readouterr().err
    assert main(["run", SSSP, "-i", f"A={tmp_path / 'n.txt'}:unweighted", "-i", "s=unit:0"]) == 0


def test_a_shard_set_keeps_the_node_ids(tmp_path):
    (tmp_path / "g.txt").write_text("5 10 1\n10 2000 2\n2000 77777 3\n77777 5 4\n")
    assert main(["shard", "-i", f"A={tmp_path / 'g.txt'}", "-P", "1", "--out", str(tmp_path / "s"), "-q"]) == 0
    assert main(["run", SSSP, "--shards", str(tmp_path / "s"), "-i", "s=unit:5", "--out",
                 str(tmp_path / "o.npz")]) == 0   # node 5, by the id the edge list gave it
    z = np.load(tmp_path / "o.npz")
    assert z["d.ids"].tolist() == [5, 10, 2000, 77777]
    assert z["d"][:, 0].tolist() == [0.0, 1.0, 3.0, 6.0]   # 5 -> 10 -> 2000 -> 77777, lengths 1, 2, 3


@pytest.mark.mpi
def test_weighted_ids_under_mpiexec(tmp_path):
    """The same at P = 2: the weights kept, the ids in the file written by rank 0."""
    import subprocess
    import sys
    from pathlib import Path
    (tmp_path / "g.txt").write_text("5 10 1\n10 2000 2.5\n2000 77777 3\n5 77777 9\n77777 5 1\n")
    r = subprocess.run([str(Path(sys.executable).parent / "dspla"), "run", SSSP, "--np", "2", "-i",
                        f"A={tmp_path / 'g.txt'}", "-i", "s=unit:5", "--out", str(tmp_path / "o.npz")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    z = np.load(tmp_path / "o.npz")
    assert z["d.ids"].tolist() == [5, 10, 2000, 77777]
    A = sp.csr_array(([1, 2.5, 3, 9, 1], ([0, 1, 2, 0, 3], [1, 2, 3, 3, 0])), shape=(4, 4))
    assert z["d"][:, 0].tolist() == dijkstra(A, indices=0).tolist() == [0.0, 1.0, 3.5, 6.5]
