"""Every Python code block of README.md and docs/*.md runs as written: with plain python, and
under ``mpiexec -n 2`` (the same script on two ranks), so the documentation cannot rot.

A block runs from the repository root with the datasets folder beside it. A block that makes no
sense on several processes says so on the line before it: ``<!-- docs-test: one process -->``."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"(?P<mark><!-- docs-test: (?P<opt>[^>]*) -->\s*\n)?^```python\n(?P<code>.*?)^```", re.S | re.M)


def blocks():
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start("code")) + 1
            out.append(pytest.param(m.group("code"), (m.group("opt") or "").strip(),
                                    id=f"{doc.relative_to(ROOT)}:{line}"))
    return out


BLOCKS = blocks()


def test_the_docs_have_python_blocks():
    assert len(BLOCKS) >= 4


def _run(cmd, tmp_path):
    env = {**os.environ, "MPIR_CVAR_POLLS_BEFORE_YIELD": "1", "DSPLA_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize("code,opt", BLOCKS)
def test_a_block_runs_with_plain_python(tmp_path, code, opt):
    (tmp_path / "block.py").write_text(code)
    r = _run([sys.executable, tmp_path / "block.py"], tmp_path)
    assert r.returncode == 0, f"{r.stdout[-2000:]}\n{r.stderr[-3000:]}"


@pytest.mark.mpi
@pytest.mark.parametrize("code,opt", BLOCKS)
def test_a_block_runs_under_mpiexec(tmp_path, code, opt):
    if opt == "one process":
        pytest.skip("the block says it is for one process")
    (tmp_path / "block.py").write_text(code)
    r = _run([Path(sys.executable).parent / "mpiexec", "-n", "2", sys.executable, tmp_path / "block.py"], tmp_path)
    assert r.returncode == 0, f"{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
