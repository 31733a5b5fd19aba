"""The sharded workflow from the command line: dspla shard, then dspla run/train --shards, with
the set checked against the job before any process starts; under mpiexec (marked mpi) the
sharded run equals the in-memory run and every rank plans for itself."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from dspla.cli.main import main
from dspla.formats.results import read_results
from dspla.formats.shards import read_manifest, write_shards
from dspla.frontend.parser import parse_file
from dspla.models import TrainConfig, Trainer, load_node_data
from dspla.models.data import ShardedData, shard_inputs
from dspla.partition import random_parts
from dspla.runtime.comm.sim import run_simulated
from dspla.runtime.shards import load_shards

from conftest import ROOT, dataset

DSPLA = str(Path(sys.executable).parent / "dspla")
GCN = str(ROOT / "examples" / "gcn.dspla")
PROGRAM = "input A : sparse[n, n]\ninput X : dense[n, k]\ninput W : dense[k, h]\nT = A @ (X @ W)\noutput T\n"


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    A = sp.random_array((400, 400), density=0.02, rng=rng, format="coo")
    A.data[:] = rng.integers(1, 5, A.nnz)
    A.data[A.row < 10] = 0          # rows without entries: missing rows of the result
    A.eliminate_zeros()
    scipy.io.mmwrite(tmp_path / "g.mtx", A)
    X = rng.integers(-3, 4, (400, 6)).astype(float)
    W = rng.integers(-2, 3, (6, 2)).astype(float)
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "w.npy", W)
    (tmp_path / "p.dspla").write_text(PROGRAM)
    A = sp.csr_array(A)
    want = A @ (X @ W)
    return tmp_path, want, np.diff(A.indptr) > 0


def test_shard_then_run(files, capsys):
    d, want, has = files
    assert main(["shard", "-i", f"A={d / 'g.mtx'}", "-i", f"X={d / 'x.npy'}", "-P", "1", "--method", "block",
                 "--out", str(d / "s"), "-q"]) == 0
    assert "wrote" in capsys.readouterr().out
    m = read_manifest(d / "s")
    # one process holds every row: nothing was partitioned, whatever --method said
    assert m["P"] == 1 and m["inputs"]["X"]["shape"] == [400, 6] and m["method"] == "none"
    assert main(["run", str(d / "p.dspla"), "--shards", str(d / "s"), "-i", f"W={d / 'w.npy'}",
                 "--out", str(d / "o.npz")]) == 0
    vals, pres = read_results(d / "o.npz")["T"]
    T = np.where(pres, vals, np.nan)
    assert np.array_equal(T[has], want[has]) and np.isnan(T[~has]).all()


@pytest.mark.parametrize("args,msg", [
    (["-P", "2"], "give the inputs to shard"),
    (["-i", "A=MISSING", "-P", "2"], "input file not found"),
    (["-i", "A=g.mtx", "-P", "2", "--method", "nosuch"], "nosuch"),
    (["-i", "X=x.npy", "-P", "2"], "no graph to partition"),
    (["-i", "A=g.mtx", "-i", "W=w.npy", "-P", "2", "--method", "block"], "'W' has 6 rows but the partition covers 400"),
    (["-i", "A=g.mtx", "-P", "2", "--partition-file", "x.npy"], "a partition of 400 rows into process ids 0..1"),
])
def test_shard_errors(files, args, msg, capsys, monkeypatch):
    d, _, _ = files
    monkeypatch.chdir(d)
    assert main(["shard", *args, "--out", str(d / "s"), "-q"]) == 2
    assert msg in capsys.readouterr().err


def test_run_checks_the_set_against_the_job(files, capsys):
    d, _, _ = files
    main(["shard", "-i", f"A={d / 'g.mtx'}", "-i", f"X={d / 'x.npy'}", "-P", "3", "--method", "random",
          "--out", str(d / "s"), "-q"])
    capsys.readouterr()
    run = ["run", str(d / "p.dspla"), "--shards", str(d / "s"), "-i", f"W={d / 'w.npy'}"]
    for extra, msg in ((["--np", "2"], "sharded for P = 3 processes but this job has 2"),
                       ([], "sharded for P = 3 processes but this job has 1"),
                       (["-i", f"X={d / 'x.npy'}"], "input X is given twice"),
                       (["--np", "3", "--partition-file", str(d / "x.npy")], "the shard set is partitioned already")):
        assert main([*run, *extra]) == 2
        assert msg in capsys.readouterr().err
    (d / "q.dspla").write_text(PROGRAM.replace("dense[n, k]", "sparse[n, k]"))
    assert main(["run", str(d / "q.dspla"), "--shards", str(d / "s"), "--np", "3", "-i", f"W={d / 'w.npy'}"]) == 2
    assert "declares X as sparse[n, k]" in capsys.readouterr().err


def cora_shards(tmp_path, P):
    nd = load_node_data("cora", data_dir=str(dataset("planetoid")))
    parts = random_parts(nd.n_nodes, P, 0)
    write_shards(tmp_path, shard_inputs(nd), parts, P, progress=False,
                 extra={"dataset": {"name": "cora", "description": "Planetoid"}})
    return nd, parts


@pytest.mark.parametrize("P", [2, 4])
def test_gcn_trains_from_shards_as_in_memory(tmp_path, P):
    """examples/gcn.dspla on Cora from shards: every rank plans for itself, and the losses and
    accuracies are those of the in-memory data planned on rank 0 (the way before), on the same
    partition, bit for bit."""
    nd, parts = cora_shards(tmp_path, P)
    prog = parse_file(GCN)

    def sharded(comm):
        v = load_shards(tmp_path, comm, names=["A", "X", "Y", "T"])
        meta = load_shards(tmp_path, comm, names=["labels", "split"])
        labels, split = (meta[k].to_numpy(root=0) for k in ("labels", "split"))
        data = ShardedData.of(labels, split, read_manifest(tmp_path)) if comm.rank == 0 else None
        t = Trainer(prog, data, TrainConfig(epochs=3, progress=False), comm, sharded=v)
        return t.fit(), t.session.plan and t.session.plan.planning

    def memory(comm):
        t = Trainer(prog, nd if comm.rank == 0 else None,
                    TrainConfig(epochs=3, progress=False, extra_options={"parts": parts, "partition": "file",
                                                                         "spmd": False}), comm)
        return t.fit(), t.session.plan and t.session.plan.planning
    (a, how_a), (b, how_b) = run_simulated(P, sharded, timeout=120)[0], run_simulated(P, memory, timeout=120)[0]
    assert (how_a, how_b) == ("spmd", "rank 0")
    assert [e["loss"] for e in a["epochs"]] == [e["loss"] for e in b["epochs"]]
    for k in ("train_accuracy", "val_accuracy", "test_accuracy", "plan"):
        assert a[k] == b[k], k
    assert a["dataset"]["nodes"] == 2708 and a["dataset"]["train"] == 140


def test_train_from_shards_cli_one_process(tmp_path):
    """dspla shard --dataset cora -P 1, then dspla train --shards: the in-memory run's losses."""
    data = str(dataset("planetoid"))
    assert main(["shard", "--dataset", "cora", "--data-dir", data, "-P", "1", "--method", "block",
                 "--out", str(tmp_path / "s"), "-q"]) == 0
    assert main(["train", GCN, "--shards", str(tmp_path / "s"), "--epochs", "3", "-q",
                 "--json", str(tmp_path / "a.json")]) == 0
    assert main(["train", GCN, "--dataset", "cora", "--data-dir", data, "--epochs", "3", "-q",
                 "--json", str(tmp_path / "b.json")]) == 0
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    assert [e["loss"] for e in a["epochs"]] == [e["loss"] for e in b["epochs"]]
    assert a["test_accuracy"] == b["test_accuracy"]


@pytest.mark.mpi
def test_sharded_run_under_mpiexec(files, tmp_path):
    d, want, has = files
    assert main(["shard", "-i", f"A={d / 'g.mtx'}", "-i", f"X={d / 'x.npy'}", "-P", "2", "--method", "random",
                 "--out", str(d / "s"), "-q"]) == 0
    r = subprocess.run([DSPLA, "run", str(d / "p.dspla"), "--np", "2", "--shards", str(d / "s"), "-i",
                        f"W={d / 'w.npy'}", "--out", str(d / "o.npz"), "--stats", str(d / "st.json"),
                        "--plan", "p2p1d"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "peak RSS per rank (MB):" in r.stdout and "planning spmd" in r.stdout
    vals, pres = read_results(d / "o.npz")["T"]
    T = np.where(pres, vals, np.nan)
    assert np.array_equal(T[has], want[has]) and np.isnan(T[~has]).all()
    st = json.loads((d / "st.json").read_text())
    assert st["planning"] == "spmd" and len(st["per_rank"]) == 2
    assert all(x["peak_rss_bytes"] > 0 and "load_s" in x for x in st["per_rank"])


@pytest.mark.mpi
def test_train_from_shards_under_mpiexec(tmp_path):
    data = str(dataset("planetoid"))
    assert main(["shard", "--dataset", "cora", "--data-dir", data, "-P", "2", "--method", "random",
                 "--out", str(tmp_path / "s"), "-q"]) == 0
    r = subprocess.run([DSPLA, "train", GCN, "--np", "2", "--shards", str(tmp_path / "s"), "--epochs", "3", "-q",
                        "--json", str(tmp_path / "a.json")], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([DSPLA, "train", GCN, "--np", "2", "--dataset", "cora", "--data-dir", data, "--partition",
                        "random", "--epochs", "3", "-q", "--json", str(tmp_path / "b.json")], capture_output=True,
                       text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    assert [e["loss"] for e in a["epochs"]] == [e["loss"] for e in b["epochs"]]
    assert a["test_accuracy"] == b["test_accuracy"]


def test_a_one_process_set_is_read_by_rows_only(files, capsys):
    d, _, _ = files
    assert main(["shard", "-i", f"A={d / 'g.mtx'}", "-i", f"X={d / 'x.npy'}", "-P", "1", "--out", str(d / "s"),
                 "-q"]) == 0
    assert read_manifest(d / "s")["method"] == "none"   # (not the default method's name: nothing ran)
    capsys.readouterr()
    code = main(["run", str(d / "p.dspla"), "--shards", str(d / "s"), "-i", f"W={d / 'w.npy'}", "--np", "2",
                 "--partition", "hypergraph"])
    err = capsys.readouterr().err
    assert code == 2 and "one-process set, read by rows" in err and "shard with -P 2 --method hypergraph" in err
