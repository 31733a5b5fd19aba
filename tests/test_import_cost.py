"""What `import dspla` and a one-process `dspla run` load: not what a run does not need. numba
(0.2-0.5 s), matplotlib, the partitioners and the parser come when used; a run on one process
happens in the process itself (no relaunch under mpiexec). Each check is a fresh interpreter."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import scipy.io
import scipy.sparse as sp

from conftest import ROOT

HEAVY = ["numba", "matplotlib", "mtkahypar", "kahypar", "pymetis", "lark", "scipy.optimize", "networkx", "mpi4py"]


def _loaded(code: str) -> dict:
    """Which of the heavy modules ``code`` loaded: a module named in sys.modules whose code has
    not run (an ``importlib.util.LazyLoader`` stub, which the ops' definitions hold until a rule
    runs) is not loaded; its type is looked at, since reading any attribute would load it."""
    probe = (f"{code}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules and "
             f"type(sys.modules[m]).__name__ != '_LazyModule' for m in {HEAVY + ['graphblas']!r}}}))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_import_dspla_loads_none_of_the_heavy_modules():
    got = _loaded("import dspla")
    assert not any(got.values()), {m: v for m, v in got.items() if v}


def test_building_a_program_loads_none_of_them_either():
    got = _loaded("import dspla as dp\nA = dp.sparse('A', ('n', 'n'))\nX = dp.dense('X', ('n', 'f'))\n"
                  "e = dp.relu(A @ X)\n")
    assert not any(got.values()), {m: v for m, v in got.items() if v}


def test_the_names_of_the_namespace_load_when_used():
    got = _loaded("import dspla as dp\nassert callable(dp.function) and dp.Function.__name__ == 'Function'\n"
                  "import dspla.function\nassert callable(dp.function)\n"
                  "assert dp.load_graph and dp.read_results and dp.Trainer and dp.plot.__name__ == 'dspla.plot'")
    assert got["graphblas"] and not got["matplotlib"] and not got["lark"]


def test_a_run_on_one_process_runs_here_without_numba_or_a_launcher(tmp_path):
    scipy.io.mmwrite(tmp_path / "a.mtx", sp.random_array((30, 30), density=0.1, random_state=0, format="coo"))
    np.save(tmp_path / "x.npy", np.ones((30, 4)))
    np.save(tmp_path / "w.npy", np.ones((4, 7)))
    code = ("import sys\nfrom dspla.cli.main import main\n"
            f"code = main(['run', {str(ROOT / 'examples' / 'gcn_layer.dspla')!r}, '-i', 'A={tmp_path / 'a.mtx'}', "
            f"'-i', 'X={tmp_path / 'x.npy'}', '-i', 'W={tmp_path / 'w.npy'}', '--np', '1', "
            "'--mpiexec', '/nonexistent/mpiexec'])\nassert code == 0, code")
    got = _loaded(code)
    assert not got["numba"] and not got["matplotlib"] and not got["mtkahypar"] and not got["mpi4py"]


def test_a_job_launcher_loads_neither_numpy_nor_the_language(tmp_path):
    """``dspla run --np 2`` only checks its arguments and starts the ranks (which check the
    program): what it loads adds to every job's start-up."""
    (tmp_path / "a.mtx").write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n")
    code = ("import sys\nfrom dspla.cli.main import main\n"
            f"code = main(['run', {str(ROOT / 'examples' / 'gcn_layer.dspla')!r}, '-i', 'A={tmp_path / 'a.mtx'}', "
            "'--np', '2', '--mpiexec', '/bin/true'])\nassert code == 2, code\n"
            "assert not {'numpy', 'dspla.ops', 'dspla.frontend.parser'} & set(sys.modules), sorted(sys.modules)")
    got = _loaded(code)
    assert not any(got.values()), {m: v for m, v in got.items() if v}
