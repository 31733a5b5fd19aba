"""Inputs made on the command line (``-i r=full:1``, ``-i s=unit:0``): shaped and kinded as the
program declares them, sized by the inputs read from files or by ``--dim``; the oracle is the
numpy/scipy value written out by hand."""
import numpy as np
import pytest

from dspla.errors import DsplaError
from dspla.formats.inputs import generate_inputs
from dspla.ir.types import DType, Kind, Type


def _t(kind: str, shape=("n", 1), dtype="float64"):
    return Type(Kind(kind), shape, DType.parse(dtype))


def test_full_for_a_sparse_input_holds_every_entry_zeros_included():
    got = generate_inputs({"s": "full:0"}, {"s": _t("sparse")}, {}, {"n": 3})["s"]
    assert got.shape == (3, 1) and got.nnz == 3   # explicit zeros are present entries
    np.testing.assert_array_equal(got.toarray(), np.zeros((3, 1)))


def test_full_for_a_dense_input_and_unit_for_a_sparse_one():
    got = generate_inputs({"r": "full:2.5", "s": "unit:1"}, {"r": _t("dense"), "s": _t("sparse", dtype="bool")},
                          {}, {"n": 4})
    np.testing.assert_array_equal(got["r"], np.full((4, 1), 2.5))
    assert got["s"].nnz == 1 and got["s"].toarray()[:, 0].tolist() == [False, True, False, False]


def test_unit_for_a_dense_input_is_refused_with_what_to_do():
    with pytest.raises(DsplaError, match="r is declared dense.*use full:VALUE"):
        generate_inputs({"r": "unit:0"}, {"r": _t("dense")}, {}, {"n": 4})


def test_a_dim_no_input_gives_names_the_dim_option():
    with pytest.raises(DsplaError, match=r"size of 'n'.*--dim n=SIZE"):
        generate_inputs({"r": "full:1"}, {"r": _t("dense")}, {})


def test_a_dim_given_both_ways_must_agree():
    A, decls = np.zeros((5, 5)), {"A": _t("dense", ("n", "n")), "r": _t("dense")}
    assert generate_inputs({"r": "full:1"}, decls, {"A": A}, {"n": 5})["r"].shape == (5, 1)
    with pytest.raises(DsplaError, match="--dim n=9, but the inputs read from files give n = 5"):
        generate_inputs({"r": "full:1"}, decls, {"A": A}, {"n": 9})
