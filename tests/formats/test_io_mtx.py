"""MatrixMarket loader: hand-written files with hand-written expectations, real SuiteSparse files,
and one error test per kind of malformation (file name and line number in the message)."""
import gzip

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from dspla.errors import DataFormatError
from dspla.formats.mtx import load_mtx

from conftest import dataset


def write(tmp_path, text, name="m.mtx"):
    p = tmp_path / name
    if name.endswith(".gz"):
        p.write_bytes(gzip.compress(text.encode()))
    else:
        p.write_text(text)
    return p


def dense(A):
    return A.toarray() if sp.issparse(A) else A


def test_coordinate_real_general_with_duplicates_summed(tmp_path):
    p = write(tmp_path, "%%MatrixMarket matrix coordinate real general\n"
                        "% a comment\n"
                        "%\n"
                        "3 4 5\n"
                        "1 1 1.5\n"
                        "3 4 -2e1\n"
                        "2 3 0\n"          # an explicit zero stays a stored entry
                        "1 1 2.5\n"        # duplicate of (1,1): summed
                        "3 1 7\n")
    A = load_mtx(p)
    assert isinstance(A, sp.csr_array) and A.shape == (3, 4) and A.dtype == np.float64
    np.testing.assert_array_equal(A.toarray(), [[4.0, 0, 0, 0],
                                                [0, 0, 0, 0],
                                                [7.0, 0, 0, -20.0]])
    C = A.tocoo()
    assert sorted(zip(C.row.tolist(), C.col.tolist(), C.data.tolist())) == [
        (0, 0, 4.0), (1, 2, 0.0), (2, 0, 7.0), (2, 3, -20.0)]  # (1,1) once, the stored zero kept


def test_explicit_zero_is_stored(tmp_path):
    A = load_mtx(write(tmp_path, "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 0.0\n"))
    assert A.nnz == 1
    C = A.tocoo()
    assert (C.row.tolist(), C.col.tolist(), C.data.tolist()) == ([1], [0], [0.0])


def test_pattern_symmetric_mirrors_without_doubling_diagonal(tmp_path):
    p = write(tmp_path, "%%MatrixMarket matrix coordinate pattern symmetric\n"
                        "3 3 4\n1 1\n2 1\n3 2\n3 3\n")
    A = load_mtx(p)
    assert A.dtype == bool and A.nnz == 6   # (a pattern's entries are true, as GraphBLAS reads one)
    np.testing.assert_array_equal(A.toarray(), [[True, True, False],
                                                [True, False, True],
                                                [False, True, True]])


@pytest.mark.parametrize("dtype, want", [("bool", True), ("int64", 1), ("float64", 1.0)])
def test_a_pattern_file_feeds_an_input_of_any_dtype(tmp_path, dtype, want):
    """A pattern graph (most of the SuiteSparse collection's) read for an input declared bool:
    it was read as 1.0s, which a bool input refuses ('does not convert safely')."""
    import subprocess
    import sys
    p = write(tmp_path, "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n3 1\n")
    (tmp_path / "p.dspla").write_text(f"input A : sparse[n, n] {dtype}\nB = ewise_mult(A, A, first)\noutput B\n")
    r = subprocess.run([sys.executable, "-m", "dspla.cli.main", "run", str(tmp_path / "p.dspla"), "-i", f"A={p}",
                        "-o", str(tmp_path / "out.npz")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = np.load(tmp_path / "out.npz")
    assert out["B.values"].dtype == np.dtype(dtype) and out["B.values"].tolist() == [want] * 2
    assert sorted(zip(out["B.rows"].tolist(), out["B.cols"].tolist())) == [(0, 1), (2, 0)]


def test_integer_skew_symmetric(tmp_path):
    p = write(tmp_path, "%%MatrixMarket matrix coordinate integer skew-symmetric\n"
                        "3 3 2\n2 1 5\n3 1 -4\n")
    A = load_mtx(p)
    assert A.dtype == np.int64
    np.testing.assert_array_equal(A.toarray(), [[0, -5, 4],
                                                [5, 0, 0],
                                                [-4, 0, 0]])


def test_complex_hermitian(tmp_path):
    p = write(tmp_path, "%%MatrixMarket matrix coordinate complex hermitian\n"
                        "2 2 2\n1 1 3 0\n2 1 1 2\n")
    np.testing.assert_array_equal(load_mtx(p).toarray(), [[3, 1 - 2j], [1 + 2j, 0]])


def test_array_general_is_column_major(tmp_path):
    p = write(tmp_path, "%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n")
    A = load_mtx(p)
    assert isinstance(A, np.ndarray) and A.flags.c_contiguous
    np.testing.assert_array_equal(A, [[1.0, 3, 5], [2, 4, 6]])


def test_array_symmetric_and_skew(tmp_path):
    p = write(tmp_path, "%%MatrixMarket matrix array integer symmetric\n3 3\n1\n2\n3\n4\n5\n6\n")
    np.testing.assert_array_equal(load_mtx(p), [[1, 2, 3], [2, 4, 5], [3, 5, 6]])
    p = write(tmp_path, "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n")
    np.testing.assert_array_equal(load_mtx(p), [[0, -1, -2], [1, 0, -3], [2, 3, 0]])


def test_gzip_crlf_and_case_insensitive_banner(tmp_path):
    text = "%%MatrixMarket MATRIX Coordinate Real General\r\n2 2 2\r\n1 2 0.5\r\n2 2 1.5\r\n"
    A = load_mtx(write(tmp_path, text, "m.mtx.gz"))
    np.testing.assert_array_equal(A.toarray(), [[0, 0.5], [0, 1.5]])


def test_empty_matrix(tmp_path):
    A = load_mtx(write(tmp_path, "%%MatrixMarket matrix coordinate real general\n5 6 0\n"))
    assert A.shape == (5, 6) and A.nnz == 0


@pytest.mark.parametrize("name", ["delaunay_n14.mtx", "luxembourg_osm.mtx", "bcsstk13.mtx",
                                  "rajat01.mtx", "mbeacxc.mtx", "bayer10.mtx"])
def test_real_suitesparse_files_match_scipy(name):
    path = dataset("suitesparse", name)
    A = load_mtx(path)
    B = sp.csr_array(scipy.io.mmread(str(path)))  # an independent reader as the oracle
    assert A.shape == B.shape and A.nnz == B.nnz
    assert abs(A - B).max() == 0


def test_real_file_counts():
    A = load_mtx(dataset("suitesparse", "luxembourg_osm.mtx"))
    # pattern symmetric, 119,666 stored lower-triangle edges, no diagonal: mirrored twice
    assert A.shape == (114599, 114599) and A.nnz == 2 * 119666
    assert (A != A.T).nnz == 0 and set(np.unique(A.data)) == {1.0}


BANNER = "%%MatrixMarket matrix coordinate real general\n"


@pytest.mark.parametrize("text, line, fragment", [
    ("%%MatrixMarkt matrix coordinate real general\n1 1 0\n", 1, "first line must start"),
    ("%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, "banner must be"),
    ("%%MatrixMarket matrix sparse real general\n1 1 0\n", 1, "unsupported format 'sparse'"),
    ("%%MatrixMarket matrix coordinate float general\n1 1 0\n", 1, "unsupported field 'float'"),
    ("%%MatrixMarket matrix array pattern general\n1 1\n", 1, "only valid for coordinate"),
    ("%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n", 1, "cannot be skew-symmetric"),
    (BANNER + "% c\n3 3\n1 1 1\n", 3, "size line must be"),
    (BANNER + "3 x 1\n1 1 1\n", 2, "'x' is not an integer"),
    (BANNER + "%\n", 3, "ends before the size line"),
    ("%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n", 2, "must be square"),
    (BANNER + "3 3 2\n1 1 1\n2 2 x\n", 4, "value 'x' is not a number"),
    (BANNER + "3 3 2\n1 1 1\n2 2\n", 4, "too few columns"),
    (BANNER + "3 3 2\n1 1 1\n2 2 1 7\n", 4, "too many columns"),
    (BANNER + "3 3 2\n1 1 1\n2.5 2 1\n", 4, "row index '2.5' is not an integer"),
    (BANNER + "3 3 2\n1 1 1\n\n2 4 1\n", 5, "column index 4 out of range 1..3"),
    (BANNER + "3 3 2\n0 1 1\n2 2 1\n", 3, "row index 0 out of range"),
    (BANNER + "3 3 2\n1 1 1\n2 2 1\n3 3 1\n", 5, "more entries than the 2 declared"),
    (BANNER + "% c\n3 3 3\n1 1 1\n2 2 1\n", 3, "declares 3 entries but the file has 2"),
    ("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3, "value '1.5' is not an integer"),
    ("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 2 1\n", 3, "may not store diagonal"),
    ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 2, "declares 4 entries but the file has 3"),
])
def test_malformed_files_name_file_and_line(tmp_path, text, line, fragment):
    p = write(tmp_path, text, "bad.mtx")
    with pytest.raises(DataFormatError) as e:
        load_mtx(p)
    msg = str(e.value)
    assert f"bad.mtx:{line}:" in msg, msg
    assert fragment in msg, msg
    assert e.value.line == line


def test_bad_gzip(tmp_path):
    p = tmp_path / "x.mtx.gz"
    p.write_text(BANNER + "1 1 0\n")  # not compressed
    with pytest.raises(DataFormatError, match="x.mtx.gz.*not a gzip file"):
        load_mtx(p)
    good = gzip.compress((BANNER + "3 3 2\n1 1 1\n2 2 1\n").encode())
    p.write_bytes(good[:-12])  # truncated stream
    with pytest.raises(DataFormatError, match="x.mtx.gz.*(corrupt|truncated)"):
        load_mtx(p)


@pytest.mark.parametrize("body, line, fragment", [
    # the regex pre-scan rejects "nan" and "+2" (stricter than needed); the check carries on
    ("3 3 3\n1 1 nan\n+2 2 1\n3 3 x\n", 5, "value 'x' is not a number"),
    # comments and blank lines between entries are counted right after the jump
    ("3 3 3\n1 1 1\n% c\n\n2 2 1\n% d\n3 0 1\n", 8, "column index 0 out of range"),
    # an index error before the surplus entry is the one reported
    ("2 2 2\n1 1 1\n3 1 1\n2 2 1\n", 4, "row index 3 out of range"),
    ("2 2 2\n1 1 1\n% c\n2 2 1\n\n1 2 1\n", 7, "more entries than the 2 declared"),
])
def test_error_line_after_many_lines(tmp_path, body, line, fragment):
    p = write(tmp_path, BANNER + body, "bad.mtx")
    with pytest.raises(DataFormatError) as e:
        load_mtx(p)
    assert f"bad.mtx:{line}:" in str(e.value) and fragment in str(e.value), str(e.value)


def test_error_at_the_end_of_a_long_file(tmp_path):
    n = 200_000
    rows = "\n".join(f"{k % 1000 + 1} {k % 777 + 1} 0.5" for k in range(n))
    p = write(tmp_path, BANNER + f"1000 1000 {n + 1}\n{rows}\n% tail\n1000 1 1e5q\n", "big.mtx")
    with pytest.raises(DataFormatError, match=rf"big\.mtx:{n + 4}: value '1e5q' is not a number"):
        load_mtx(p)
