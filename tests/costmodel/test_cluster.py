"""The cluster description and node-aware counting: where ranks sit, which ring edges leave a
node, how many ranks of a socket share its injection bandwidth; the scaling counts against
direct counts."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dspla.costmodel import cagnet, cluster, scaling
from dspla.generate import rmat

SUMMIT = cluster.load("summit")


def test_shipped_clusters_load_with_their_sources():
    for name in cluster.SHIPPED:
        c = cluster.load(name)
        assert c.source and c.injection > 0 and c.spmm_rate > 0
    assert (SUMMIT.ranks_per_node, SUMMIT.sockets_per_node, SUMMIT.injection) == (6, 2, 12.5e9)
    assert cluster.parse(cluster.dumps(SUMMIT)) == SUMMIT


@pytest.mark.parametrize("text, msg", [
    ("ranks_per_node = 6\n", "missing section"),
    ("ranks_per_node = 6\nbogus = 1\n", "unknown key.*bogus"),
    ("ranks_per_node = 6\nsockets_per_node = 4\n[socket]\n[node]\n[network]\n[compute]\n", "multiple"),
    ("ranks_per_node = 6\n[socket]\nalpha = 1\nbandwidth = -1\n[node]\n[network]\n[compute]\n",
     r"\[socket\] bandwidth must be a positive number"),
    ("ranks_per_node = [\n", "cl.toml"),
])
def test_bad_descriptions_are_named(text, msg):
    with pytest.raises(cluster.ClusterError, match=msg):
        cluster.parse(text, "cl.toml")
    with pytest.raises(cluster.ClusterError, match="summit, perlmutter"):
        cluster.load("no-such-cluster.toml")


def test_placement():
    r = np.arange(13)
    assert list(SUMMIT.node(r)) == [0] * 6 + [1] * 6 + [2]
    assert list(SUMMIT.socket(r[:7])) == [0, 0, 0, 1, 1, 1, 2]
    assert list(SUMMIT.level([0, 0, 0], [2, 3, 6])) == [0, 1, 2]


def test_rings_of_15d_share_a_sockets_injection():
    """CAGNET §VI-A: with all 6 GPUs of a Summit node, c = 2 puts two ring edges leaving each
    node on one socket (half the injection bandwidth each), c = 4 three; one GPU per node none."""
    P, inj = 96, SUMMIT.word_bytes / SUMMIT.injection
    assert SUMMIT.ring_seconds_per_word(P, (P,), 0) == pytest.approx(inj)
    assert SUMMIT.ring_seconds_per_word(P, (P // 2, 2), 0) == pytest.approx(2 * inj)
    assert SUMMIT.ring_seconds_per_word(P, (P // 4, 4), 0) == pytest.approx(3 * inj)
    one_per_node = cluster.Cluster("flat", 1, 1, SUMMIT.levels, SUMMIT.injection, SUMMIT.spmm_rate, 4)
    for c in (1, 2, 4):
        assert one_per_node.ring_seconds_per_word(P, (P // c, c), 0) == pytest.approx(inj)
    perl = cluster.load("perlmutter")   # a NIC per GPU: no sharing
    assert perl.ring_seconds_per_word(64, (16, 4), 0) == pytest.approx(perl.word_bytes / perl.injection)
    # inside one node, the ring uses NVLink and the X-bus only
    assert SUMMIT.ring_seconds_per_word(6, (6,), 0) == pytest.approx(SUMMIT.word_bytes / 50e9)


def test_p2p_charges_a_sockets_injected_bytes_to_its_ranks():
    # ranks 0, 1, 2 (socket 0) each send 1e6 words to node 1: together 12 MB over 12.5 GB/s
    src, dst, w = np.array([0, 1, 2]), np.array([6, 7, 8]), np.full(3, 1e6)
    t = SUMMIT.p2p_seconds(12, src, dst, w)
    assert t[0] >= 3 * 4e6 / 12.5e9 and t[3] == 0
    alone = SUMMIT.p2p_seconds(12, src[:1], dst[:1], w[:1])
    assert alone[0] < t[0] / 2


def test_the_papers_qualitative_findings_hold_on_summit():
    n, nnz = 232_965, 114_848_857
    f = [602, 16, 16, 41]
    one = lambda P: cagnet.seconds(cagnet.one_d(n, nnz, f, P), SUMMIT)   # noqa: E731
    # Reddit at large P: latency-bound (the latency term above the bandwidth term)
    assert one(1024)["latency_s"] > one(1024)["comm_s"]
    # 1.5D c = 2 with 6 GPUs per node: broadcasts half the words at half the bandwidth
    bc = lambda s: sum(c.count * c.ring_words(s.dims[c.axis]) for c in s.colls if c.kind == "bcast")  # noqa: E731
    s1, s2 = cagnet.one_d(n, nnz, f, 96), cagnet.one_five_d(n, nnz, f, 96, 2)
    t1 = bc(s1) * SUMMIT.ring_seconds_per_word(96, s1.dims, 0)
    t2 = bc(s2) * SUMMIT.ring_seconds_per_word(96, s2.dims, 0)
    assert t2 == pytest.approx(t1, rel=0.02)


def test_sparse_plans_counted_from_the_partition():
    A = sp.csr_array(rmat(9, 8, seed=3))
    sh = scaling.Shape.of("g", A)
    P, c = 16, 2
    parts = scaling.row_parts(sh.A, P, "random", 0)
    src, dst, rows = scaling.p2p_pairs(sh.A, parts, P)
    # direct: rank r receives every column its rows touch that another rank owns
    for r in range(P):
        cols = np.unique(sh.A[parts == r].indices)
        assert rows[dst == r].sum() == np.count_nonzero(parts[cols] != r)
    parts = scaling.block_row_parts(sh.A, P, c, "random", 0)
    src, dst, rows = scaling.sparse15_pairs(sh.A, parts, P, c)
    chunk = scaling._chunk_of(P // c, c)
    for i in range(P // c):
        cols = np.unique(sh.A[parts // c == i].indices)
        k = parts[cols] // c
        for j in range(c):
            want = np.count_nonzero((k != i) & (chunk[k] == j))
            assert rows[dst == i * c + j].sum() == want
            assert set(src[dst == i * c + j] % c) <= {i % c}   # P(k, i mod c) sends


def test_expected_counts_track_exact_ones_on_an_rmat_graph():
    """The shape-only (expected) volume of p2p1d is within 15% of the exact one on an R-MAT graph."""
    A = rmat(14, 16, seed=1)
    exact = scaling.sparse_candidates(scaling.Shape.of("g", A), 64, [16, 16], SUMMIT)
    expect = scaling.sparse_candidates(scaling.Shape("g", A.shape[0], int(((A + A.T) != 0).nnz)), 64, [16, 16], SUMMIT)
    for e, x in zip(exact, expect):
        assert e["plan"] == x["plan"]
        assert x["words_avg"] == pytest.approx(e["words_avg"], rel=0.15)


def test_calibrate_measures_every_level_a_job_reaches_simulated():
    """Four simulated ranks placed 2 a node, 1 a socket: rank 1 is the other socket of the
    node, rank 2 another node, ranks 0 and 1 (a whole socket... one rank each) inject at once."""
    from dspla.calibration.cluster import described, measure
    from dspla.runtime.comm.sim import run_simulated
    got = run_simulated(4, lambda comm: measure(comm, 2, 2, sizes=(8, 1 << 12, 1 << 15), repeat=3))
    m = got[0]
    assert all(g == m for g in got)            # every rank has the result
    assert set(m) == {"node", "network", "injection"}     # one rank a socket: no socket level
    for lv in ("node", "network"):
        alpha, bw, over = m[lv]
        assert alpha > 0 and bw > 0 and over > 0
    c = described(SUMMIT, m, 2, 2, (1e9, 2e9), "sim")
    assert c.spmm_rate == 1e9 and c.spmm_row == 2e9
    assert c.levels["network"].alpha == m["network"][0] and c.injection == m["injection"]
    assert c.levels["socket"] == SUMMIT.levels["socket"] and "from Summit: socket" in c.source
    assert cluster.parse(cluster.dumps(c)) == c
    one_node = run_simulated(2, lambda comm: measure(comm, 2, 1, sizes=(8, 1 << 12), repeat=2))[0]
    assert set(one_node) == {"socket"}          # no network in a one-node job


def test_node_aware_p2p1d_pays_less_latency_at_scale():
    """At P = 256 on Summit (6 ranks a node) a random partition of an R-MAT graph has p2p1d send
    ~P messages a rank; node-aware, a rank sends a few inside its node and ~nodes / 6 across, so
    its latency is a fraction of p2p1d's and the rows crossing the network are no more."""
    A = rmat(13, 16, seed=2)
    sh = scaling.Shape.of("g", A)
    cands = {c["plan"]: c for c in scaling.product_candidates(sh, 256, 16, SUMMIT)}
    flat, node = cands["p2p1d"], cands["p2p1d_node"]
    assert node["messages_max"] < flat["messages_max"] / 4
    assert node["predicted_s"] < flat["predicted_s"] / 2
    assert "p2p1d_node" not in {c["plan"] for c in scaling.product_candidates(sh, 6, 16, SUMMIT)}   # one node
