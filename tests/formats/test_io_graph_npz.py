"""load_graph dispatch, the .npz loader and read_input on every format."""
import numpy as np
import pytest
import scipy.sparse as sp

from dspla.errors import DataFormatError, DsplaError
from dspla.formats import read_input
from dspla.formats.graph import load_graph
from dspla.formats.npz import load_npz

from conftest import dataset

MTX = "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1\n2 3 4\n3 3 2\n"
A_MTX = [[0, 1, 0], [0, 0, 4], [0, 0, 2]]


def test_load_graph_dispatch(tmp_path):
    (tmp_path / "a.mtx").write_text(MTX)
    g = load_graph(tmp_path / "a.mtx")   # a Graph: the matrix, and no ids (the rows are the nodes)
    assert isinstance(g.matrix, sp.csr_array) and g.ids is None and g.shape == (3, 3)
    np.testing.assert_array_equal(g.matrix.toarray(), A_MTX)
    np.testing.assert_array_equal(load_graph(tmp_path / "a.mtx", directed=False).matrix.toarray(),
                                  [[0, 1, 0], [1, 0, 4], [0, 4, 2]])
    np.testing.assert_array_equal(load_graph(tmp_path / "a.mtx", weighted=False).matrix.toarray(),
                                  np.array(A_MTX) != 0)
    for name in ("e.txt", "e.edges", "e.el"):
        (tmp_path / name).write_text("5 6\n6 7\n")
        g = load_graph(tmp_path / name)
        np.testing.assert_array_equal(g.matrix.toarray(), [[0, 1, 0], [0, 0, 1], [0, 0, 0]])
        assert g.ids.tolist() == [5, 6, 7] and g.index([7, 5]).tolist() == [2, 0]
    np.testing.assert_array_equal(load_graph(tmp_path / "e.txt", directed=False).matrix.toarray(),
                                  [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    sp.save_npz(tmp_path / "s.npz", sp.csr_array(np.array(A_MTX, float)))
    np.testing.assert_array_equal(load_graph(tmp_path / "s.npz").matrix.toarray(), A_MTX)


def test_load_graph_errors(tmp_path):
    (tmp_path / "g.csv").write_text("0,1\n")
    with pytest.raises(DsplaError, match=r"g\.csv: unknown graph format"):
        load_graph(tmp_path / "g.csv")
    with pytest.raises(DsplaError, match="file not found"):
        load_graph(tmp_path / "missing.txt")
    (tmp_path / "r.mtx").write_text("%%MatrixMarket matrix coordinate pattern general\n2 3 1\n1 3\n")
    with pytest.raises(DataFormatError, match=r"r\.mtx: an undirected graph needs a square matrix"):
        load_graph(tmp_path / "r.mtx", directed=False)
    with pytest.raises(DsplaError, match="apply to edge lists"):
        load_graph(tmp_path / "r.mtx", self_loops=False)


def test_load_graph_real_files():
    A = load_graph(dataset("suitesparse", "delaunay_n14.mtx")).matrix
    assert A.shape == (16384, 16384) and A.nnz == 2 * 49122
    S = load_graph(dataset("snap", "soc-Slashdot0902.txt.gz")).matrix
    assert S.nnz == 948464 and (S != S.T).nnz > 0  # directed by default


def test_npz_sparse_and_named_arrays(tmp_path):
    M = sp.coo_array(([1.0, 2.0], ([0, 1], [1, 0])), shape=(2, 3))
    sp.save_npz(tmp_path / "m.npz", M)
    A = load_npz(tmp_path / "m.npz")
    assert isinstance(A, sp.csr_array)
    np.testing.assert_array_equal(A.toarray(), [[0, 1, 0], [2, 0, 0]])
    np.savez(tmp_path / "d.npz", X=np.arange(6).reshape(2, 3), y=np.array([1, 2]))
    np.testing.assert_array_equal(load_npz(tmp_path / "d.npz", "y"), [1, 2])
    np.testing.assert_array_equal(read_input(f"{tmp_path / 'd.npz'}:X"), [[0, 1, 2], [3, 4, 5]])
    with pytest.raises(DsplaError, match="holds 2 arrays.*name one"):
        load_npz(tmp_path / "d.npz")
    with pytest.raises(DsplaError, match="has no array 'Z'; it has: X, y"):
        load_npz(tmp_path / "d.npz", "Z")


def test_npz_refuses_pickled_objects_and_garbage(tmp_path):
    np.savez(tmp_path / "o.npz", X=np.array([{"a": 1}], dtype=object))
    with pytest.raises(DataFormatError, match=r"o\.npz:X: holds Python objects"):
        load_npz(tmp_path / "o.npz", "X")
    (tmp_path / "g.npz").write_bytes(b"not a zip")
    with pytest.raises(DataFormatError, match=r"g\.npz"):
        load_npz(tmp_path / "g.npz")
    np.savez(tmp_path / "b.npz", format=np.array("csr"), shape=np.array([2, 2]),
             indptr=np.array([0, 1, 1]), indices=np.array([5]), data=np.array([1.0]))
    with pytest.raises(DataFormatError, match=r"b\.npz: inconsistent scipy sparse save"):
        load_npz(tmp_path / "b.npz")


def test_read_input_formats(tmp_path):
    (tmp_path / "a.mtx").write_text(MTX)
    np.testing.assert_array_equal(read_input(str(tmp_path / "a.mtx"), "sparse").toarray(), A_MTX)
    (tmp_path / "e.txt").write_text("0 1\n")
    assert read_input(str(tmp_path / "e.txt"), "sparse").nnz == 1   # a Graph: its matrix and ids
    (tmp_path / "x.bin").write_text("")
    with pytest.raises(DsplaError, match=r"unknown input format.*edge list"):
        read_input(str(tmp_path / "x.bin"))


def test_read_input_real_edge_list():
    A = read_input(str(dataset("snap", "email-Enron.txt")), "sparse")
    assert A.shape == (36692, 36692)


def test_slow_load_reports_timing_on_stderr(tmp_path, monkeypatch, capsys):
    import dspla.formats.graph as graph
    (tmp_path / "e.txt").write_text("0 1\n")
    load_graph(tmp_path / "e.txt")
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(graph, "REPORT_AFTER_S", -1.0)
    load_graph(tmp_path / "e.txt")
    err = capsys.readouterr().err
    assert "loaded" in err and "e.txt" in err and "2 x 2, 1 entries in" in err
