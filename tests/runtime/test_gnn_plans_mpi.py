"""The GNN plans under real mpiexec: a GCN step (forward and backward) on P processes equals
the single-process run within 1e-12, and every product's measured words equal its predicted."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.mpi
BIN = Path(sys.executable).parent
TESTS = Path(__file__).resolve().parents[1]

SCRIPT = """
import json, sys
import numpy as np
sys.path.insert(0, {tests!r})
import dspla as dp
from plan.test_gcn_plans import _small, STEP, OUTS
comm = dp.world()
inp = _small(3, n=120)
opt = {opt!r}
out = STEP.run(inp if comm.rank == 0 else None, comm=comm, plan={plan!r}, **{{"partition": "random", **opt}})
got = {{k: out[k].to_numpy(fill=0.0, root=0) for k in OUTS}}
if comm.rank == 0:
    np.savez({out!r}, **got)
    st = STEP.last_stats
    print(json.dumps([[p["plan"], p["words_sent_total"], p["predicted"]["words"]] for p in st["products"]]))
"""


@pytest.mark.parametrize("plan, P, opt", [("3d", 2, {}), ("3d", 4, {}), ("15d_sparse", 4, {"replication": 2}),
                                          ("vertexcut", 4, {"partition": "spac"}),
                                          ("p2p1d_node", 4, {"ranks_per_node": 2}),
                                          ("p2p1d_node", 3, {"ranks_per_node": 2, "spmd": False})])
def test_gcn_step_under_mpiexec(tmp_path, plan, P, opt):
    sys.path.insert(0, str(TESTS))
    from plan.test_gcn_plans import OUTS, STEP, _small
    want = STEP(**_small(3, n=120))
    (tmp_path / "s.py").write_text(SCRIPT.format(tests=str(TESTS), plan=plan, opt=opt, out=str(tmp_path / "o.npz")))
    r = subprocess.run([str(BIN / "mpiexec"), "-n", str(P), sys.executable, str(tmp_path / "s.py")],
                       capture_output=True, text=True, timeout=240,
                       env={**os.environ, "MPIR_CVAR_POLLS_BEFORE_YIELD": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    products = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(products) == 4 and all(p == plan and m == w for p, m, w in products), products
    got = np.load(tmp_path / "o.npz")
    for k in OUTS:
        np.testing.assert_allclose(got[k], want[k].to_numpy(fill=0.0), rtol=0, atol=1e-12, err_msg=k)
