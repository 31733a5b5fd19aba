"""Running programs on one process: the reference executor, GraphBLAS kernels, buffers, values.

python-graphblas initialises itself on its first use; the modules here import some of its
internals by name, which need it initialised first (else its own modules import each other
half-made). ``import dspla`` does not come here: the first function made or value read does.
"""
import graphblas as _gb

_gb.Matrix  # noqa: B018  (initialises python-graphblas)
