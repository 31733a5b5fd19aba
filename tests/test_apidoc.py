"""The API reference is generated from the docstrings by pdoc (`pdoc dspla dspla.formats dspla.models -o
DIR`); building it here means a module that cannot be imported or documented breaks the tests, not the reference."""
import subprocess
import sys
from pathlib import Path

PDOC = str(Path(sys.executable).parent / "pdoc")


def test_the_api_reference_builds(tmp_path):
    r = subprocess.run([PDOC, "dspla", "dspla.formats", "dspla.models", "-o", str(tmp_path)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    pages = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.html")}
    for page in ("dspla.html", "dspla/semiring.html", "dspla/monoid.html", "dspla/plot.html", "dspla/function.html",
                 "dspla/formats.html", "dspla/models.html"):
        assert page in pages, page
    top = (tmp_path / "dspla.html").read_text()
    for name in ("load_graph", "read_results", "Trainer", "TrainConfig", "load_shards"):   # reachable from dspla
        assert f'id="{name}"' in top, name
    assert 'id="read_results"' in (tmp_path / "dspla" / "formats.html").read_text()
    assert 'id="Trainer"' in (tmp_path / "dspla" / "models.html").read_text()
    semiring = (tmp_path / "dspla" / "semiring.html").read_text()
    assert "python-graphblas operators" in semiring and 'class="name">define' in semiring
    assert "comm_stats" in (tmp_path / "dspla" / "plot.html").read_text()
