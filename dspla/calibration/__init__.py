"""Calibration: microbenchmarks and whole-plan runs on this machine, fitted into the cost
model's coefficients (``dspla calibrate``). It runs plans, so it sits above both the cost
model and the runtime."""
from .microbench import calibrate

__all__ = ["calibrate"]
