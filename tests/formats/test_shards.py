"""Shard sets (dspla.formats.shards): what is written is what each rank reads back, by its own files
or by rows of a one-process set; every way a set can be damaged or mismatched is one clear error."""
from __future__ import annotations

import json
import os

import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp

from dspla.errors import DataFormatError
from dspla.formats.shards import ShardError, ownership, read_manifest, read_rank, read_rows, write_shards
from dspla.runtime.comm.sim import run_simulated
from dspla.runtime.shards import _piece, load_shards


def problem(n=300, P=4, seed=0):
    rng = np.random.default_rng(seed)
    A = sp.random_array((n, n), density=0.03, rng=rng, format="csr", dtype=np.float64)
    keep = np.ones(n)
    keep[5] = 0          # an empty row
    A = sp.csr_array(sp.diags_array(keep) @ A)
    A.eliminate_zeros()
    X = rng.standard_normal((n, 3)).astype(np.float32)
    Y = rng.integers(0, 9, (n, 2))
    parts = rng.integers(0, P, n)
    return A, X, Y, parts


def test_written_rows_read_back(tmp_path):
    A, X, Y, parts = problem()
    m = write_shards(tmp_path, {"A": A, "X": X, "Y": Y}, parts, 4, method="random", progress=False)
    assert m["P"] == 4 and m["inputs"]["A"] == {"kind": "sparse", "shape": [300, 300], "dtype": "float64",
                                                "nnz": A.nnz}
    assert m["inputs"]["X"]["dtype"] == "float32" and m["inputs"]["Y"]["kind"] == "dense"
    assert np.array_equal(ownership(tmp_path, m), parts)
    seen = []
    for r in range(4):
        rows, got = read_rank(tmp_path, m, r)
        assert np.array_equal(rows, np.flatnonzero(parts == r))      # ascending global ids
        assert (got["A"] != A[rows]).nnz == 0 and got["A"].shape == (rows.size, 300)
        assert np.array_equal(got["X"], X[rows]) and got["X"].dtype == np.float32
        assert np.array_equal(got["Y"], Y[rows])
        assert isinstance(got["X"], np.memmap)                       # mapped, not read whole
        seen.append(rows)
    assert np.array_equal(np.sort(np.concatenate(seen)), np.arange(300))


def test_one_process_set_is_read_by_rows(tmp_path):
    A, X, _, _ = problem()
    m = write_shards(tmp_path, {"A": A, "X": X}, np.zeros(300, int), 1, progress=False)
    for rows in (np.arange(40, 97), np.array([0, 3, 5, 6, 299]), np.zeros(0, np.int64)):
        got = read_rows(tmp_path, m, rows)
        assert (got["A"] != A[rows]).nnz == 0 and got["A"].shape == (rows.size, 300)
        assert np.array_equal(got["X"], X[rows])


def test_raw_pieces_are_taken_over_without_a_copy(tmp_path):
    """load_shards hands the arrays it reads to GraphBLAS, which takes them as they are only when
    they own their memory and have its types (indices uint64). np.load's arrays are reshaped views
    and the indices int64, so every piece was copied once more: a rank's load peaked at twice its
    share (R-MAT scale 20, P = 2: 916 MB instead of 561)."""
    A, X, _, parts = problem()
    m = write_shards(tmp_path / "p4", {"A": A, "X": X}, parts, 4, progress=False)
    m1 = write_shards(tmp_path / "p1", {"A": A, "X": X}, np.zeros(300, int), 1, progress=False)
    rows = np.flatnonzero(parts == 2)
    got = [(rows, read_rank(tmp_path / "p4", m, 2, raw=True)[1]),
           (rows, read_rows(tmp_path / "p1", m1, rows, raw=True)),                    # random rows
           (np.arange(40, 97), read_rows(tmp_path / "p1", m1, np.arange(40, 97), raw=True))]   # a block
    for want, pieces in got:
        indptr, indices, data, shape = pieces["A"]
        for arr in (indptr, indices, data, pieces["X"]):
            assert arr.flags.owndata and arr.flags.writeable and arr.flags.c_contiguous
        assert indptr.dtype == indices.dtype == np.uint64
        assert np.array_equal(pieces["X"], X[want])
        M = _piece(pieces["A"], "float64")
        assert (gb.io.to_scipy_sparse(M, format="csr") != A[want]).nnz == 0


@pytest.mark.parametrize("P", [1, 3, 8])
def test_load_shards_gives_distributed_values(tmp_path, P):
    A, X, _, _ = problem(P=P)
    parts = np.random.default_rng(2).integers(0, P, 300)
    write_shards(tmp_path, {"A": A, "X": X}, parts, P, progress=False)

    def body(comm):
        v = load_shards(tmp_path, comm)
        assert v["A"].local.index.tolist() == np.flatnonzero(parts == comm.rank).tolist()
        return v["A"].to_scipy(), v["X"].to_numpy(), v["A"].dist.part.method, v["X"].shape
    for a, x, method, shape in run_simulated(P, body):
        assert (a != A).nnz == 0 and np.array_equal(x, X) and shape == (300, 3) and method == "?"


@pytest.mark.parametrize("how", ["block", "random", None])   # None: read as written, by blocks (as the CLI)
def test_one_process_set_loads_on_any_job(tmp_path, how):
    A, X, _, _ = problem()
    write_shards(tmp_path, {"A": A, "X": X}, np.zeros(300, int), 1, progress=False)

    def body(comm):
        v = load_shards(tmp_path, comm, partition=how, seed=5)
        return v["A"].to_scipy(), v["X"].to_numpy(), v["A"].dist.part.is_block
    for a, x, is_block in run_simulated(3, body):
        assert (a != A).nnz == 0 and np.array_equal(x, X) and is_block == (how != "random")


def load_error(folder, P=2, **kw):
    with pytest.raises(Exception) as e:
        run_simulated(P, lambda comm: load_shards(folder, comm, **kw))
    return str(e.value)


def test_mismatches_are_clear_errors(tmp_path):
    A, X, _, parts = problem()
    d = tmp_path / "s"
    write_shards(d, {"A": A, "X": X}, parts, 4, progress=False)
    assert "sharded for P = 4 processes but this job has 2" in load_error(d)
    assert "holds A, X, not 'W'" in load_error(d, P=4, names=["W"])
    assert "needs a set written with -P 1" in load_error(d, P=4, partition="block")   # read by rows: P = 1 only
    assert "not found" in load_error(tmp_path / "nowhere")
    # a file changed after writing: its checksum; a truncated one: its size
    path = d / "rank00001" / "X.npy"
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0xFF
    path.write_bytes(bytes(raw))
    assert "rank00001/X.npy: checksum mismatch" in load_error(d, P=4)
    path.write_bytes(bytes(raw[:-4]))
    assert "the manifest says" in load_error(d, P=4)
    raw[-1] ^= 0xFF
    path.write_bytes(bytes(raw))     # mended; another rank's file goes missing
    os.remove(d / "rank00002" / "A.data.npy")
    assert "rank00002/A.data.npy is missing" in load_error(d, P=4, verify=False)


def test_manifest_checks(tmp_path):
    A, X, _, parts = problem()
    write_shards(tmp_path, {"A": A}, parts, 4, progress=False)
    m = json.loads((tmp_path / "manifest.json").read_text())
    m["version"] = 99
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(DataFormatError, match="shard format version 99"):
        read_manifest(tmp_path)
    os.remove(tmp_path / "manifest.json")
    with pytest.raises(ShardError, match="manifest.json is missing"):
        read_manifest(tmp_path)


def test_writing_checks_and_rewrites(tmp_path):
    A, X, _, parts = problem()
    with pytest.raises(ShardError, match="'X' has 299 rows but the partition covers 300"):
        write_shards(tmp_path / "a", {"A": A, "X": X[:-1]}, parts, 4, progress=False)
    with pytest.raises(ShardError, match="ids 0..3, but P = 2"):
        write_shards(tmp_path / "b", {"A": A}, parts, 2, progress=False)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ShardError, match="holds other files than a shard set"):
        write_shards(other, {"A": A}, parts, 4, progress=False)
    # a set written again for fewer processes leaves no stale rank folders
    d = tmp_path / "s"
    write_shards(d, {"A": A}, parts, 4, progress=False)
    write_shards(d, {"A": A}, parts % 2, 2, progress=False)
    assert sorted(os.listdir(d)) == ["manifest.json", "parts.npy", "rank00000", "rank00001"]
    assert read_manifest(d)["P"] == 2


def test_a_shard_file_with_a_damaged_header_is_named(tmp_path):
    """An unbalanced bracket in a .npy header raised tokenize.TokenError (not a ValueError) out of
    numpy's header parser: a traceback, when checksums were not verified."""
    A, X, _, parts = problem()
    m = write_shards(tmp_path / "s", {"A": A, "X": X}, parts, 4, progress=False)
    f = tmp_path / "s" / "rank00001" / "X.npy"
    raw = bytearray(f.read_bytes())
    at = raw.index(b")", raw.index(b"'shape': ("))
    raw[at:at + 1] = b" "   # an unclosed bracket, the same length: the size check passes
    f.write_bytes(bytes(raw))
    for raw_read in (False, True):
        with pytest.raises(DataFormatError, match="X.npy: not a valid .npy array"):
            read_rank(tmp_path / "s", m, 1, verify=False, raw=raw_read)
