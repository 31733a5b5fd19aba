"""One training step of a two-layer GCN, embedded in Python: the same expressions as
examples/gcn.dspla, and a short training run.

    python examples/gcn.py [--data-dir ../shared/datasets/planetoid] [--epochs 200]
    mpiexec -n 2 python examples/gcn.py ...       # the same script on 2 processes

Without Planetoid files it trains on a generated contextual SBM graph.
"""
from __future__ import annotations

import argparse
import os
import sys

import dspla as dp
from dspla.models import gcn_norm


def gcn_step(p: float = 0.5) -> dp.Function:
    """Forward, softmax cross-entropy on the rows weighted by T, backward; outputs loss, logits and
    the gradients dW1, dW2 (nothing is hidden in a library call except Â = D^-1/2 (A + I) D^-1/2,
    itself a row reduction and two broadcast scalings: see dspla/models/normalize.py)."""
    A = dp.sparse("A", ("n", "n"))
    X = dp.sparse("X", ("n", "f"))
    Y = dp.dense("Y", ("n", "c"))                # one-hot labels
    T = dp.dense("T", ("n", 1))                  # 1/|train| on training rows, 0 elsewhere
    seed = dp.dense("seed", (1, 1), "int64")     # dropout seed: masks depend on (seed, row, col) only
    W1 = dp.param("W1", ("f", "h"))
    W2 = dp.param("W2", ("h", "c"))

    Ah = gcn_norm(A)
    AhT = Ah.T                                   # backward uses Âᵀ (= Â when A is symmetric)
    # forward (Â (X W): the narrow operand is the one Â multiplies)
    # dropout; "+ 0 * X" makes a dropped entry an explicit 0 instead of missing (operands stay full)
    Xd = X * (dp.dropout_mask(X, p, seed) + 0 * X)
    Z1 = Ah @ (Xd @ W1)
    H1 = dp.relu(Z1)
    Dh = dp.dropout_mask(H1, p, seed + 1) + 0 * H1
    H1d = H1 * Dh
    logits = Ah @ (H1d @ W2)
    loss = -dp.reduce_all(dp.log_softmax(logits) * Y * T)
    # backward
    G2 = (dp.softmax(logits) - Y) * T
    AG2 = AhT @ G2                               # reused: weight gradient and propagated gradient
    dW2 = H1d.T @ AG2
    S1 = (AG2 @ W2.T) * Dh
    G1 = S1 * dp.relu_grad(Z1)
    AG1 = AhT @ G1
    dW1 = (AG1.T @ Xd).T                         # = Xdᵀ AG1, summed over processes by one Allreduce
    return dp.function(outputs={"loss": loss, "logits": logits, "dW1": dW1, "dW2": dW2},
                       inputs=[A, X, Y, T, seed, W1, W2])


def main(argv=None):
    from dspla.models import TrainConfig, Trainer, load_node_data
    from dspla.runtime.launch import world

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared",
                                                       "datasets", "planetoid"))
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    comm = world()
    data = None
    if comm is None or comm.rank == 0:
        if os.path.exists(os.path.join(args.data_dir, "ind.cora.graph")):
            data = load_node_data("cora", data_dir=args.data_dir)
        else:
            data = load_node_data("sbm", nodes=5000)
    step = gcn_step()
    result = Trainer(step.source_program, data, TrainConfig(epochs=args.epochs, seed=args.seed), comm).fit()
    if result is not None:
        print(f"{data.name}: test accuracy {result['test_accuracy']:.3f} after {result['epochs_run']} epochs "
              f"on {result['P']} process(es), plan {result['plan']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
