"""The one exception type that reaches the user as a single line, and the exit codes.

Anything the user can fix (a bad card, an unknown game, a missing device)
is raised as a UserError; the CLI prints its message on one line and exits
with its exit code, never with a traceback. The codes are the contract a
technician's script relies on (README, technician's guide).
"""

EXIT_CHECK_FAILED = 1
"""A check ran and failed: a self-test, a journal verification, a device that misbehaves."""
EXIT_BAD_INPUT = 2
"""Bad input or usage: the message says what to type instead."""
EXIT_DEVICE_UNAVAILABLE = 3
"""A device or the service is absent, busy or not permitted."""
EXIT_INTERNAL_ERROR = 70
"""EX_SOFTWARE from sysexits.h: a bug in shoectl, not in the user's input."""
EXIT_INTERRUPTED = 130
"""128 + SIGINT, as a shell reports a command stopped with Ctrl-C."""


class UserError(Exception):
    """A problem in the user's input or environment, with a one-line fix."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code
