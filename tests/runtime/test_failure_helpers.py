"""The pieces of failure handling that need no real MPI: agreeing on an error (simulated ranks),
the launcher's output filter, and what a partitioner worker process inherits."""
from __future__ import annotations

import io

import pytest

from dspla.errors import DsplaError
from dspla.partition.worker import child_env
from dspla.runtime.comm.sim import run_simulated
from dspla.runtime.failure import PeerError, agree, is_quiet, on_root
from dspla.runtime.jobio import BannerFilter, Pump


def _outcomes(P, body):
    """What each simulated rank ended with: ('ok', value) or (exception class name, message, quiet)."""
    def rank(comm):
        try:
            return ("ok", body(comm))
        except DsplaError as e:
            return (type(e).__name__, str(e), is_quiet(e), getattr(e, "agreed", False))
    return run_simulated(P, rank, timeout=30)


def test_on_root_returns_rank_0s_value_and_none_elsewhere():
    got = _outcomes(3, lambda comm: on_root(comm, lambda: 41 + comm.rank + 1))
    assert got == [("ok", 42), ("ok", None), ("ok", None)]


def test_on_root_failure_reaches_every_rank_and_only_rank_0_reports():
    def body(comm):
        def read():
            raise DsplaError("input file not found: a.mtx")
        return on_root(comm, read)
    got = _outcomes(3, body)
    assert got[0] == ("DsplaError", "input file not found: a.mtx", False, True)
    for r in (1, 2):
        assert got[r][0] == "PeerError" and got[r][2] is True and "input file not found" in got[r][1]


def test_agree_reports_the_lowest_failing_rank_once():
    def body(comm):
        def step():
            if comm.rank in (1, 3):
                raise DsplaError(f"bad shard on rank {comm.rank}")
            return comm.rank
        return agree(comm, step)
    got = _outcomes(4, body)
    assert got[1] == ("DsplaError", "bad shard on rank 1", False, True)
    for r in (0, 2, 3):
        assert got[r][0] == "PeerError" and got[r][2] and "rank 1 failed: bad shard on rank 1" in got[r][1]


def test_agree_turns_any_exception_into_an_agreed_failure():
    def body(comm):
        def step():
            if comm.rank == 0:
                raise KeyError("boom")
        return agree(comm, step)
    got = run_simulated(2, lambda comm: _catch(body, comm), timeout=30)
    assert got[0] == "KeyError" and got[1] == "PeerError"


def _catch(body, comm):
    try:
        body(comm)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__
    return "ok"


def test_without_a_communicator_the_step_just_runs():
    assert on_root(None, lambda: 5) == 5 and agree(None, lambda: 6) == 6
    with pytest.raises(DsplaError, match="x"):
        on_root(None, lambda: (_ for _ in ()).throw(DsplaError("x")))


def test_peer_errors_are_quiet():
    assert is_quiet(PeerError("rank 0 failed")) and not is_quiet(DsplaError("x"))


BANNER = """
===================================================================================
=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES
=   PID 16847 RUNNING AT vm
=   EXIT CODE: 9
=   CLEANING UP REMAINING PROCESSES
=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES
===================================================================================
YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)
This typically refers to a problem with your application.
Please see the FAQ page for debugging suggestions
"""


def _filter(text: str) -> str:
    f = BannerFilter()
    out = []
    for line in text.splitlines(True):
        out += f.feed(line)
    return "".join(out + f.flush())


def test_the_banner_is_dropped_and_the_programs_output_kept():
    mine = "T: 3x2 float64\n\n=====================\nsection\n\n"
    assert _filter(mine + BANNER + "after\n") == mine + "after\n"
    assert _filter(mine) == mine
    notices = "[mpiexec@vm] Sending Ctrl-C to processes as requested\nAbort(1) on node 0 (rank 0 in comm 0): x\nok\n"
    assert _filter(notices) == "ok\n"


def test_the_launcher_shows_one_error_message():
    src = io.StringIO("dspla: error: a.mtx:3: bad\n    caret line\ndspla: warning: something\n"
                      "dspla: error on rank 1: other\n    its caret\nplain output\n")
    dst = io.StringIO()
    p = Pump(src, dst, one_error=True)
    p.run()
    assert dst.getvalue() == "dspla: error: a.mtx:3: bad\n    caret line\ndspla: warning: something\nplain output\n"


def test_a_closed_stream_is_remembered_and_the_rest_drained():
    class Closed(io.StringIO):
        def write(self, s):
            raise BrokenPipeError(32, "Broken pipe")
    p = Pump(io.StringIO("a\nb\nc\n"), Closed())
    p.run()
    assert isinstance(p.write_error, BrokenPipeError)


def test_worker_processes_do_not_inherit_the_job(monkeypatch):
    for k in ("PMI_RANK", "PMI_FD", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "HYDRA_CONTROL_FD",
              "SLURM_PROCID", "MPI_LOCALNRANKS", "DSPLA_LAUNCH_TOKEN", "DSPLA_EXPECT_NP"):
        monkeypatch.setenv(k, "1")
    monkeypatch.setenv("MY_SETTING", "kept")
    env = child_env()
    assert env["MY_SETTING"] == "kept" and env["PYTHONSAFEPATH"] == "1"
    assert not [k for k in env if k.startswith(("PMI", "OMPI", "PMIX", "HYDRA", "SLURM", "DSPLA_LAUNCH",
                                                "DSPLA_EXPECT", "MPI_LOCAL"))]


# MPICH's error stack when the peer of a transfer was killed mid-run (a helper's trial, P = 2,
# SIGKILL to one rank): the surviving rank printed these six lines as its one message
KILLED_PEER = """Other MPI error, error stack:
internal_Waitany(120)..: MPI_Waitany(count=3, array_of_requests=0x7f199aa62bb0, indx=0x7ffc64941a1c, status=0x1) failed
MPIR_Waitany(1066).....:
MPIDI_IPC_rndv_cb(176).:
MPIDI_CMA_copy_data(68):
copy_iovs(224).........: process_vm_readv failed (errno 3)"""


def test_an_mpi_error_stack_is_one_line_that_says_a_peer_is_gone():
    from dspla.runtime.failure import mpi_error
    said = mpi_error(KILLED_PEER)
    assert "\n" not in said
    assert said == ("communication with another rank failed: that rank has ended (killed or crashed?) "
                    "(Other MPI error: process_vm_readv failed (errno 3))")
    assert mpi_error("Message truncated, error stack:\nMPIR_Wait(40): message truncated") == \
        "MPI error (Message truncated: message truncated)"
    assert mpi_error("Invalid rank") == "MPI error (Invalid rank)"


def test_describe_gives_mpi4py_exceptions_one_line():
    from mpi4py import MPI

    from dspla.runtime.failure import describe
    said = describe(MPI.Exception(MPI.ERR_OTHER))
    assert said.startswith("MPI error (") and "\n" not in said


def test_mpichs_error_stack_after_a_rank_died_is_held_back_and_the_signal_kept():
    """A surviving rank's MPICH error stack (a peer killed under its shared-memory copy) is held
    back, not printed with the job's output; the banner's signal is the dead rank's."""
    stack = ("Fatal error in internal_Waitall: Other MPI error, error stack:\n"
             "internal_Waitall(82)..........: MPI_Waitall(count=2) failed\n"
             "copy_iovs(1251): process_vm_readv failed (errno 3)\n")
    f = BannerFilter()
    out = []
    for line in ("T: 3x2\n" + stack + BANNER + "after\n").splitlines(True):
        out += f.feed(line)
    assert "".join(out + f.flush()) == "T: 3x2\nafter\n"
    assert f.signals == [9] and len(f.stack) == 3 and "process_vm_readv" in f.stack[-1]


def test_a_full_stdout_is_named_as_full_and_a_closed_one_as_closed():
    from dspla.runtime.failure import STDOUT_CLOSED, stdout_failed
    assert stdout_failed(BrokenPipeError(32, "Broken pipe")) == STDOUT_CLOSED
    assert stdout_failed(ValueError("I/O operation on closed file")) == STDOUT_CLOSED
    full = stdout_failed(OSError(28, "No space left on device"))
    assert full.startswith("standard output could not be written: No space left on device")
