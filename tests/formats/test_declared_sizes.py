"""A file's declared shape is checked against what it holds before anything of that size is made,
by every reader: a small file never costs memory by the rows it declares (each row costs memory
on every process that plans or partitions it), and the commands that read one stay small."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from dspla.errors import DataFormatError
from dspla.formats import load_graph, read_input
from dspla.formats.limits import DIM_FLOOR
from dspla.formats.planetoid import load_planetoid
from dspla.formats.shards import MANIFEST, read_manifest, write_shards
from dspla.formats.snap import load_snap

HUGE = 8_388_608
SAYS = rf"declares a {HUGE} x {HUGE} matrix but holds 1 entry: at most {DIM_FLOOR} rows and columns are allowed"


def test_a_matrix_market_size_line(tmp_path):
    f = tmp_path / "huge.mtx"
    f.write_text(f"%%MatrixMarket matrix coordinate real general\n{HUGE} {HUGE} 1\n1 1 1.0\n")
    assert f.stat().st_size < 100
    for read in (read_input, load_graph):
        with pytest.raises(DataFormatError, match=rf"huge.mtx:2: {SAYS}.*DSPLA_MAX_DIM_PER_ENTRY"):
            read(str(f))


def test_a_scipy_npz_of_any_format(tmp_path):
    for fmt in ("coo", "csr", "csc"):
        A = sp.coo_array((np.ones(1), (np.zeros(1, int), np.zeros(1, int))), shape=(HUGE, HUGE)).asformat(fmt)
        sp.save_npz(tmp_path / f"{fmt}.npz", A)
        with pytest.raises(DataFormatError, match=rf"{fmt}.npz: {SAYS}"):
            read_input(str(tmp_path / f"{fmt}.npz"), "sparse")


def test_an_edge_list_kept_by_its_ids(tmp_path):
    (tmp_path / "e.txt").write_text(f"0 {HUGE - 1}\n")
    assert load_snap(tmp_path / "e.txt").shape == (2, 2)   # relabelled (the default): two nodes
    with pytest.raises(DataFormatError, match=rf"e.txt: {SAYS}"):
        load_snap(tmp_path / "e.txt", relabel=False)


def test_a_planetoid_test_index_far_past_its_nodes(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    from test_io_planetoid import _write_set
    _write_set(tmp_path, test_index=f"4\n{10**12}\n")
    with pytest.raises(DataFormatError, match=r"toy.test.index: declares a 1000000000001 x 1000000000001"):
        load_planetoid(tmp_path, "toy", n_val=1)


def test_a_shard_manifest_that_declares_more_rows_than_it_holds(tmp_path):
    A = sp.random_array((40, 40), density=0.1, random_state=0, format="csr")
    write_shards(str(tmp_path / "s"), {"A": A}, np.zeros(40, np.int64), 1, progress=False)
    m = json.loads((tmp_path / "s" / MANIFEST).read_text())
    m["rows"] = 10**12
    (tmp_path / "s" / MANIFEST).write_text(json.dumps(m))
    with pytest.raises(DataFormatError, match=r"declares 1000000000000 rows, but the ownership map"):
        read_manifest(str(tmp_path / "s"))
    m["rows"], m["inputs"]["A"]["shape"] = 40, [40, 10**12]
    (tmp_path / "s" / MANIFEST).write_text(json.dumps(m))
    with pytest.raises(DataFormatError, match=r"declares a 40 x 1000000000000 matrix"):
        read_manifest(str(tmp_path / "s"))


def test_a_mostly_empty_matrix_is_read_when_allowed(tmp_path, monkeypatch):
    f = tmp_path / "huge.mtx"
    f.write_text(f"%%MatrixMarket matrix coordinate real general\n{HUGE} 3 1\n1 1 1.0\n")
    monkeypatch.setenv("DSPLA_MAX_DIM_PER_ENTRY", str(HUGE))
    assert read_input(str(f), "sparse").shape == (HUGE, 3)


_MEASURE = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(r.returncode)")


def _peak_mb(cmd) -> tuple[subprocess.CompletedProcess, float]:
    """The command's result and the peak resident memory of the largest process of its tree
    (measured by a process of its own, whose children are the command's alone)."""
    r = subprocess.run([sys.executable, "-c", _MEASURE, *map(str, cmd)], capture_output=True, text=True, timeout=600)
    *err, peak = r.stderr.rstrip("\n").split("\n")
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout, "\n".join(err)), int(peak) / 1024


def test_partitioning_the_largest_shape_a_tiny_file_may_declare_stays_small(tmp_path):
    """The floor's shape (2^16 rows, one entry: a 68-byte file) through `dspla partition` with
    the default partitioner (its worker process included), and the 8M-row file refused."""
    f = tmp_path / "edge.mtx"
    f.write_text(f"%%MatrixMarket matrix coordinate real general\n{DIM_FLOOR} {DIM_FLOOR} 1\n1 1 1.0\n")
    bin_ = Path(sys.executable).parent
    r, mb = _peak_mb([bin_ / "dspla", "partition", f, "-P", "2", "--no-cache", "--out", tmp_path / "p.npy"])
    assert r.returncode == 0, r.stderr
    assert mb < 200, f"{mb:.0f} MB"
    f.write_text(f"%%MatrixMarket matrix coordinate real general\n{HUGE} {HUGE} 1\n1 1 1.0\n")
    r, _ = _peak_mb([bin_ / "dspla", "partition", f, "-P", "2"])
    assert r.returncode == 2 and "declares a 8388608 x 8388608 matrix" in r.stderr


@pytest.mark.mpi
def test_running_on_two_processes_from_the_largest_shape_a_tiny_file_may_declare(tmp_path):
    """`dspla run --np 2` of the GCN layer on that file: every rank's peak stays under 200 MB."""
    f = tmp_path / "edge.mtx"
    f.write_text(f"%%MatrixMarket matrix coordinate real general\n{DIM_FLOOR} {DIM_FLOOR} 1\n1 1 1.0\n")
    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([Path(sys.executable).parent / "dspla", "run", root / "examples" / "gcn_layer.dspla",
                        "--np", "2", "-i", f"A={f}", "-i", "X=full:1", "-i", "W=full:1", "--dim", "f=4",
                        "--stats", tmp_path / "s.json"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    peaks = [p["peak_rss_bytes"] / 2**20 for p in json.loads((tmp_path / "s.json").read_text())["per_rank"]]
    assert len(peaks) == 2 and max(peaks) < 200, peaks
