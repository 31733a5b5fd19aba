"""The run's summary line names what it times: the run (the median of --repeat runs), planning,
and each loop's iteration count (it said 'iteration 0.0279 s (median of 1)' of a whole run)."""
from __future__ import annotations

import re

import numpy as np
import scipy.io
import scipy.sparse as sp

from dspla.cli.main import main

from conftest import ROOT


def test_the_summary_says_run_planning_and_the_loops_iterations(tmp_path, capsys):
    A = sp.random_array((60, 60), density=0.08, random_state=4, format="coo")
    scipy.io.mmwrite(tmp_path / "a.mtx", A)
    assert main(["run", str(ROOT / "examples" / "pagerank.dspla"), "-i", f"A={tmp_path / 'a.mtx'}", "-i",
                 "r0=full:1"]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    m = re.fullmatch(r"P=1; run \d+\.\d{3} s, planning \d+\.\d{3} s; loop: (\d+) iterations", line)
    assert m, line
    assert int(m.group(1)) >= 2
    np.save(tmp_path / "x.npy", np.ones((60, 3)))
    assert main(["run", str(ROOT / "examples" / "gcn_layer.dspla"), "-i", f"A={tmp_path / 'a.mtx'}", "-i",
                 f"X={tmp_path / 'x.npy'}", "-i", "W=full:1", "--repeat", "3"]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert re.fullmatch(r"P=1; run \d+\.\d{3} s \(median of 3 runs\), planning \d+\.\d{3} s", line), line
    assert "iteration" not in line
