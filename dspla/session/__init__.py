"""The driver above the compiler and the runtime: one compiled program run on a communicator, call
after call (driver.py: planning when the inputs call for it, SPMD or on rank 0, handing out the
inputs' pieces, running, the results where they are); rank 0's decisions about the inputs
(inputs.py); what a run reports (stats.py)."""
from .driver import DistSession

__all__ = ["DistSession"]
