"""Two-layer GCN (Kipf & Welling) training step as explicit dspla expressions.

One call of the compiled step computes, for parameters W1 (f x h) and W2 (h x c):

    forward                                   backward (Demirci et al. §3.1, CAGNET §III)
    Xd  = X * (dropout_mask(X, p, seed) + 0 X)  G2  = (softmax(Z2) - Y) * T
    Z1  = Â (Xd W1)                           AG2 = Âᵀ G2                (reused twice:)
    H1  = relu(Z1)                            dW2 = H1dᵀ AG2
    Dh  = dropout_mask(H1, p, seed + 1) + 0 H1  S1 = (AG2 W2ᵀ) * Dh      (through the dropout)
    H1d = H1 * Dh
    Z2  = Â (H1d W2)        -> logits         G1  = S1 * relu_grad(Z1)
    loss = -Σ (log_softmax(Z2) * Y * T)       AG1 = Âᵀ G1
                                              dW1 = (AG1ᵀ Xd)ᵀ

Inputs: ``A`` the graph (sparse n x n, Â is built from it by :func:`dspla.models.normalize.gcn_norm`,
once, at planning), ``X`` the features, ``Y`` one-hot labels (dense n x c, zero rows for
unlabelled nodes), ``T`` the loss weights (dense n x 1: 1/|train| on the training rows, 0
elsewhere, which restricts the mean cross-entropy to the training rows), ``seed`` (1 x 1 int64:
the dropout masks depend only on (seed, global row, global column)). Outputs: ``loss``,
``logits`` (Z2), ``dW1``, ``dW2``.

Products are ordered by hand for the narrow side: Â (Xd W1) moves rows of width h, not f
(the planner's matrix-chain pass will choose this itself).
"""
from __future__ import annotations

from ..frontend import dsl
from ..function import Function, function
from .normalize import gcn_norm


def gcn_step_exprs(p: float = 0.5, directed: bool = True, sparse_features: bool = True, dtype="float64") -> dict:
    """The step's input declarations and output expressions (see the module docstring).

    ``directed=False`` uses Â itself in the backward pass (valid when A is symmetric);
    ``sparse_features`` declares X sparse (a bag-of-words matrix such as Cora's)."""
    A = dsl.sparse("A", ("n", "n"), dtype)
    X = (dsl.sparse if sparse_features else dsl.dense)("X", ("n", "f"), dtype)
    Y = dsl.dense("Y", ("n", "c"), dtype)
    T = dsl.dense("T", ("n", 1), dtype)
    seed = dsl.dense("seed", (1, 1), "int64")
    W1 = dsl.param("W1", ("f", "h"), dtype)
    W2 = dsl.param("W2", ("h", "c"), dtype)

    v = _Namer()
    Ah = v.Ah(gcn_norm(A))
    AhT = v.AhT(Ah.T) if directed else Ah
    # forward, with inverted dropout on the input features and on H1
    # (+ 0 * X: a dropped entry is an explicit 0 rather than missing, so dense operands stay full)
    Xd = v.Xd(X * (dsl.dropout_mask(X, p, seed) + 0 * X))
    Z1 = v.Z1(Ah @ v.XW1(Xd @ W1))
    H1 = v.H1(dsl.relu(Z1))
    Dh = v.Dh(dsl.dropout_mask(H1, p, seed + 1) + 0 * H1)
    H1d = v.H1d(H1 * Dh)
    Z2 = v.logits(Ah @ v.HW2(H1d @ W2))
    # mean cross-entropy over the rows weighted by T
    loss = v.loss(-dsl.reduce_all((dsl.log_softmax(Z2) * Y) * T))
    # backward
    G2 = v.G2((dsl.softmax(Z2) - Y) * T)
    AG2 = v.AG2(AhT @ G2)
    dW2 = v.dW2(H1d.T @ AG2)
    S1 = v.S1((AG2 @ W2.T) * Dh)
    G1 = v.G1(S1 * dsl.relu_grad(Z1))
    AG1 = v.AG1(AhT @ G1)
    # Xdᵀ AG1 written as its transpose: AG1ᵀ and Xd are distributed alike (by rows of n), so each
    # process multiplies its own rows and one Allreduce sums the h x f partial products
    dW1 = v.dW1((AG1.T @ Xd).T)
    return {"inputs": [A, X, Y, T, seed, W1, W2],
            "outputs": {"loss": loss, "logits": Z2, "dW1": dW1, "dW2": dW2}}


class _Namer:
    """``v.Z1(expr)`` gives the value a name (shown by explain and in the runtime's statistics),
    as an assignment does in a .dspla file; names are metadata: the program is the same."""

    def __getattr__(self, name):
        return lambda e: dsl.Expr(e.node.replace(name=name))


def gcn_step(p: float = 0.5, directed: bool = True, sparse_features: bool = True) -> Function:
    """The compiled training step (outputs loss, logits, dW1, dW2)."""
    e = gcn_step_exprs(p, directed, sparse_features)
    return function(outputs=e["outputs"], inputs=e["inputs"])
