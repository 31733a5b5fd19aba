"""The distributed runtime: planner (program -> per-rank plan programs), plan IR and its
interpreter, communicators (MPI and simulated), and the session that runs a Function on P
processes."""
