"""Per-process traffic and load of a 1D plan, in the terms of Demirci et al.'s Table 2.

"Per process" means SENT by that process, as in the paper; received figures are kept too.
Volumes are in rows of B; words = rows x K.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .comm import CommPlan, comm_plan, connectivity_minus_one


@dataclass(frozen=True)
class CommStats:
    P: int
    K: int
    volume_sent: np.ndarray  # rows of B sent by each process
    volume_recv: np.ndarray
    messages_sent: np.ndarray  # messages (peers with nonzero volume) sent by each process
    messages_recv: np.ndarray
    load: np.ndarray  # nonzeros of A per process (local SpMM work)
    km1: int  # connectivity-1 of the column-net model; equals volume_total
    plan: CommPlan = field(repr=False, compare=False)

    @property
    def volume_total(self) -> int:
        return int(self.volume_sent.sum())

    @property
    def messages_total(self) -> int:
        return int(self.messages_sent.sum())

    @property
    def words_total(self) -> int:
        return self.volume_total * self.K

    @property
    def load_imbalance(self) -> float:
        """max / average nonzeros per process - 1."""
        avg = self.load.sum() / self.P
        return float(self.load.max() / avg - 1.0) if avg > 0 else 0.0

    def summary(self) -> dict:
        """Plain numbers (JSON-ready): totals, average and maximum per process, sent and received."""
        P, K = self.P, self.K
        out = {"P": P, "K": K, "volume_total": self.volume_total, "words_total": self.words_total,
               "messages_total": self.messages_total, "km1": self.km1,
               "load_total": int(self.load.sum()), "load_max": int(self.load.max()),
               "load_imbalance": self.load_imbalance}
        for name, arr in (("volume", self.volume_sent), ("messages", self.messages_sent),
                          ("volume_recv", self.volume_recv), ("messages_recv", self.messages_recv)):
            out[f"{name}_avg"] = float(arr.sum() / P)
            out[f"{name}_max"] = int(arr.max())
        out["words_avg"] = out["volume_avg"] * K
        out["words_max"] = out["volume_max"] * K
        return out


def stats_from_plan(plan: CommPlan, A, parts, K: int = 1) -> CommStats:
    A = sp.csr_matrix(A)
    P = plan.P
    vol = plan.pair_volume()
    parts = np.asarray(parts, dtype=np.int64)
    load = np.bincount(parts, weights=np.diff(A.indptr), minlength=P).astype(np.int64)
    return CommStats(
        P=P, K=int(K),
        volume_sent=np.bincount(plan.src, weights=vol, minlength=P).astype(np.int64),
        volume_recv=np.bincount(plan.dst, weights=vol, minlength=P).astype(np.int64),
        messages_sent=np.bincount(plan.src, minlength=P).astype(np.int64),
        messages_recv=np.bincount(plan.dst, minlength=P).astype(np.int64),
        load=load,
        km1=connectivity_minus_one(A, parts, P, plan.b_parts),
        plan=plan,
    )


def comm_stats(A, parts, P: int | None = None, K: int = 1, b_parts=None) -> CommStats:
    """Exact traffic of the 1D p2p product A @ B (B of width K) under the row partition ``parts``."""
    A = sp.csr_matrix(A)
    plan = comm_plan(A, parts, P, b_parts)
    return stats_from_plan(plan, A, parts, K)
