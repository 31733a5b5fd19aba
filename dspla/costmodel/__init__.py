"""The cost model: coefficients (calibrated per machine), per-instruction counts of a lowered
plan, the predicted time of each plan for explain and for ``--plan auto``, and the refit of
the coefficients to measured plan runs. It reads plan IR only; calibration, which runs plans,
lives above it (dspla.calibration)."""
from .coefficients import Coefficients, load, save, shipped, user_path
from .counts import COUNT, RankView, count_rank, count_rule
from .model import OVERLAP, overlap_rule, predict, split

__all__ = ["COUNT", "Coefficients", "OVERLAP", "RankView", "count_rank", "count_rule", "load", "overlap_rule",
           "predict", "save", "shipped", "split", "user_path"]
