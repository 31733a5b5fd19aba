"""The end-to-end refit: coefficients adjusted so the model's predictions (max over ranks, with
each plan's overlap rule) match measured plan times.

The microbenchmarks fit each family in isolation; a whole plan also pays what they do not see
(interpreter dispatch per instruction, cache effects of real row sets, collectives on
sub-communicators). The refit keeps every coefficient positive (it works on their logarithms),
minimises the log-ratio of predicted to measured time, and is tied weakly to the
microbenchmark values so that a term the runs do not exercise keeps its measured value.
Records come from ``dspla.calibration.plans.plan_runs``.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

from .coefficients import Coefficients
from .model import predict

SPAN = 10.0   # how far (x or /) the refit may move a coefficient from its microbenchmark value
TIE_PLAN = 0.5   # how strongly a plan's factor is held at 1 (the coefficients' tie is 0.05)
FITTED = ("alpha_p2p", "beta_p2p", "alpha_coll", "beta_coll", "alpha_get", "beta_get", "beta_pack", "beta_fill",
          "gamma", "delta", "kappa", "kappa_instr")


def _predict_all(records, coef: Coefficients) -> np.ndarray:
    return np.array([predict(r["plan"], r["counts"], coef)["predicted_s"] for r in records])


def accuracy(records, coef: Coefficients) -> dict:
    pred = _predict_all(records, coef)
    meas = np.array([r["measured_s"] for r in records])
    ratio = pred / np.maximum(meas, 1e-9)
    lm, lp = np.log(np.maximum(meas, 1e-9)), np.log(np.maximum(pred, 1e-12))
    ss_tot = float(((lm - lm.mean()) ** 2).sum()) or 1e-30
    return {"samples": len(records), "r2": 1.0 - float(((lm - lp) ** 2).sum()) / ss_tot,
            "within_0.67_1.5": float(np.mean((ratio >= 0.67) & (ratio <= 1.5))),
            "median_abs_log_ratio": float(np.median(np.abs(np.log(ratio)))), "max_ratio": float(ratio.max()),
            "min_ratio": float(ratio.min())}


def refit(records, base: Coefficients, tie: float = 0.05, tie_plan: float = TIE_PLAN) -> tuple[Coefficients, dict]:
    """Least squares on log(predicted / measured) over the plan runs, in log-coefficient space,
    with a factor per plan run (``Coefficients.plan_factors``), tied to 1 by ``tie_plan``."""
    from scipy.optimize import least_squares  # ~0.4 s to import: only when refitting

    d = {**base.as_dict(), "plan_factors": ()}
    # a coefficient a microbenchmark could not separate (fitted as 0) starts from the built-in guess
    guess = Coefficients().as_dict()
    theta0 = np.log(np.array([float(d[k]) if d[k] > 0 else guess[k] for k in FITTED]))
    plans = sorted({r["plan"] for r in records})
    x0 = np.concatenate([theta0, np.zeros(len(plans))])
    meas = np.log(np.array([max(r["measured_s"], 1e-9) for r in records]))

    def coefs(x):
        return Coefficients(**{**d, **dict(zip(FITTED, np.exp(x[:len(FITTED)]))),
                               "plan_factors": tuple(zip(plans, map(float, np.exp(x[len(FITTED):]))))})

    def residual(x):
        pred = np.log(np.maximum(_predict_all(records, coefs(x)), 1e-12))
        return np.concatenate([pred - meas, tie * (x[:len(FITTED)] - theta0), tie_plan * x[len(FITTED):]])

    t0 = time.perf_counter()
    # A robust loss: at P > cores a collective now and then takes 20-50x its usual time (ranks
    # descheduled mid-exchange), and squared errors let those few runs drag every coefficient.
    # Bounds: each coefficient stays within SPAN of its microbenchmark value, because the plan
    # runs cannot tell every term apart (at P = 4 on 2 cores an unbounded fit set gamma to 1e-13
    # and put all local compute into the per-row term); a plan's factor within SPAN of 1.
    # The factors: with one set of coefficients for every plan, the plans that assemble whole
    # operands (allgather1d, 15d, shift1d: 2-4x their counts' time at P = 2) pulled gamma up 7x,
    # and the plans that move only the rows they need (p2p1d) were then predicted 1.5-3.6x slow.
    span = np.log(SPAN)
    sol = least_squares(residual, x0, method="trf", x_scale=1.0, max_nfev=400, loss="soft_l1", f_scale=0.25,
                        bounds=(x0 - span, x0 + span))
    fitted = coefs(sol.x)
    before, after = accuracy(records, base), accuracy(records, fitted)
    # coefficients the bounds stopped: the plan runs wanted them further from their microbenchmark
    pinned = [k for k, v, v0 in zip(FITTED, sol.x, theta0) if abs(v - v0) >= span - 1e-3]
    report = {"samples": len(records), "before": before, "after": after, "seconds": time.perf_counter() - t0,
              "coefficients": {k: float(getattr(fitted, k)) for k in FITTED}, "pinned": pinned,
              "plan_factors": dict(fitted.plan_factors)}
    return fitted, report


def median(xs):
    return statistics.median(xs) if xs else float("nan")
