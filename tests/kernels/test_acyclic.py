"""A matrix made acyclic (kernels/acyclic.py) is freed by its reference count and still behaves as
python-graphblas's own everywhere its ``ss`` accessor is used. The oracle is the dense array the
matrix was made from."""
import copy
import gc
import pickle
import weakref

import graphblas as gb
import numpy as np
import pytest

from dspla.kernels.acyclic import acyclic, is_acyclic

DENSE = np.arange(12, dtype=np.float64).reshape(4, 3)


def _matrix():
    return acyclic(gb.Matrix.from_dense(DENSE))


def test_it_is_freed_without_the_collector():
    M = _matrix()
    assert is_acyclic(M)
    gone = weakref.ref(M)
    gc.disable()
    try:
        del M
        assert gone() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("use", [
    lambda M: pickle.loads(pickle.dumps(M)),
    copy.deepcopy,
    copy.copy,
    lambda M: M.dup(),
    lambda M: gb.Matrix.ss.import_any(**M.dup().ss.export()),
    lambda M: gb.io.from_scipy_sparse(gb.io.to_scipy_sparse(M)),
    lambda M: M.apply(gb.unary.identity).new(),
], ids=["pickle", "deepcopy", "copy", "dup", "export-import", "scipy", "apply"])
def test_it_behaves_as_any_matrix(use):
    np.testing.assert_array_equal(use(_matrix()).to_dense(fill_value=0), DENSE)


def test_its_accessor_reads_and_sets_as_pythongraphblass():
    M = _matrix()
    assert M.ss.format == "fullr" and not M.ss.is_iso
    M.ss.config["sparsity_control"] = ["bitmap"]
    assert M.ss.format == "bitmapr"
    top, bottom = (row[0] for row in M.ss.split((2, 3)))
    np.testing.assert_array_equal(np.vstack([top.to_dense(), bottom.to_dense()]), DENSE)
    assert acyclic(M) is M and is_acyclic(M)   # (twice is once)
