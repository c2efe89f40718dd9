"""shoectl, the command line of cardshoe.

Every command module imports only click at module level and loads heavy
libraries (structlog, rich, pyserial, pyusb, transitions) inside the
command body, so `shoectl --help` and `shoectl list` start quickly.
"""
