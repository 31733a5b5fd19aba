"""An independent numpy implementation of the two-layer GCN step (forward, loss, gradients), for
tiny graphs, dropout off: the oracle the program's outputs are compared with."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def norm_adj(A) -> np.ndarray:
    A = np.asarray(sp.csr_array(A).toarray(), dtype=float) + np.eye(A.shape[0])
    d = A.sum(axis=1) ** -0.5
    return d[:, None] * A * d[None, :]


def step(A, X, Y, T, W1, W2) -> dict:
    Ah = norm_adj(A)
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=float)
    Z1 = Ah @ X @ W1
    H1 = np.maximum(Z1, 0)
    Z2 = Ah @ H1 @ W2
    Zs = Z2 - Z2.max(axis=1, keepdims=True)
    lse = np.log(np.exp(Zs).sum(axis=1, keepdims=True))
    logp = Zs - lse
    loss = -(logp * Y * T).sum()
    P = np.exp(logp)
    G2 = (P - Y) * T
    dW2 = H1.T @ (Ah.T @ G2)
    G1 = (Ah.T @ G2 @ W2.T) * (Z1 > 0)
    dW1 = X.T @ (Ah.T @ G1)
    return {"loss": loss, "logits": Z2, "dW1": dW1, "dW2": dW2}


def random_problem(n=24, f=6, h=4, c=3, density=0.15, directed=False, seed=0, sparse_x=True):
    rng = np.random.default_rng(seed)
    A = sp.random_array((n, n), density=density, random_state=rng, format="csr")
    A.data[:] = 1.0
    if not directed:
        A = ((A + A.T) > 0).astype(float)
    A = sp.csr_array(A)
    A.setdiag(0)
    A.eliminate_zeros()
    X = sp.random_array((n, f), density=0.5, random_state=rng, format="csr") if sparse_x else rng.random((n, f))
    labels = rng.integers(0, c, n)
    Y = np.zeros((n, c))
    Y[np.arange(n), labels] = 1
    train = rng.choice(n, n // 2, replace=False)
    T = np.zeros((n, 1))
    T[train] = 1.0 / train.size
    W1 = rng.standard_normal((f, h)) * 0.5
    W2 = rng.standard_normal((h, c)) * 0.5
    return {"A": sp.csr_array(A), "X": X, "Y": Y, "T": T, "W1": W1, "W2": W2}
