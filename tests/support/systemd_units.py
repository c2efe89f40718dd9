"""Reading systemd unit files as tests check them (tests/deploy)."""

from __future__ import annotations

from collections import defaultdict


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """A systemd unit as section -> key -> values; keys such as DeviceAllow repeat."""
    sections: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        sections[section][key.strip()].append(value.strip())
    return sections
