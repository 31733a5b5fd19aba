"""dspla partition / dspla comm-stats end to end; volumes checked against a loop oracle."""
import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from test_partition_cache_shp_edge import sends_loop
from test_partition_methods import powerlaw_graph

from dspla.cli.main import main

KEYS = {"method", "P", "volume_total", "volume_avg", "volume_max", "messages_total", "messages_avg",
        "messages_max", "imbalance", "seconds"}


@pytest.fixture
def graph(tmp_path, monkeypatch):
    monkeypatch.setenv("DSPLA_CACHE_DIR", str(tmp_path / "cache"))
    A = powerlaw_graph(150, seed=5)
    path = tmp_path / "g.mtx"
    scipy.io.mmwrite(str(path), A)
    return path, sp.csr_matrix(A)


def test_partition_writes_npy(graph, tmp_path, capsys):
    path, A = graph
    assert main(["partition", str(path), "-P", "4", "--method", "graph", "--seed", "2", "--out",
                 str(tmp_path / "p.npy")]) == 0
    out = capsys.readouterr().out
    parts = np.load(tmp_path / "p.npy")
    assert parts.shape == (150,) and parts.dtype == np.int64 and parts.max() == 3
    vol, _ = sends_loop(A, parts, 4)
    assert f"total {sum(vol)}" in out and "imbalance" in out
    # the second run comes from the cache; --no-cache recomputes the same partition
    main(["partition", str(path), "-P", "4", "--method", "graph", "--seed", "2", "--out", str(tmp_path / "q.npy")])
    assert "(cached)" in capsys.readouterr().out
    main(["partition", str(path), "-P", "4", "--method", "graph", "--seed", "2", "--no-cache", "--out",
          str(tmp_path / "r.npy")])
    assert "(cached)" not in capsys.readouterr().out
    assert np.array_equal(np.load(tmp_path / "q.npy"), parts) and np.array_equal(np.load(tmp_path / "r.npy"), parts)


def test_comm_stats_json_and_table(graph, tmp_path, capsys):
    path, A = graph
    out = tmp_path / "c.json"
    assert main(["comm-stats", str(path), "-P", "2,4", "--methods", "hypergraph,graph,random", "--preset", "default",
                 "--seed", "1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "HP/GP" in text and "normalised to RP" in text and "P = 4" in text
    recs = json.loads(out.read_text())
    assert {(r["method"], r["P"]) for r in recs} == {(m, P) for m in ("hypergraph", "graph", "random") for P in (2, 4)}
    for r in recs:
        assert KEYS <= set(r)
    rnd = [r for r in recs if r["method"] == "random" and r["P"] == 4][0]
    from dspla.partition import random_parts
    vol, msg = sends_loop(A, random_parts(150, 4, 1), 4)
    assert rnd["volume_total"] == sum(vol) and rnd["volume_max"] == max(vol) and rnd["volume_avg"] == sum(vol) / 4
    assert rnd["messages_total"] == sum(msg) and rnd["messages_max"] == max(msg)
    hp = [r for r in recs if r["method"] == "hypergraph" and r["P"] == 4][0]
    assert hp["imbalance"] <= 0.03 + 1e-9 and hp["volume_total"] < rnd["volume_total"]


def test_comm_stats_partition_file(graph, tmp_path, capsys):
    path, A = graph
    parts = np.arange(150) % 3
    np.save(tmp_path / "mine.npy", parts)
    assert main(["comm-stats", str(path), "--partition-file", str(tmp_path / "mine.npy"), "--name", "mine",
                 "--json", str(tmp_path / "c.json")]) == 0
    recs = json.loads((tmp_path / "c.json").read_text())
    assert [(r["method"], r["P"]) for r in recs] == [("mine", 3)]
    vol, msg = sends_loop(A, parts, 3)
    assert recs[0]["volume_total"] == sum(vol) and recs[0]["messages_total"] == sum(msg)
    assert "mine" in capsys.readouterr().out


def test_cli_errors(graph, tmp_path):
    path, _ = graph
    r = subprocess.run([sys.executable, "-m", "dspla.cli.main", "partition", str(path), "-P", "4", "--method",
                        "metis"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown partitioning method 'metis'" in r.stderr and "hypergraph" in r.stderr
    assert "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "dspla.cli.main", "comm-stats", str(path), "-P", "4,x"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "argument -P: must be comma-separated whole numbers" in r.stderr
    np.save(tmp_path / "bad.npy", np.zeros(7, dtype=np.int64))
    r = subprocess.run([sys.executable, "-m", "dspla.cli.main", "comm-stats", str(path), "--partition-file",
                        str(tmp_path / "bad.npy")], capture_output=True, text=True)
    assert r.returncode == 2 and "bad.npy" in r.stderr and "150" in r.stderr
