"""Reading graphs and arrays, writing results."""
from .inputs import read_input
from .results import write_results

__all__ = ["read_input", "write_results"]
