"""Edge-list (SNAP) loader: hand-written files with hand-written matrices, the real SNAP files,
and line-numbered errors."""
import gzip

import numpy as np
import pytest
import scipy.sparse as sp

from dspla.errors import DataFormatError, DsplaError
from dspla.formats.snap import load_snap

from conftest import dataset

TEXT = ("# Directed graph: toy.txt\n"
        "# FromNodeId\tToNodeId\n"
        "10\t30\n"
        "30 10\n"
        "10\t30\n"      # duplicate: one entry
        "\n"
        "7  7\n"        # self loop
        "30\t99\n")
# ids 7, 10, 30, 99 -> 0, 1, 2, 3


def write(tmp_path, text, name="g.txt"):
    p = tmp_path / name
    p.write_bytes(gzip.compress(text.encode()) if name.lower().endswith(".gz") else text.encode())
    return p


def test_directed_relabelled_with_ids(tmp_path):
    A, ids = load_snap(write(tmp_path, TEXT), return_ids=True)
    assert isinstance(A, sp.csr_array) and A.dtype == np.float64
    assert ids.tolist() == [7, 10, 30, 99]
    np.testing.assert_array_equal(A.toarray(), [[1, 0, 0, 0],
                                                [0, 0, 1, 0],
                                                [0, 1, 0, 1],
                                                [0, 0, 0, 0]])


def test_undirected_without_self_loops(tmp_path):
    A = load_snap(write(tmp_path, TEXT), directed=False, self_loops=False)
    np.testing.assert_array_equal(A.toarray(), [[0, 0, 0, 0],
                                                [0, 0, 1, 0],
                                                [0, 1, 0, 1],
                                                [0, 0, 1, 0]])


def test_undirected_self_loop_not_doubled(tmp_path):
    A = load_snap(write(tmp_path, "0 0\n0 1\n"), directed=False)
    np.testing.assert_array_equal(A.toarray(), [[1, 1], [1, 0]])


def test_no_relabel_keeps_ids(tmp_path):
    with pytest.raises(DsplaError, match="relabel=False would make a"):
        load_snap(write(tmp_path, "1 99999999999\n", "big.txt"), relabel=False)
    A = load_snap(write(tmp_path, "1 3\n3 1\n"), relabel=False)
    assert A.shape == (4, 4)
    np.testing.assert_array_equal(A.toarray(), [[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0], [0, 1, 0, 0]])


@pytest.mark.parametrize("name", ["g.txt.gz", "G.TXT.GZ"])
def test_crlf_gzip_and_percent_comments(tmp_path, name):
    text = "% sym unweighted\r\n% 3 3\r\n0\t1\r\n1\t2\r\n"
    A = load_snap(write(tmp_path, text, name))
    np.testing.assert_array_equal(A.toarray(), [[0, 1, 0], [0, 0, 1], [0, 0, 0]])


def test_third_column_is_the_weight_unless_unweighted(tmp_path):
    # kept by default (it was dropped unless weighted=True, silently giving wrong distances);
    # 0 -> 1 is listed twice: the first value is kept
    p = write(tmp_path, "0 1 5\n1 0 2.5\n0 1 9\n")
    np.testing.assert_array_equal(load_snap(p).toarray(), [[0, 5], [2.5, 0]])
    np.testing.assert_array_equal(load_snap(p, weighted=True).toarray(), [[0, 5], [2.5, 0]])
    np.testing.assert_array_equal(load_snap(p, weighted=False).toarray(), [[0, 1], [1, 0]])
    # undirected, the pair's two directions differ (5 and 2.5): the one listed first
    np.testing.assert_array_equal(load_snap(p, directed=False).toarray(), [[0, 5], [5, 0]])
    np.testing.assert_array_equal(load_snap(p, duplicates="sum").toarray(), [[0, 14], [2.5, 0]])
    with pytest.raises(DataFormatError, match="no third"):
        load_snap(write(tmp_path, "0 1\n", "h.txt"), weighted=True)
    np.testing.assert_array_equal(load_snap(write(tmp_path, "0 1\n", "h.txt")).toarray(), [[0, 1], [0, 0]])


def test_empty_file(tmp_path):
    A, ids = load_snap(write(tmp_path, "# nothing\n"), return_ids=True)
    assert A.shape == (0, 0) and len(ids) == 0


@pytest.mark.parametrize("text, line, fragment", [
    ("# c\n0 1\n2\n", 3, "expected 2 columns like the first edge line, found 1"),
    ("0 1\n1 2 3\n", 2, "expected 2 columns like the first edge line, found 3"),
    ("0 1 1\n1 2\n", 2, "expected 3 columns like the first edge line, found 2"),
    ("# c\n0 1 2 3\n", 2, "expected 'SRC DST' or 'SRC DST VALUE', found 4 columns"),
    ("0 1\n\n1 x\n", 3, "target node id 'x' is not an integer"),
    ("0 1\n1.5 2\n", 2, "source node id '1.5' is not an integer"),
    ("0 1\n1 -2\n", 2, "target node id -2 is negative"),
    ("0 1 0.5\n1 2 abc\n", 2, "edge value 'abc' is not a number"),
    ("0 1\n99999999999999999999 1\n", 2, "does not fit in 64 bits"),
    ("0 1\r\n1 2\r\n2 y\r\n", 3, "'y' is not an integer"),
])
def test_malformed_lines(tmp_path, text, line, fragment):
    p = write(tmp_path, text, "bad.txt")
    with pytest.raises(DataFormatError) as e:
        load_snap(p)
    assert f"bad.txt:{line}:" in str(e.value) and fragment in str(e.value), str(e.value)


def test_malformed_line_in_gzip(tmp_path):
    p = write(tmp_path, "0 1\n1 2\n2 z\n", "bad.txt.gz")
    with pytest.raises(DataFormatError, match=r"bad\.txt\.gz:3: target node id 'z'"):
        load_snap(p)


def test_slashdot_crlf_gz():
    A = load_snap(dataset("snap", "soc-Slashdot0902.txt.gz"))
    assert A.shape == (82168, 82168) and A.nnz == 948464  # no duplicate lines in the file
    assert A.diagonal().sum() == 78303  # the file lists 78,303 self loops, kept by default
    assert A[0, 1] == 1 and A[1, 0] == 1  # first lines "0 1", "0 2", ... and "1 0"
    U = load_snap(dataset("snap", "soc-Slashdot0902.txt.gz"), directed=False, self_loops=False)
    assert (U != U.T).nnz == 0 and U.diagonal().sum() == 0


def test_enron_both_directions_listed():
    A = load_snap(dataset("snap", "email-Enron.txt"))
    assert A.shape == (36692, 36692) and A.nnz == 367662
    assert (A != A.T).nnz == 0  # each undirected pair is stored both ways
    assert load_snap(dataset("snap", "email-Enron.txt"), directed=False).nnz == 367662


def test_hepph_relabelled():
    A, ids = load_snap(dataset("snap", "ca-HepPh.txt"), return_ids=True)
    assert A.shape == (12008, 12008) and len(ids) == 12008 and A.nnz == 237010
    assert np.all(np.diff(ids) > 0) and ids[-1] > 12008  # ids are sparse: relabelling mattered
    first = np.searchsorted(ids, [17010, 1943])  # the file's first line is "17010\t1943"
    assert A[first[0], first[1]] == 1


def test_error_line_after_lines_the_prescan_distrusts(tmp_path):
    # "+5" and a 19-digit id are valid but fail the quick regex; the line check carries on
    text = "# c\n+5 6\n1234567890123456789 1\n\n# d\n3 4\n3 -4\n"
    with pytest.raises(DataFormatError, match=r"bad\.txt:7: target node id -4 is negative"):
        load_snap(write(tmp_path, text, "bad.txt"))


def test_error_at_the_end_of_a_long_file(tmp_path):
    n = 200_000
    text = "# big\n" + "\n".join(f"{k}\t{(7 * k) % n}" for k in range(n)) + "\n1 2 3\n"
    with pytest.raises(DataFormatError, match=rf"big\.txt:{n + 2}: expected 2 columns"):
        load_snap(write(tmp_path, text, "big.txt"))
