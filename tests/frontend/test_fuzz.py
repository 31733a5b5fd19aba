"""A bounded parser fuzz run on every ``make test`` (the longer one: ``dspla bench fuzz``): mutated
programs either parse and type-check or fail with a located DsplaError, never anything else
(no RecursionError, no SyntaxError from a literal, no error without a location)."""
from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # bench/ of this checkout
from bench.fuzz import outcome, programs  # noqa: E402

CASES = 3000


@settings(max_examples=CASES, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(programs())
def test_mutated_programs_parse_or_fail_with_a_located_error(text):
    assert outcome(text) in ("valid", "error")
