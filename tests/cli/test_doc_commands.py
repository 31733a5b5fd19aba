"""Commands and messages quoted in the docs are the real ones: docs/getting-started.md runs as
written, the explain examples of docs/planner.md run on the example programs, and docs/cluster.md
quotes the CLI's refusal of --partition-file with --shards instead of promising rank-0 planning
for it."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from dspla.cli.main import main
from dspla.io.shards import write_shards

from conftest import ROOT

RUN = "input A : sparse[n, n]\ninput X : dense[n, k]\nT = A @ X\noutput T\n"


def _sh_lines(doc: str) -> list[str]:
    text = (ROOT / "docs" / doc).read_text()
    return [line for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M) for line in block.splitlines()]


def test_planner_md_explain_examples_run(tmp_path, monkeypatch, capsys):
    A = sp.random_array((200, 200), density=0.03, rng=np.random.default_rng(0), format="coo")
    scipy.io.mmwrite(tmp_path / "g.mtx", A)
    monkeypatch.chdir(ROOT)   # the examples are named from the repository root
    runs = [line.split("#")[0].replace("$G", str(tmp_path / "g.mtx")) for line in _sh_lines("planner.md")
            if line.startswith("dspla explain examples/")]
    assert len(runs) >= 2   # gcn.dspla (dims f, h, c) and gcn_layer.dspla (dim f)
    for line in runs:
        assert main(shlex.split(line)[1:]) == 0, (line, capsys.readouterr().err)
    assert "cannot plan" not in capsys.readouterr().err


def test_cluster_md_quotes_the_partition_file_refusal(tmp_path, capsys):
    (tmp_path / "p.dspla").write_text(RUN)
    A = sp.random_array((50, 50), density=0.1, rng=np.random.default_rng(0), format="csr")
    write_shards(str(tmp_path / "s"), {"A": A, "X": np.ones((50, 2))}, np.zeros(50, np.int64), 1, progress=False)
    np.save(tmp_path / "part.npy", np.zeros(50, np.int64))
    assert main(["run", str(tmp_path / "p.dspla"), "--shards", str(tmp_path / "s"),
                 "--partition-file", str(tmp_path / "part.npy")]) == 2
    refusal = "--partition-file and --shards: the shard set is partitioned already"
    assert refusal in capsys.readouterr().err
    doc = " ".join((ROOT / "docs" / "cluster.md").read_text().split())
    assert f"({refusal})" in doc.replace("`", "")
    # the CLI never plans a partition file with shards on rank 0, as the doc once said it did
    assert "a `--partition-file` given with sharded inputs" not in doc



def test_make_bench_names_benchmarks_that_exist(capsys):
    """`make bench` once called `dspla bench all`, which is no benchmark: every name in its BENCH
    default must be one `dspla bench list` prints."""
    text = (ROOT / "Makefile").read_text()
    default = re.search(r"^BENCH \?= (.+)$", text, re.M)
    assert default, "Makefile has no BENCH ?= line"
    assert main(["bench", "list"]) == 0
    listed = capsys.readouterr().out.split()
    names = default.group(1).split()
    assert names and set(names) <= set(listed), (names, listed)
    assert "dspla bench $$b" in text


@pytest.mark.mpi
def test_getting_started_commands_run_as_written(tmp_path):
    """docs/getting-started.md promises that every command runs as written from the repository
    root: its sh blocks run in one shell (`make` lines excepted: `make test` runs them), with
    its `out/` folder moved to a temporary one."""
    text = (ROOT / "docs" / "getting-started.md").read_text()
    blocks = re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)
    assert len(blocks) >= 4
    script = "\n".join(line for b in blocks for line in b.splitlines() if not line.startswith("make "))
    assert "--np 2" in script and "mpiexec" in script
    script = re.sub(r"(?<![\w/.-])out(?=/|\s|$)", f"{tmp_path}/out", script, flags=re.M)
    assert f"{tmp_path}/out/graph.mtx" in script
    env = {**os.environ, "MPIR_CVAR_POLLS_BEFORE_YIELD": "1", "DSPLA_CACHE_DIR": str(tmp_path / "cache"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=ROOT, capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert (tmp_path / "out" / "layer.npz").exists() and (tmp_path / "out" / "stats.png").exists()
