"""The results file: a full output as a plain array (``np.load(F)["NAME"]``), one with missing
entries as its present entries, node ids beside them; ``read_results`` reads both layouts and the
files written before (a full output as COO; no ids)."""
import graphblas as gb
import numpy as np
import pytest

from dspla.formats.results import read_results, write_results
from dspla.values import Array


def _arr(rows, cols, vals, shape, name, ids=None):
    M = gb.Matrix.from_coo(rows, cols, vals, nrows=shape[0], ncols=shape[1])
    return Array(M, name, ids=ids)


def test_full_output_is_a_plain_array_and_the_rest_coo(tmp_path):
    W = _arr([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1], [1.0, 0.0, 3.0, 4.0, 5.0, 6.0], (3, 2), "dW")
    d = _arr([0, 2], [0, 0], [0.0, 7.5], (3, 1), "d", ids=np.array([5, 10, 2000]))
    n = _arr([0], [0], [12], (1, 1), "n")
    write_results(tmp_path / "o.npz", {"dW": W, "d": d, "n": n})
    z = np.load(tmp_path / "o.npz")
    assert sorted(z.files) == ["d.cols", "d.ids", "d.rows", "d.shape", "d.values", "dW", "n"]
    assert z["dW"].tolist() == [[1.0, 0.0], [3.0, 4.0], [5.0, 6.0]] and z["dW"].shape == (3, 2)
    assert z["n"].tolist() == [[12]] and z["n"].dtype == np.int64
    assert z["d.rows"].tolist() == [0, 2] and z["d.values"].tolist() == [0.0, 7.5]
    assert z["d.ids"].tolist() == [5, 10, 2000]
    r = read_results(tmp_path / "o.npz")
    vals, pres = r["d"]
    assert pres[:, 0].tolist() == [True, False, True] and vals[2, 0] == 7.5
    assert r["d"].ids.tolist() == [5, 10, 2000] and r["d"].col_ids is None and r["dW"].ids is None
    assert r["dW"].present.all() and r["dW"].values.tolist() == z["dW"].tolist()


def test_older_files_and_future_ranks(tmp_path):
    # written before: a full output as its present entries (no plain array, no ids)
    np.savez(tmp_path / "old.npz", **{"Y.rows": np.array([0, 0, 1, 1]), "Y.cols": np.array([0, 1, 0, 1]),
                                      "Y.values": np.array([2.0, 0.0, 6.0, -8.0]), "Y.shape": np.array([2, 2])})
    vals, pres = read_results(tmp_path / "old.npz")["Y"]
    assert pres.all() and vals.tolist() == [[2.0, 0.0], [6.0, -8.0]]
    # a vector stored 1-D and a scalar 0-D (the layout leaves room for them) read as they are
    np.savez(tmp_path / "v.npz", v=np.array([1.0, 2.0]), s=np.array(3.5))
    r = read_results(tmp_path / "v.npz")
    assert r["v"].values.shape == (2,) and r["s"].values.shape == () and r["s"].present.all()
    np.savez(tmp_path / "bad.npz", **{"x.what": np.ones(1)})
    with pytest.raises(Exception, match="no part of a results file"):
        read_results(tmp_path / "bad.npz")
