"""docs/ is for users and contributors, not a lab notebook: no data files in it, no words about
how the work was organised (sessions, issue numbers, seed papers by number) in the documentation,
the README, the language reference or the examples, a bounded length, only figures a page shows,
and one current figure per benchmark (docs/benchmarks.md) with its latest JSON in bench/results/."""
from __future__ import annotations

import json
import re

import pytest

from dspla.cli.main import main

from conftest import ROOT

DOCS = ROOT / "docs"
PROCESS_WORDS = re.compile(
    r"(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|[a-z]+teenth"
    r"|twentieth|[0-9]+(st|nd|rd|th)) session|seed 0[0-9][0-9]|issue #?[0-9]+", re.I)
MAX_DOC_LINES = 2200
MAX_BENCHMARKS_LINES = 320      # "at most ~300 lines"


def _text_files(*roots):
    for root in roots:
        for p in [root] if root.is_file() else sorted(root.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".png", ".svg", ".pyc"}:
                yield p


def test_docs_hold_no_data_files():
    found = [str(p.relative_to(ROOT)) for p in DOCS.rglob("*") if p.suffix in {".json", ".txt"}]
    assert not found, f"benchmark output belongs in bench/results/NAME.json, not docs/: {found}"


def test_no_process_words_in_user_facing_text():
    hits = []
    for p in _text_files(DOCS, ROOT / "README.md", ROOT / "lang", ROOT / "examples"):
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            if m := PROCESS_WORDS.search(line):
                hits.append(f"{p.relative_to(ROOT)}:{n}: {m.group(0)!r}")
    assert not hits, "cite a paper by its title, not a process step:\n" + "\n".join(hits)


def test_the_pattern_catches_what_it_is_for():
    for bad in ("(2026-11-27, thirteenth session)", "issue 4's bars", "Issue #17", "seed 000 §3.1",
                "the 2nd session", "twentieth session"):
        assert PROCESS_WORDS.search(bad), bad
    for fine in ("the session keys its plan", "seed 1, eps 0.03", "--seed 0", "a known issue"):
        assert not PROCESS_WORDS.search(fine), fine


def test_docs_stay_short():
    lines = {p.name: len(p.read_text().splitlines()) for p in DOCS.glob("*.md")}
    assert sum(lines.values()) < MAX_DOC_LINES, (sum(lines.values()), lines)
    assert lines["benchmarks.md"] <= MAX_BENCHMARKS_LINES, lines["benchmarks.md"]


def test_every_figure_is_shown_by_a_doc():
    text = "\n".join(p.read_text() for p in [ROOT / "README.md", *DOCS.glob("*.md")])
    unused = [p.name for p in (DOCS / "figures").glob("*") if f"figures/{p.name}" not in text]
    assert not unused, f"figures no doc shows: {unused}"


@pytest.fixture(scope="module")
def benchmark_names():
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["bench", "list"]) == 0
    names = out.getvalue().split()
    assert len(names) >= 10
    return names


def test_benchmarks_md_has_a_section_per_benchmark(benchmark_names):
    headings = [line[3:].lower() for line in (DOCS / "benchmarks.md").read_text().splitlines()
                if line.startswith("## ")]
    missing = [n for n in benchmark_names if not any(n in h for h in headings)]
    assert not missing, f"docs/benchmarks.md has no section for {missing}"


def test_bench_results_are_one_json_per_benchmark(benchmark_names):
    results = sorted((ROOT / "bench" / "results").iterdir())
    assert results
    for p in results:
        assert p.suffix == ".json", p
        assert p.stem.split("-")[0] in benchmark_names, f"{p.name}: no benchmark of that name"
        assert isinstance(json.loads(p.read_text()), dict), p
