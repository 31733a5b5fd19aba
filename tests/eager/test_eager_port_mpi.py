"""The python-graphblas port shown in docs/when-to-use.md (the import changed, ``.new()``
dropped) runs unchanged on one process and under ``mpiexec -n 2``, equal to python-graphblas's
own result (the block asserts it)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _port() -> str:
    text = (ROOT / "docs" / "when-to-use.md").read_text()
    blocks = [b for b in re.findall(r"^```python\n(.*?)^```", text, re.S | re.M) if "import dspla as gb" in b]
    assert len(blocks) == 1, "docs/when-to-use.md shows one python-graphblas port"
    return blocks[0]


def test_the_port_runs_on_one_process(tmp_path):
    (tmp_path / "port.py").write_text(_port())
    r = subprocess.run([sys.executable, str(tmp_path / "port.py")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.mpi
def test_the_port_runs_under_mpiexec(tmp_path):
    (tmp_path / "port.py").write_text(_port() + "\nprint(f'ok {gb.world().rank} {gb.world().size}', flush=True)\n")
    r = subprocess.run([str(BIN / "mpiexec"), "-n", "2", sys.executable, str(tmp_path / "port.py")],
                       capture_output=True, text=True, timeout=180, env={**__import__("os").environ,
                                                                        "MPIR_CVAR_POLLS_BEFORE_YIELD": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    assert "ok 0 2" in r.stdout and "ok 1 2" in r.stdout   # (the ranks' lines may interleave)
