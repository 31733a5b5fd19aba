"""dspla's progress lines, through the ``logging`` module, and one switch to silence them.

Progress (the partitioners' phases, training epochs, calibration) is logged at INFO on loggers
under ``"dspla"`` (``dspla.partition``, ``dspla.train``, ``dspla.calibrate``). Until the program
configures logging itself (a handler on the root logger or on ``"dspla"``), dspla prints them to
stderr as plain lines, as a command-line tool should; once it does, they go wherever it says.

    import logging, dspla
    dspla.quiet()                                          # no progress anywhere, from now on
    logging.getLogger("dspla").setLevel(logging.WARNING)   # the same, the logging way

``progress=False`` on a single call (``f.run(..., progress=False)``) still works as before.
"""
from __future__ import annotations

import logging
import sys

logger = logging.getLogger("dspla")
_default: bool | None = None    # the progress of calls that do not say (None: automatic)


class _Stderr(logging.Handler):
    """Writes to the sys.stderr of the moment (tests and notebooks replace it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):   # a closed stderr: progress is not worth a failure
            pass


_HANDLER = _Stderr()
_HANDLER.setFormatter(logging.Formatter("%(message)s"))


def _configured_by_user() -> bool:
    return any(h is not _HANDLER for h in logger.handlers) or bool(logging.getLogger().handlers)


def emit(name: str, line: str) -> None:
    """Log one progress line on ``dspla.<name>`` (stderr unless the program configured logging)."""
    if _configured_by_user():
        if _HANDLER in logger.handlers:
            logger.removeHandler(_HANDLER)
            logger.propagate = True
    elif _HANDLER not in logger.handlers:
        logger.addHandler(_HANDLER)
        logger.propagate = False
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.INFO)
    logger.getChild(name).info(line)


def quiet(on: bool = True) -> None:
    """Silence every progress line (``on=False``: back to automatic)."""
    global _default
    _default = False if on else None


def progress(enabled: bool | None) -> bool | None:
    """A call's progress setting: its own when it gave one, else the global one."""
    return enabled if enabled is not None else _default
