"""Is a calibration good enough to replace the one in use? ``assess`` says what is wrong with it,
``warnings`` what is marginal about one that is saved.

A fit is refused (``dspla calibrate`` keeps the previous calibration, ``--force`` saves anyway)
when any of these holds -- the thresholds are documented in docs/planner.md:

- the end-to-end refit explains the plan runs poorly: R^2 of log(time) below MIN_R2, or the
  median |log(predicted / measured)| above MAX_MEDIAN_LOG_RATIO (predictions typically off by
  more than 1.4x);
- a coefficient every plan's prediction uses is zero or not finite;
- without the refit (``--no-plans``): the point-to-point or local-SpMM microbenchmark fit has R^2
  below MIN_R2 (every plan's time is built from those two).

A fit whose predictions pass but with more than MAX_PINNED coefficients at the refit's bounds
(the runs pulled them further than the microbenchmarks allow: the two disagree, as on a loaded
machine) is marginal: saved, with a warning and each coefficient's quality.
"""
from __future__ import annotations

import math

MIN_R2 = 0.5
MAX_MEDIAN_LOG_RATIO = 0.35
MAX_PINNED = 3
ESSENTIAL = ("gamma", "beta_p2p", "alpha_p2p", "beta_coll", "alpha_coll")
CORE_FAMILIES = ("p2p", "spmm")


def assess(coefficients: dict, fits: dict) -> list[str]:
    """The reasons to refuse the calibration (empty: it is good)."""
    why = []
    for k in ESSENTIAL:
        v = coefficients.get(k)
        if v is None or not math.isfinite(v) or v <= 0:
            why.append(f"{k} = {v} (every plan's predicted time uses it)")
    plans = fits.get("plans")
    if plans:
        after = plans["after"]
        if after.get("r2", 1.0) < MIN_R2:
            why.append(f"the fit explains the plan runs poorly: R^2(log) = {after['r2']:.2f} < {MIN_R2}")
        if after["median_abs_log_ratio"] > MAX_MEDIAN_LOG_RATIO:
            why.append(f"predictions are off by a median factor of {math.exp(after['median_abs_log_ratio']):.2f} "
                       f"(limit {math.exp(MAX_MEDIAN_LOG_RATIO):.2f})")
    else:
        for fam in CORE_FAMILIES:
            f = fits.get(fam)
            if f is not None and f["r2"] < MIN_R2:
                why.append(f"the {fam} microbenchmark fit has R^2(log) = {f['r2']:.2f} < {MIN_R2}")
    return why


def warnings(fits: dict) -> list[str]:
    """What is marginal about a fit that is good enough to save."""
    plans = fits.get("plans") or {}
    pinned = plans.get("pinned") or []
    if len(pinned) <= MAX_PINNED:
        return []
    within = plans.get("after", {}).get("within_0.67_1.5")
    return [f"{len(pinned)} coefficients ended at the refit's bounds, 10x from their microbenchmark values "
            f"({', '.join(pinned)}; more than {MAX_PINNED}): the plan runs and the microbenchmarks disagree, as on a "
            "busy machine. Saved, since its predictions pass" + (f" ({within:.0%} of the plan runs within [0.67, "
                                                                 "1.5])" if within is not None else "")
            + "; calibrate again on a quieter machine for a better fit"]


def quality(coefficients: dict, fits: dict) -> list[str]:
    """Each fitted coefficient as saved, its microbenchmark value, how far the refit moved it and
    its family's fit: lines of a table."""
    pinned = set((fits.get("plans") or {}).get("pinned") or [])
    rows = [f"{'coefficient':<12} {'saved':>10} {'microbench':>10} {'refit moved':>11}  family fit"]
    for fam, f in fits.items():
        if fam == "plans":
            continue
        for k, micro in f["coefficients"].items():
            saved = coefficients.get(k, micro)
            moved = saved / micro if micro else float("inf")
            mark = "  at the bound" if k in pinned else ""
            rows.append(f"{k:<12} {saved:>10.3g} {micro:>10.3g} {'x' + format(moved, '.2g'):>11}  {fam} R^2(log) "
                        f"{f['r2']:.2f}{mark}")
    factors = dict(coefficients.get("plan_factors") or ())
    if factors:   # (the refit's factor on each plan's predicted time: what it costs beyond its counts)
        rows.append("plan factors: " + ", ".join(f"{p} x{v:.2g}" for p, v in sorted(factors.items())))
    return rows


def notes(fits: dict) -> list[str]:
    """Things worth saying about a calibration that is kept anyway."""
    out = [f"{fam}: R^2(log) = {f['r2']:.2f} (its coefficients come from the end-to-end refit)"
           for fam, f in fits.items() if fam != "plans" and f["r2"] < MIN_R2]
    pinned = (fits.get("plans") or {}).get("pinned") or []
    if pinned:
        out.append(f"at the refit's bounds: {', '.join(pinned)}")
    return out


__all__ = ["MAX_MEDIAN_LOG_RATIO", "MAX_PINNED", "MIN_R2", "assess", "notes", "quality", "warnings"]
