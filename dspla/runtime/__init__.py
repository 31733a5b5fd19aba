"""Running plans: the plan interpreter (interp.py), communicators (comm/: the interface, MPI,
simulated), the session that runs a Function on P processes (session.py), the launcher
(launch.py), the wire format of planning-time transfers and process settings."""
