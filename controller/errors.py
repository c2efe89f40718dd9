"""The one exception type that reaches the user as a single line.

Anything the user can fix (a bad card, an unknown game, a missing device)
is raised as a UserError; the CLI prints its message on one line and exits
with its exit code, never with a traceback.
"""


class UserError(Exception):
    """A problem in the user's input or environment, with a one-line fix."""

    exit_code = 2

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code
