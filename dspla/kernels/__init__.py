"""The local kernels, over SuiteSparse:GraphBLAS through python-graphblas (and numba for a
user's operators): algebra rows as GraphBLAS objects and the product's routes (gbops.py,
routes.py, gbudf.py, udfmxm.py), message buffers (buffers.py), memory lent and reused (lend.py,
recycle.py, acyclic.py), 1 x 1 values by the typed C calls (item.py, scalars.py), prepared
steps (prepared.py) and the min/max winners (winners.py). The ops' evaluation rules, planning
and the runtime run them; they know nothing of either."""

# python-graphblas initialises itself on its first use; the modules here import some of its
# internals by name, which need it initialised first (else its own modules import each other
# half-made). ``import dspla`` does not come here: the first function made or value read does.
import graphblas as _gb

_gb.Matrix  # noqa: B018  (initialises python-graphblas)
