"""Every code block of README.md and docs/*.md runs as written, in a fresh copy of the repository
(its tracked files, with ../shared beside it), so the documentation cannot rot:

- a ``python`` block with plain python, and under ``mpiexec -n 2`` (the same script on two ranks);
- the ``sh`` blocks of one document in order, in one copy (a block may use what an earlier one
  of the same document made), each with ``bash -e``, the venv's commands first on PATH and its
  own cache folder, within BLOCK_S seconds.

The convention for a block that must not run here (a cluster's launcher, a system install, a
minutes-long measurement) or must run differently: an HTML comment on the line before its fence,
invisible on the rendered page, which says why:

    <!-- docs-test: skip: REASON -->      not run (REASON is required)
    <!-- docs-test: one process -->       a python block not run under mpiexec
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]
FENCE = re.compile(r"(?:^<!-- docs-test: (?P<opt>[^>]*?) -->\s*\n)?^```(?P<lang>[a-z]*)\n(?P<code>.*?)^```",
                   re.S | re.M)
BLOCK_S = 300
BIN = Path(sys.executable).parent


def _blocks(doc: Path) -> list[dict]:
    text = doc.read_text()
    out = []
    for m in FENCE.finditer(text):
        opt = (m.group("opt") or "").strip()
        out.append({"lang": m.group("lang"), "code": m.group("code"), "opt": opt,
                    "where": f"{doc.relative_to(ROOT)}:{text.count(chr(10), 0, m.start('code')) + 1}"})
    return out


def _params(lang: str) -> list:
    return [pytest.param(b["code"], b["opt"], id=b["where"]) for doc in DOCS for b in _blocks(doc)
            if b["lang"] == lang]


PYTHON = _params("python")
# (docs/getting-started.md's blocks run as one script in tests/cli/test_doc_commands.py)
SHELL_DOCS = [pytest.param(doc, id=str(doc.relative_to(ROOT))) for doc in DOCS
              if doc.name != "getting-started.md" and any(b["lang"] == "sh" and not b["opt"] for b in _blocks(doc))]


def clone(dest: Path) -> Path:
    """The repository's files as a fresh clone has them (tracked, and new ones not ignored), in
    dest/repo, with dest/shared pointing at the datasets folder beside the repository."""
    repo = dest / "repo"
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file() or src.is_symlink():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            if src.is_symlink():
                os.symlink(os.readlink(src), repo / rel)
            else:
                shutil.copy2(src, repo / rel)
    if (ROOT.parent / "shared").exists():
        os.symlink(ROOT.parent / "shared", dest / "shared")
    return repo


def _env(tmp: Path) -> dict:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "MPIR_CVAR_POLLS_BEFORE_YIELD": "1",
            "DSPLA_CACHE_DIR": str(tmp / "cache"), "PYTHONDONTWRITEBYTECODE": "1"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return clone(tmp_path_factory.mktemp("docs"))


def test_the_docs_have_blocks_of_both_kinds_and_every_skip_says_why():
    assert len(PYTHON) >= 4 and len(SHELL_DOCS) >= 6
    for doc in DOCS:
        for b in _blocks(doc):
            opt = b["opt"]
            assert opt in ("", "one process") or re.fullmatch(r"skip: \S.{8,}", opt), \
                f"{b['where']}: '<!-- docs-test: {opt} -->' is not 'skip: REASON' or 'one process'"


def test_a_skip_marks_one_block_only_and_the_readme_starts_with_what_runs():
    blocks = _blocks(ROOT / "README.md")
    shell = [b for b in blocks if b["lang"] == "sh"]
    runs = next(b for b in shell if not b["opt"])
    assert runs["code"].splitlines()[0].startswith("dspla generate "), "the README makes its inputs first"


def _run(cmd, cwd: Path, tmp: Path):
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=BLOCK_S,
                          env=_env(tmp))


@pytest.mark.parametrize("code,opt", PYTHON)
def test_a_python_block_runs_with_plain_python(repo, tmp_path, code, opt):
    if opt.startswith("skip:"):
        pytest.skip(opt)
    (tmp_path / "block.py").write_text(code)
    r = _run([sys.executable, tmp_path / "block.py"], repo, tmp_path)
    assert r.returncode == 0, f"{r.stdout[-2000:]}\n{r.stderr[-3000:]}"


@pytest.mark.mpi
@pytest.mark.parametrize("code,opt", PYTHON)
def test_a_python_block_runs_under_mpiexec(repo, tmp_path, code, opt):
    if opt == "one process" or opt.startswith("skip:"):
        pytest.skip(f"the block says: {opt}")
    (tmp_path / "block.py").write_text(code)
    r = _run([BIN / "mpiexec", "-n", "2", sys.executable, tmp_path / "block.py"], repo, tmp_path)
    assert r.returncode == 0, f"{r.stdout[-2000:]}\n{r.stderr[-3000:]}"


@pytest.mark.mpi
@pytest.mark.parametrize("doc", SHELL_DOCS)
def test_the_shell_blocks_of_a_doc_run_as_written(tmp_path, doc):
    repo = clone(tmp_path)
    for b in _blocks(doc):
        if b["lang"] != "sh" or b["opt"].startswith("skip:"):
            continue
        r = _run(["bash", "-e", "-o", "pipefail", "-c", b["code"]], repo, tmp_path)
        assert r.returncode == 0, f"{b['where']} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
