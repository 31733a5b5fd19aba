"""Node-classification data for the trainer: a graph, features, labels and the train/val/test
split, from the Planetoid files, a generated contextual SBM, or any graph file (with features and
labels from .npy files, or seeded random ones for benchmarks)."""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import DsplaError, UnknownNameError
from ..formats import load_graph
from ..formats.finite import check_finite
from ..formats.npy import load_npy
from ..formats.planetoid import load_planetoid
from ..generate import contextual_sbm

PLANETOID = ("cora", "citeseer", "pubmed")


@dataclass
class NodeData:
    adjacency: sp.csr_array          # n x n
    features: object                 # n x f: scipy CSR (sparse features) or a dense ndarray
    labels: np.ndarray               # int64, -1 = no label
    train_idx: np.ndarray
    val_idx: np.ndarray
    test_idx: np.ndarray
    name: str
    description: str = ""

    @property
    def n_nodes(self) -> int:
        return self.adjacency.shape[0]

    @property
    def n_features(self) -> int:
        return self.features.shape[1]

    @property
    def n_classes(self) -> int:
        return int(self.labels.max()) + 1

    @property
    def directed(self) -> bool:
        A = self.adjacency
        return (abs(A - A.T) > 0).nnz > 0 if A.nnz else False

    def summary(self) -> dict:
        A, X = self.adjacency, self.features
        return {"name": self.name, "nodes": self.n_nodes, "edges": int(A.nnz), "features": self.n_features,
                "feature_nnz": int(X.nnz) if sp.issparse(X) else int(X.size), "classes": self.n_classes,
                "train": int(self.train_idx.size), "val": int(self.val_idx.size), "test": int(self.test_idx.size),
                "description": self.description}

    # -- the step program's inputs (float64), built once so the same objects go in every epoch
    def one_hot(self) -> np.ndarray:
        Y = np.zeros((self.n_nodes, self.n_classes))
        has = self.labels >= 0
        Y[np.flatnonzero(has), self.labels[has]] = 1.0
        return Y

    def weights(self, idx) -> np.ndarray:
        T = np.zeros((self.n_nodes, 1))
        if len(idx):
            T[idx, 0] = 1.0 / len(idx)
        return T


SPLITS = ("none", "train", "val", "test")   # codes of the split column of a sharded dataset


def shard_inputs(d: NodeData) -> dict:
    """The trainer's inputs of a dataset as rows to shard (``dspla shard --dataset``): the graph A,
    the features X, one-hot labels Y and loss weights T, plus the labels and the split (codes of
    SPLITS) as n x 1 columns from which rank 0 computes the metrics."""
    split = np.zeros((d.n_nodes, 1), dtype=np.int64)
    for code, idx in enumerate((d.train_idx, d.val_idx, d.test_idx), 1):
        split[idx, 0] = code
    return {"A": d.adjacency, "X": d.features, "Y": d.one_hot(), "T": d.weights(d.train_idx),
            "labels": d.labels.astype(np.int64).reshape(-1, 1), "split": split}


@dataclass
class ShardedData:
    """What rank 0 keeps of a sharded dataset for the metrics and the summary: labels and the
    split (n integers each); the graph and the features stay on their ranks."""
    labels: np.ndarray
    train_idx: np.ndarray
    val_idx: np.ndarray
    test_idx: np.ndarray
    name: str
    description: str
    n_nodes: int
    n_features: int
    edges: int
    feature_nnz: int

    @property
    def n_classes(self) -> int:
        return int(self.labels.max()) + 1

    @classmethod
    def of(cls, labels: np.ndarray, split: np.ndarray, manifest: dict) -> "ShardedData":
        split = split.ravel()
        idx = [np.flatnonzero(split == code) for code in (1, 2, 3)]
        ins, ds = manifest["inputs"], manifest.get("dataset", {})
        return cls(labels.ravel().astype(np.int64), *idx, ds.get("name", "shards"),
                   ds.get("description", "") + f" (sharded for P = {manifest['P']})", ins["A"]["shape"][0],
                   ins["X"]["shape"][1], ins["A"].get("nnz", 0), ins["X"].get("nnz", ins["X"]["shape"][0]
                                                                   * ins["X"]["shape"][1]))

    def summary(self) -> dict:
        return {"name": self.name, "nodes": self.n_nodes, "edges": self.edges, "features": self.n_features,
                "feature_nnz": self.feature_nnz, "classes": self.n_classes, "train": int(self.train_idx.size),
                "val": int(self.val_idx.size), "test": int(self.test_idx.size), "description": self.description}


def row_normalize(X):
    """Each row divided by its sum (Kipf & Welling's preprocess_features; PyG NormalizeFeatures)."""
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64)
        s = np.asarray(X.sum(axis=1)).ravel()
        s[s == 0] = 1.0
        return sp.csr_array(sp.diags_array(1.0 / s) @ X)
    X = np.asarray(X, dtype=np.float64)
    s = X.sum(axis=1, keepdims=True)
    s[s == 0] = 1.0
    return X / s


def random_splits(labels: np.ndarray, rng, per_class: int = 20, n_val: int = 500, n_test: int = 1000):
    """The Planetoid protocol on any labelled graph: per_class training nodes per class, then
    n_val and n_test of the rest (shrunk to fit a small graph)."""
    n = labels.size
    perm = rng.permutation(n)
    lab = labels[perm]
    train = []
    for c in range(int(labels.max()) + 1):
        train.append(perm[lab == c][:per_class])
    train = np.sort(np.concatenate(train))
    rest = perm[~np.isin(perm, train)]
    n_val = min(n_val, rest.size // 2)
    n_test = min(n_test, rest.size - n_val)
    return train, np.sort(rest[:n_val]), np.sort(rest[n_val:n_val + n_test])


def load_node_data(dataset: str | None = None, *, data_dir: str | None = None, graph: str | None = None,
                   features: str | None = None, labels: str | None = None, nodes: int = 10000,
                   classes: int = 7, feature_dim: int | None = None, avg_degree: float = 10.0,
                   homophily: float = 0.8, data_seed: int = 0, normalize_features: bool | None = None,
                   allow_nonfinite: bool = False) -> NodeData:
    """``dataset``: a Planetoid name (``data_dir`` holds ind.<name>.*), ``sbm`` (generated), or None
    with ``graph`` a graph file (see dspla.formats.load_graph). NaN or infinite features are refused
    unless ``allow_nonfinite``."""
    rng = np.random.default_rng(data_seed)
    if graph is None and dataset is None:
        raise DsplaError("give a dataset (--dataset cora|citeseer|pubmed|sbm) or a graph file (--graph FILE)")
    if graph is not None and dataset is not None:
        raise DsplaError("give either --dataset or --graph, not both")
    if dataset in PLANETOID:
        if not data_dir:
            raise DsplaError(f"--dataset {dataset} needs --data-dir, the folder with ind.{dataset}.* "
                             "(e.g. ../shared/datasets/planetoid)")
        d = load_planetoid(data_dir, dataset)
        check_finite(os.path.join(data_dir, f"ind.{dataset}.allx/tx"), d.features, allow_nonfinite)
        X = d.features
        X = row_normalize(X) if normalize_features is not False else sp.csr_array(X, dtype=np.float64)
        return NodeData(sp.csr_array(d.adjacency, dtype=np.float64), X, d.labels, d.train_idx, d.val_idx,
                        d.test_idx, dataset, "Planetoid (Kipf & Welling split)")
    if dataset == "sbm":
        d = contextual_sbm(nodes, n_classes=classes, avg_degree=avg_degree, homophily=homophily,
                           n_features=feature_dim or 64, seed=data_seed, dtype=np.float64)
        X = row_normalize(d.features) if normalize_features else d.features
        return NodeData(sp.csr_array(d.adjacency, dtype=np.float64), X, d.labels, d.train_idx, d.val_idx,
                        d.test_idx, "sbm", f"contextual SBM, seed {data_seed}, homophily {d.homophily:.2f}")
    if dataset is not None:
        raise UnknownNameError("dataset", dataset, list(PLANETOID) + ["sbm"])
    A = sp.csr_array(load_graph(graph).matrix, dtype=np.float64)
    n = A.shape[0]
    A.data[:] = 1.0
    if features:
        X = _load_array(features, "features")
        check_finite(features, X, allow_nonfinite)
        if X.ndim != 2 or X.shape[0] != n:
            raise DsplaError(f"features {features} have shape {X.shape}; the graph has {n} nodes")
        X = X.astype(np.float64)
    else:
        X = rng.standard_normal((n, feature_dim or 128))
    if normalize_features:
        X = row_normalize(X)
    if labels:
        y = _load_array(labels, "labels")
        if y.dtype.kind not in "iub" and not (np.isfinite(y).all() and (y == np.round(y)).all()):
            raise DsplaError(f"labels {labels} must be integers (class ids, -1 for none)")
        y = y.astype(np.int64).ravel()
        if y.size and y.min() < -1:
            raise DsplaError(f"labels {labels} must be class ids >= 0 (or -1 for none), found {y.min()}")
        if y.size != n:
            raise DsplaError(f"labels {labels} have {y.size} entries; the graph has {n} nodes")
    else:
        y = rng.integers(0, classes, size=n)
    tr, va, te = random_splits(y, rng)
    return NodeData(A, X, y, tr, va, te, os.path.basename(graph),
                    "graph file" + ("" if features else f", random {X.shape[1]}-wide features")
                    + ("" if labels else f", random labels ({classes} classes)"))


def _load_array(path, what):
    if not os.path.exists(path):
        raise DsplaError(f"{what} file not found: {path}")
    return load_npy(path)   # header checked against the file and the input limit first
