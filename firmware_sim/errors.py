"""The one exception for simulator settings a user can fix.

firmware_sim does not import the controller, so it cannot raise the
controller's UserError; its command-line front ends turn this into a
one-line error with exit code 2.
"""


class SimConfigError(ValueError):
    """A profile, option, --inject flag or scenario file the simulator cannot use."""
