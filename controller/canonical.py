"""One JSON text per value, so that a hash of it identifies the value itself.

Both the configuration fingerprint and the journal's hash chain hash JSON;
they must not depend on dict order, spacing or float spellings, or the same
options and records would hash differently from one run to the next.
"""

from __future__ import annotations

import json
from typing import Any

_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
"""Built once: json.dumps builds an encoder on every call, a sixth of the cost of a record's
payload, which floor ingest pays for every record it verifies. It holds no state between calls."""


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 text kept as is, and no NaN or infinity."""
    return _ENCODER.encode(value)
