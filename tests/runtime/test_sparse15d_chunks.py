"""15d_sparse with rows cut into messages of at most ``message_bytes`` (as p2p1d's): the same
result as a dense numpy product, the same words as the uncut plan, one message per chunk of
each pair's rows (counted from the scaling model's pairs, not from the plan)."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.costmodel.scaling import sparse15_pairs
from dspla.plan.options import Options
from dspla.runtime.comm.sim import run_simulated
from dspla.session import DistSession

K = 3


def _run(A, X, P, c, message_bytes):
    f = dp.function({"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})

    def body(comm):
        opts = Options(plan="15d_sparse", partition="random", seed=2, replication=c, message_bytes=message_bytes)
        s = DistSession(f.compiled, comm, opts)
        out = s.run({"A": A, "X": X} if comm.rank == 0 else None, repeat=1)
        return out["C"].to_numpy(fill=0), s.plan, s.last_stats
    return run_simulated(P, body, timeout=120)[0]


@pytest.mark.parametrize("P, c", [(4, 2), (4, 1)])
def test_chunked_15d_sparse_equals_the_dense_product(P, c):
    rng = np.random.default_rng(P + c)
    A = sp.random_array((48, 48), density=0.2, random_state=rng, format="csr")
    A.data[:] = rng.integers(1, 9, A.nnz)              # (integers: sums exact in any order)
    X = rng.integers(-4, 9, (48, K)).astype(float)
    per = 2                                            # rows a message
    C, plan, stats = _run(A, X, P, c, message_bytes=per * K * 8)
    assert np.array_equal(C, A.toarray() @ X)
    C1, plan1, stats1 = _run(A, X, P, c, message_bytes=1 << 30)
    assert np.array_equal(C1, C)
    assert stats["words_sent_total"] == stats1["words_sent_total"]
    _, _, rows = sparse15_pairs(A, plan.dims["n"].parts, P, c)
    pairs = int(rows.size)
    chunks = int(sum(-(-r // per) for r in rows))
    assert stats["messages_sent_total"] - stats1["messages_sent_total"] == chunks - pairs
    assert c == 1 or chunks > pairs
