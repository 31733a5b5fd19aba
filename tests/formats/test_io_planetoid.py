"""Planetoid loader and the restricted unpickler."""
import collections
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from dspla.errors import DataFormatError
from dspla.formats.planetoid import PlanetoidData, load_planetoid
from dspla.formats.unpickle import restricted_load

from conftest import dataset

# ---------------------------------------------------------------- restricted unpickler

def test_os_system_reduce_is_refused_and_not_run(tmp_path):
    marker = tmp_path / "pwned"
    p = tmp_path / "evil.pkl"
    # protocol 0 by hand: GLOBAL os.system, then REDUCE with one string argument
    p.write_bytes(b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR.")
    with pytest.raises(DataFormatError) as e:
        restricted_load(p)
    assert "evil.pkl" in str(e.value) and "os.system" in str(e.value)
    assert not marker.exists()


class _Evil:
    def __reduce__(self):
        return (eval, ("1+1",))


def test_builtins_eval_refused(tmp_path):
    p = tmp_path / "e.pkl"
    p.write_bytes(pickle.dumps(_Evil(), protocol=4))
    with pytest.raises(DataFormatError, match=r"e\.pkl: refused to unpickle builtins\.eval"):
        restricted_load(p)


def test_unlisted_class_refused(tmp_path):
    p = tmp_path / "od.pkl"
    p.write_bytes(pickle.dumps(collections.OrderedDict(a=1)))
    with pytest.raises(DataFormatError, match=r"od\.pkl: refused to unpickle collections\.OrderedDict"):
        restricted_load(p)


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_allowed_objects_round_trip(tmp_path, protocol):
    obj = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "m": sp.csr_matrix(np.eye(3)),
           "g": collections.defaultdict(list, {0: [1, 2]}), "l": sp.lil_matrix(np.eye(2)),
           "s": np.float32(1.5)}
    p = tmp_path / "ok.pkl"
    p.write_bytes(pickle.dumps(obj, protocol=protocol))
    back = restricted_load(p)
    np.testing.assert_array_equal(back["a"], obj["a"])
    assert (back["m"] != obj["m"]).nnz == 0 and back["g"] == {0: [1, 2]} and back["s"] == 1.5


def test_codecs_encode_only_for_latin1(tmp_path):
    p = tmp_path / "c.pkl"
    p.write_bytes(b"c_codecs\nencode\n(Vabc\nVrot13\ntR.")
    with pytest.raises(DataFormatError, match=r"c\.pkl: not a valid pickle .*codec 'rot13'"):
        restricted_load(p)


def test_truncated_pickle(tmp_path):
    p = tmp_path / "t.pkl"
    p.write_bytes(pickle.dumps(np.arange(100), protocol=2)[:50])
    with pytest.raises(DataFormatError, match=r"t\.pkl: not a valid pickle"):
        restricted_load(p)


# ---------------------------------------------------------------- Planetoid on Cora

def test_cora():
    d = load_planetoid(dataset("planetoid"), "cora")
    assert isinstance(d, PlanetoidData) and d.name == "cora"
    A = d.adjacency
    assert isinstance(A, sp.csr_array) and A.shape == (2708, 2708)
    # 5429 citations in the original list; the graph dict has 10858 neighbour entries with
    # duplicates, which collapse to 5278 undirected edges = 10556 symmetric entries, no loops.
    assert A.nnz == 10556 and A.diagonal().sum() == 0
    assert (A != A.T).nnz == 0 and set(np.unique(A.data)) == {1.0}
    assert d.features.shape == (2708, 1433) and isinstance(d.features, sp.csr_array)
    assert d.labels.dtype == np.int64 and d.n_classes == 7 and d.labels.min() == 0
    np.testing.assert_array_equal(np.bincount(d.labels), [351, 217, 418, 818, 426, 298, 180])
    np.testing.assert_array_equal(d.train_idx, np.arange(140))
    np.testing.assert_array_equal(d.val_idx, np.arange(140, 640))
    np.testing.assert_array_equal(d.test_idx, np.arange(1708, 2708))
    np.testing.assert_array_equal(np.bincount(d.labels[d.train_idx]), [20] * 7)


def test_cora_test_rows_reordered():
    """Node test.index[k] gets row k of tx/ty (the file order), not row k of the sorted ids."""
    root = dataset("planetoid")
    d = load_planetoid(root, "cora")
    order = np.loadtxt(root / "ind.cora.test.index", dtype=np.int64)
    tx = restricted_load(root / "ind.cora.tx")
    ty = restricted_load(root / "ind.cora.ty")
    for k in (0, 1, 500, 999):
        np.testing.assert_array_equal(d.features[[order[k]]].toarray(), tx[[k]].toarray())
        assert d.labels[order[k]] == ty[k].argmax()
    assert (order != np.sort(order)).any()  # the check above is not vacuous


# ---------------------------------------------------------------- hand-built dataset

def _write_set(root, name="toy", **override):
    """f=3 features, 2 classes; nodes 0,1 in allx (node 0 = the training node); test nodes 4
    and 2 in that file order; node 3 is missing from the test index (a Citeseer-style gap)."""
    parts = {
        "x": sp.csr_matrix(np.array([[1, 0, 0]], np.float32)),
        "y": np.array([[1, 0]], np.int32),
        "allx": sp.csr_matrix(np.array([[1, 0, 0], [0, 1, 0]], np.float32)),
        "ally": np.array([[1, 0], [0, 1]], np.int32),
        "tx": sp.csr_matrix(np.array([[0, 0, 1], [1, 1, 0]], np.float32)),
        "ty": np.array([[0, 1], [1, 0]], np.int32),
        "graph": collections.defaultdict(list, {0: [1, 1], 1: [0, 2], 2: [1, 2], 4: []}),
    }
    parts.update(override)
    for k, v in parts.items():
        (root / f"ind.{name}.{k}").write_bytes(pickle.dumps(v, protocol=2))
    (root / f"ind.{name}.test.index").write_text(override.get("test_index", "4\n2\n"))


def test_hand_built_set(tmp_path):
    _write_set(tmp_path)
    d = load_planetoid(tmp_path, "toy", n_val=1)
    np.testing.assert_array_equal(d.adjacency.toarray(), [[0, 1, 0, 0, 0],
                                                          [1, 0, 1, 0, 0],
                                                          [0, 1, 1, 0, 0],
                                                          [0, 0, 0, 0, 0],
                                                          [0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(d.features.toarray(), [[1, 0, 0],
                                                         [0, 1, 0],
                                                         [1, 1, 0],
                                                         [0, 0, 0],
                                                         [0, 0, 1]])
    np.testing.assert_array_equal(d.labels, [0, 1, 0, -1, 1])
    assert d.train_idx.tolist() == [0] and d.val_idx.tolist() == [1] and d.test_idx.tolist() == [2, 4]
    no_loops = load_planetoid(tmp_path, "toy", n_val=1, self_loops=False)
    assert no_loops.adjacency.diagonal().sum() == 0 and no_loops.adjacency.nnz == 4


def test_malicious_planetoid_part_refused(tmp_path):
    _write_set(tmp_path)
    (tmp_path / "ind.toy.graph").write_bytes(b"cos\nsystem\n(S'true'\ntR.")
    with pytest.raises(DataFormatError, match=r"ind\.toy\.graph: refused to unpickle os\.system"):
        load_planetoid(tmp_path, "toy", n_val=1)


def test_bad_test_index_line(tmp_path):
    _write_set(tmp_path, test_index="4\n\nx2\n")
    with pytest.raises(DataFormatError, match=r"ind\.toy\.test\.index:3: test node id 'x2' is not an integer"):
        load_planetoid(tmp_path, "toy", n_val=1)


def test_inconsistent_parts(tmp_path):
    _write_set(tmp_path, ty=np.array([[0, 1]], np.int32))
    with pytest.raises(DataFormatError, match=r"ind\.toy\.ty: has 1 rows but tx has 2"):
        load_planetoid(tmp_path, "toy", n_val=1)
    _write_set(tmp_path, graph=collections.defaultdict(list, {0: [9]}))
    with pytest.raises(DataFormatError, match=r"ind\.toy\.graph: node 9 is outside 0\.\.4"):
        load_planetoid(tmp_path, "toy", n_val=1)
    _write_set(tmp_path)
    with pytest.raises(DataFormatError, match=r"ind\.toy\.allx: has 2 rows, fewer than the 1 training \+ 500"):
        load_planetoid(tmp_path, "toy")
