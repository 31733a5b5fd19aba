"""Parser fuzzing: ``dspla bench fuzz [--cases N] [--seed S]``.

Programs are made by mutating valid ones (the examples and a few small programs): deleting,
duplicating and moving spans, inserting tokens of the language (operators, brackets, names,
numbers huge and tiny, strings with escapes, keywords), and long runs of one token (deep
expressions). Each is parsed and type-checked (``Function(parse(text))``), which must either
succeed or raise a DsplaError that carries a source location; anything else (another
exception type, an error without a location) is a failure, printed with the program. The test
suite runs a few thousand of these cases on every ``make test`` (tests/frontend/test_fuzz.py).
"""
from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dspla.errors import DsplaError
from dspla.frontend.parser import parse
from dspla.function import Function

ROOT = Path(__file__).resolve().parents[1]
SEEDS = [
    "input A : sparse[n, n]\ninput X : dense[n, k]\nT = mxm(A, X, plus_second)\nU = A @ X + X\noutput T, U\n",
    "input X : dense[n, k]\nparam W : dense[k, 4]\nH = relu(X @ W) * 2.0 - X @ W\noutput H\n",
    "input A : sparse[n, n] bool\ninput v : vector[n] bool\nw = mxv(A, v, lor_land)\noutput w\n",
    "input A : sparse[n, m]\nB = select(A, gt, 0.5)\nC = reduce(B, max, rows)\nD = A.T @ A\noutput B, C, D\n",
    "input X : dense[3, 3]\nY = eye(3) @ X + cast(X, float32)\nZ = apply(X, times, left=-1e3)\noutput Y, Z\n",
]
TOKENS = ["+", "-", "*", "/", "@", "**", ".T", "(", ")", "[", "]", ",", "=", ":", "\n", " ", "\t", "#", "\\\n",
          "input", "param", "output", "sparse", "dense", "vector", "float64", "int64", "bool", "true", "false",
          "A", "X", "W", "T", "n", "k", "mxm", "eye", "relu", "reduce", "apply", "select", "mask", "cast",
          "plus_times", "min_plus", "rows", "left=", "semiring=", "0", "1", "3", "0.5", "1e999", "1e-999", "2.5e3",
          "9" * 25, "99999999999999999999", '"plus_times"', '"\\N{x}"', '"\\x"', '"abc\\"', '"', "\x00", "\u00d7",
          "$", ";", "`"]


def _seeds() -> list[str]:
    files = sorted((ROOT / "examples").glob("*.dspla"))
    return SEEDS + [f.read_text() for f in files]


@st.composite
def programs(draw) -> str:
    """A mutated program: 1-6 edits of a valid one, sometimes a long run of one token."""
    text = draw(st.sampled_from(_seeds()))
    for _ in range(draw(st.integers(1, 6))):
        n = len(text)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 40)))
        op = draw(st.sampled_from(["delete", "insert", "insert", "replace", "duplicate", "move", "repeat"]))
        if op == "delete":
            text = text[:i] + text[j:]
        elif op == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif op == "replace":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[j:]
        elif op == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        elif op == "move":
            piece, rest = text[i:j], text[:i] + text[j:]
            k = draw(st.integers(0, len(rest)))
            text = rest[:k] + piece + rest[k:]
        else:   # deep expressions: thousands of unary minus, .T, parentheses or + X
            token = draw(st.sampled_from(["-", ".T", "(", "+ X ", "relu("]))
            text = text[:i] + token * draw(st.integers(50, 3000)) + text[i:]
    return text


def outcome(text: str) -> str:
    """'valid', 'error' (a located DsplaError), or raises AssertionError describing the failure."""
    try:
        Function(parse(text, "<fuzz>"))
        return "valid"
    except DsplaError as e:
        if e.span is None or not str(e).startswith("<fuzz>:"):
            raise AssertionError(f"an error without a location: {type(e).__name__}: {e}") from None
        return "error"
    except Exception as e:  # noqa: BLE001 - the failure the fuzzer looks for
        raise AssertionError(f"{type(e).__name__}: {e}") from e


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="dspla bench fuzz", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=50_000, help="programs to try (default 50000)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    counts: collections.Counter = collections.Counter()
    failures: list[tuple[str, str]] = []
    t0 = time.perf_counter()

    @settings(max_examples=args.cases, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def run(text):
        try:
            counts[outcome(text)] += 1
        except AssertionError as e:
            counts["failure"] += 1
            if len(failures) < 20:
                failures.append((str(e), text))

    import random
    random.seed(args.seed)
    run()
    total = sum(counts.values())
    print(f"{total} programs in {time.perf_counter() - t0:.0f} s: {counts['valid']} valid, {counts['error']} clear "
          f"errors with a location, {counts['failure']} failures")
    for why, text in failures:
        print(f"\n--- {why}\n{text[:2000]!r}")
    return 1 if counts["failure"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
