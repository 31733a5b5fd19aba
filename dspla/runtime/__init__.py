"""Running plans: the plan interpreter (interp/: its core, and one module of handlers per kind of
instruction), communicators (comm/: the interface, MPI, simulated), the session that runs a
Function on P processes (session.py), the launcher (launch.py), the wire format of planning-time
transfers and process settings."""
