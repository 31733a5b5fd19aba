"""Modules stay readable in one sitting: no module of dspla/ over 500 lines, no function or method
over 80 (tests and bench are not held to it). Counted from the source with ast: a function's
lines run from its ``def`` (decorators not included) to its last statement."""
from __future__ import annotations

import ast
from pathlib import Path

import dspla

PACKAGE = Path(dspla.__file__).resolve().parent
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "grammar" not in p.relative_to(PACKAGE).parts)


def test_no_module_is_over_500_lines():
    long = [(str(p.relative_to(PACKAGE)), n) for p in _modules()
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES]
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_no_function_is_over_80_lines():
    long = []
    for p in _modules():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append((f"{p.relative_to(PACKAGE)}:{node.lineno} {node.name}", n))
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_counts_see_what_they_count():
    """The walk finds the package's modules and nested functions (a check that cannot pass vacuously)."""
    names = {p.relative_to(PACKAGE).as_posix() for p in _modules()}
    assert {"ops/mxm.py", "session/driver.py", "instr/base.py", "compiler.py"} <= names
    tree = ast.parse((PACKAGE / "ops" / "define" / "registry.py").read_text())
    assert any(isinstance(n, ast.FunctionDef) and n.name == "register" for n in ast.walk(tree))
