"""The one rule for names that reach file names, log lines, queries and MQTT topics.

A leaf of its own, not part of config/checks.py where the configuration refuses a value: the
floor's topics check names with it, and importing the config package for two constants cost
shoectl floor ingest ~35 ms of its start-up (the whole configuration and the drivers' seam).
"""

from __future__ import annotations

import re

SAFE_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
"""Table and shoe ids: safe in file names, log lines and journal queries."""
SAFE_NAME_RULE = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
