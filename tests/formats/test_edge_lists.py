"""Edge lists as given: the third column is the weight (kept unless unweighted), duplicate edges
merged by a chosen rule and counted, original node ids kept (``Graph.ids``, ``unit:ID``), reader
options on ``-i``. Expectations are written out by hand."""
import numpy as np
import pytest
import scipy.sparse as sp

from dspla.errors import DataFormatError, DsplaError
from dspla.formats import read_input
from dspla.formats.graph import Graph, load_graph
from dspla.formats.inputs import generate_inputs, split_spec
from dspla.formats.snap import read_snap
from dspla.ir.types import DType, Kind, Type


def write(tmp_path, text, name="g.txt"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_the_third_column_is_the_weight(tmp_path):
    g = load_graph(write(tmp_path, "0 1 5.0\n1 2 7.5\n0 2 20\n"))
    assert isinstance(g, Graph) and g.merged == 0 and g.ids.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(g.matrix.toarray(), [[0, 5, 20], [0, 0, 7.5], [0, 0, 0]])
    np.testing.assert_array_equal(load_graph(write(tmp_path, "0 1 5.0\n1 2 7.5\n0 2 20\n"),
                                             weighted=False).matrix.toarray(), [[0, 1, 1], [0, 0, 1], [0, 0, 0]])


def test_original_ids_are_kept(tmp_path):
    g = load_graph(write(tmp_path, "5 10\n10 2000\n2000 77777\n"))
    assert g.ids.tolist() == [5, 10, 2000, 77777] and g.shape == (4, 4)
    assert g.index([77777, 5]).tolist() == [3, 0]
    with pytest.raises(DsplaError, match="has no node 6 .4 nodes; its ids run 5..77777"):
        g.index(6)
    # numbered by ids given (another graph's, in its order): row k is node ids[k]
    h = load_graph(write(tmp_path, "2000 5 1.5\n", "h.txt"), ids=g.ids)
    assert h.ids is g.ids or h.ids.tolist() == g.ids.tolist()
    assert sp.coo_array(h.matrix).row.tolist() == [2] and sp.coo_array(h.matrix).col.tolist() == [0]
    with pytest.raises(DataFormatError, match=r"h2.txt:2: node 3 is not among the 4 ids given"):
        load_graph(write(tmp_path, "5 10\n3 5\n", "h2.txt"), ids=g.ids)


LIST = ("0 1 5\n"     # line 1
        "1 0 5\n"     # line 2: the other direction, same value
        "1 2 3\n"     # line 3
        "2 1 4\n"     # line 4: the other direction, another value
        "0 1 9\n")    # line 5: 0 -> 1 again


@pytest.mark.parametrize("rule, directed, merged, want", [
    ("first", True, 1, [[0, 5, 0], [5, 0, 3], [0, 4, 0]]),
    ("sum", True, 1, [[0, 14, 0], [5, 0, 3], [0, 4, 0]]),
    # undirected: 0-1 both ways, after merging 0 -> 1 (5, then 9): first 5 = 5 (one edge listed both
    # ways, not a duplicate), sum 14 vs 5 (differ: added up, 19); 1-2: 3 and 4 differ (a duplicate)
    ("first", False, 2, [[0, 5, 0], [5, 0, 3], [0, 3, 0]]),
    ("sum", False, 3, [[0, 19, 0], [19, 0, 7], [0, 7, 0]]),
])
def test_duplicates_follow_the_rule_and_are_counted(tmp_path, rule, directed, merged, want):
    got = read_snap(write(tmp_path, LIST), directed=directed, duplicates=rule)
    assert got.merged == merged
    np.testing.assert_array_equal(got.matrix.toarray(), want)


def test_an_undirected_list_with_both_directions_is_no_duplicate(tmp_path):
    p = write(tmp_path, "0 1 2.5\n1 0 2.5\n1 2 1\n2 1 1\n")
    for rule in ("first", "sum", "error"):
        got = read_snap(p, directed=False, duplicates=rule)
        assert got.merged == 0
        np.testing.assert_array_equal(got.matrix.toarray(), [[0, 2.5, 0], [2.5, 0, 1], [0, 1, 0]])


@pytest.mark.parametrize("directed, line, fragment", [
    (True, 5, "an edge listed again: '0 1 9'"),
    (False, 4, "an edge listed in the other direction before, with another value: '2 1 4'"),
])
def test_duplicates_error_names_the_line(tmp_path, directed, line, fragment):
    with pytest.raises(DataFormatError) as e:
        read_snap(write(tmp_path, "# header\n" + LIST), directed=directed, duplicates="error")
    assert f"g.txt:{line + 1}: {fragment}" in str(e.value)


def test_unweighted_duplicates_and_self_loops(tmp_path):
    p = write(tmp_path, "3 3\n1 3\n1 3\n3 1\n")
    g = read_snap(p)                       # a pattern: the repeated line merged, value 1
    assert g.merged == 1 and g.ids.tolist() == [1, 3]
    np.testing.assert_array_equal(g.matrix.toarray(), [[0, 1], [1, 1]])
    np.testing.assert_array_equal(read_snap(p, duplicates="sum").matrix.toarray(), [[0, 2], [1, 1]])
    u = read_snap(p, directed=False, self_loops=False)
    assert u.merged == 1
    np.testing.assert_array_equal(u.matrix.toarray(), [[0, 1], [1, 0]])
    with pytest.raises(DataFormatError, match=r"g.txt:3: an edge listed again"):   # the line, loops dropped or not
        read_snap(p, self_loops=False, duplicates="error")
    with pytest.raises(DsplaError, match="one of first, sum, error"):
        read_snap(p, duplicates="max")


def test_reader_options_on_the_command_line_spec(tmp_path):
    p = write(tmp_path, "5 10 1.5\n10 5 2\n")
    assert split_spec(f"{p}:unweighted,undirected") == (str(p), None, {"weighted": False, "directed": False})
    assert split_spec(f"{p}:duplicates=sum") == (str(p), None, {"duplicates": "sum"})
    assert split_spec("d.npz:X") == ("d.npz", "X", {})
    assert split_spec("a:b/g.txt") == ("a:b/g.txt", None, {})   # a colon inside a path
    with pytest.raises(DsplaError, match="unknown graph reader option 'unweigted'"):
        split_spec(f"{p}:unweigted")
    g = read_input(f"{p}:unweighted", "sparse")
    np.testing.assert_array_equal(g.matrix.toarray(), [[0, 1], [1, 0]])
    g = read_input(f"{p}:undirected", "sparse", quiet=True)   # 1.5 and 2 differ: the first
    np.testing.assert_array_equal(g.matrix.toarray(), [[0, 1.5], [1.5, 0]])


def test_the_merge_is_said_on_stderr(tmp_path, capsys):
    p = write(tmp_path, "0 1 1\n0 1 2\n0 1 3\n")
    read_input(str(p), "sparse", name="A")
    err = capsys.readouterr().err
    assert "2 edges listed more than once, merged (the first value of each kept" in err
    assert f"-i A={p}:duplicates=sum|error to choose" in err
    load_graph(p)
    assert "duplicates='sum' or 'error' to choose" in capsys.readouterr().err
    load_graph(p, quiet=True)
    assert capsys.readouterr().err == ""


def _t(shape=("n", 1)):
    return Type(Kind.sparse, shape, DType.float64)


def test_unit_takes_an_original_id_when_a_graph_numbers_the_dim(tmp_path):
    g = read_input(str(write(tmp_path, "5 10\n10 2000\n2000 77777\n")), "sparse")
    decls = {"A": _t(("n", "n")), "s": _t()}
    s = generate_inputs({"s": "unit:2000"}, decls, {"A": g})["s"]
    assert s.shape == (4, 1) and sp.coo_array(s).row.tolist() == [2]
    with pytest.raises(DsplaError, match=r"s=unit:2: the graph A has no node 2 .4 nodes; its ids run 5..77777"):
        generate_inputs({"s": "unit:2"}, decls, {"A": g})
    # a MatrixMarket graph has no ids: unit:I is row I
    m = sp.csr_array(np.eye(4))
    assert sp.coo_array(generate_inputs({"s": "unit:2"}, decls, {"A": m})["s"]).row.tolist() == [2]


def test_networkx_graphs_in(tmp_path):
    nx = pytest.importorskip("networkx")
    G = nx.DiGraph()
    G.add_nodes_from(["z", "a"])               # node order: as added (z first), "b" an isolated one later
    G.add_edge("a", "z", weight=2.5)
    G.add_edge("z", "z", weight=1.0)
    G.add_node("b")
    g = load_graph(G)
    assert g.ids.tolist() == ["z", "a", "b"]
    np.testing.assert_array_equal(g.matrix.toarray(), [[1, 0, 0], [2.5, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(load_graph(G, weighted=False).matrix.toarray(), [[1, 0, 0], [1, 0, 0], [0, 0, 0]])
    U = nx.Graph([(1, 2, {"cost": 4}), (2, 3, {"cost": 5})])
    np.testing.assert_array_equal(load_graph(U, weight="cost").matrix.toarray(), [[0, 4, 0], [4, 0, 5], [0, 5, 0]])
    with pytest.raises(DsplaError, match="no edge of the networkx graph has the attribute 'len'"):
        load_graph(U, weight="len")
    U.add_edge(3, 4)
    with pytest.raises(DsplaError, match="1 of the networkx graph's 3 edges have no 'cost'"):
        load_graph(U, weight="cost")
    M = nx.MultiDiGraph([(0, 1, {"weight": 2}), (0, 1, {"weight": 3})])
    m = load_graph(M)                          # parallel edges added up, as networkx does
    assert m.merged == 1 and m.matrix.toarray().tolist() == [[0, 5], [0, 0]]


def test_reader_options_on_a_matrix_market_file(tmp_path):
    p = write(tmp_path, "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 3.5\n2 2 -1\n", "a.mtx")
    g = read_input(f"{p}:undirected", "sparse")
    assert isinstance(g, Graph) and g.ids is None
    np.testing.assert_array_equal(g.matrix.toarray(), [[0, 3.5], [3.5, -1]])
    np.testing.assert_array_equal(read_input(f"{p}:unweighted", "sparse").matrix.toarray(), [[0, 1], [0, 1]])
    with pytest.raises(DsplaError, match="duplicates apply to edge lists, not to"):
        read_input(f"{p}:duplicates=sum", "sparse")


def test_networkx_node_ids_keep_their_types():
    nx = pytest.importorskip("networkx")
    g = load_graph(nx.DiGraph([(1, "a"), ("a", (2, 3))]))
    assert g.ids.dtype == object and g.ids.tolist() == [1, "a", (2, 3)]
    assert g.index(["a", (2, 3)]).tolist() == [1, 2]
