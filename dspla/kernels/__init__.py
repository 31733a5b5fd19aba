"""The local kernels, over SuiteSparse:GraphBLAS through python-graphblas (and numba for a
user's operators): algebra rows as GraphBLAS objects and the product's routes (gbops.py,
routes.py, gbudf.py, udfmxm.py), message buffers (buffers.py), memory lent and reused (lend.py,
recycle.py, acyclic.py), 1 x 1 values by the typed C calls (item.py, scalars.py), prepared
steps (prepared.py) and the min/max winners (winners.py). The ops' evaluation rules, planning
and the runtime run them; they know nothing of either."""
