"""Which cardshoe software is installed: its file manifest, and the answer to a seed.

A regulator's field check (GSA's GAT) sends a fresh seed and compares the answer with
the one the approved release gives: only the genuine files produce it, and a seed the
table never saw before cannot be answered from a stored copy. docs/security.md states the
algorithm so a lab can recompute it without this code:

- the manifest is every file of the installed package (the folders `controller`,
  `drivers` and `firmware_sim` under `cardshoe`), `__pycache__` folders left out, sorted
  by the path relative to the package root with `/` separators; for each file the line
  `PATH\\0SHA256HEX\\n`;
- the answer is HMAC-SHA256 keyed with the seed's bytes over the concatenated lines;
- the unkeyed SHA-256 of the same lines names the software in the journal's
  `session.started`.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import platform
import re
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

from cardshoe.controller.errors import UserError

DISTRIBUTION = "cardshoe"
PACKAGE_FOLDERS = ("controller", "drivers", "firmware_sim")
"""The folders of the cardshoe package, each a path prefix in the manifest."""
LEFT_OUT_FOLDER = "__pycache__"
"""Python's byte-code caches: made on the table PC, never part of a release."""
SEED_BYTES_MAX = 64
"""A seed longer than HMAC-SHA256's block is hashed first anyway: no regulator sends more."""
_HEX = re.compile(r"[0-9a-fA-F]+")


@dataclass(frozen=True)
class ManifestEntry:
    """One installed file: its path under the package root and the SHA-256 of its bytes."""

    path: str
    sha256: str

    def line(self) -> bytes:
        return f"{self.path}\0{self.sha256}\n".encode()


@dataclass(frozen=True)
class SoftwareAnswer:
    """The answer to one seed: the keyed digest and what a lab needs beside it."""

    seed: str
    digest: str
    files: int
    version: str
    python: str
    dependencies: Mapping[str, str]

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "digest": self.digest,
            "files": self.files,
            "version": self.version,
            "python": self.python,
            "dependencies": dict(self.dependencies),
        }


def parse_seed(text: str) -> bytes:
    """The seed's bytes from its hex digits; UserError (exit 2) names what is wrong."""
    if not text or len(text) % 2 or not _HEX.fullmatch(text):
        raise UserError(
            f"seed {text!r} is not hex bytes: give an even number of hex digits "
            "(0-9, a-f), such as 5eed0123"
        )
    if len(text) // 2 > SEED_BYTES_MAX:
        raise UserError(
            f"seed is {len(text) // 2} bytes: give at most {SEED_BYTES_MAX} "
            f"({2 * SEED_BYTES_MAX} hex digits)"
        )
    return bytes.fromhex(text)


def installed_folders() -> dict[str, Path]:
    """Where each folder of the running cardshoe package lies on disk (site-packages, or
    the source tree of an editable install)."""
    folders = {}
    for name in PACKAGE_FOLDERS:
        module = importlib.import_module(f"{DISTRIBUTION}.{name}")
        assert module.__file__ is not None
        folders[name] = Path(module.__file__).parent
    return folders


def tree_manifest(folders: Mapping[str, Path]) -> tuple[ManifestEntry, ...]:
    """The manifest of package folders on disk: each prefix name -> the folder it stands for."""
    entries = []
    for prefix, folder in folders.items():
        for path in folder.rglob("*"):
            relative = path.relative_to(folder)
            if LEFT_OUT_FOLDER in relative.parts or not path.is_file():
                continue
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            entries.append(ManifestEntry(f"{prefix}/{relative.as_posix()}", digest))
    return sorted_manifest(entries)


def wheel_manifest(wheel: Path) -> tuple[ManifestEntry, ...]:
    """The manifest of a release's wheel: the files it installs under cardshoe/, as
    tree_manifest would list them once installed. UserError for a file that is no wheel."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            entries = []
            for member in archive.infolist():
                parts = PurePosixPath(member.filename).parts
                if member.is_dir() or len(parts) < 3 or parts[0] != DISTRIBUTION:
                    continue
                if parts[1] not in PACKAGE_FOLDERS or LEFT_OUT_FOLDER in parts:
                    continue
                digest = hashlib.sha256(archive.read(member)).hexdigest()
                entries.append(ManifestEntry("/".join(parts[1:]), digest))
    except (OSError, zipfile.BadZipFile) as exc:
        raise UserError(
            f"cannot read the wheel {wheel}: {exc}: give the release's .whl file"
        ) from None
    if not entries:
        raise UserError(f"{wheel} holds no cardshoe package files: give cardshoe's .whl file")
    return sorted_manifest(entries)


def sorted_manifest(entries: Iterable[ManifestEntry]) -> tuple[ManifestEntry, ...]:
    """The manifest's order: by path, compared as UTF-8 bytes, the same in every language."""
    return tuple(sorted(entries, key=lambda entry: entry.path.encode()))


def manifest_bytes(entries: Iterable[ManifestEntry]) -> bytes:
    return b"".join(entry.line() for entry in entries)


def keyed_digest(seed: bytes, manifest: bytes) -> str:
    """The answer to a seed: HMAC-SHA256 keyed with the seed over the manifest's lines."""
    return hmac.new(seed, manifest, hashlib.sha256).hexdigest()


def manifest_sha256(manifest: bytes) -> str:
    """The unkeyed digest that names the software in session.started."""
    return hashlib.sha256(manifest).hexdigest()


def installed_manifest() -> bytes:
    return manifest_bytes(tree_manifest(installed_folders()))


def authenticate(seed: bytes) -> SoftwareAnswer:
    """Answer a seed with the installed software's keyed digest, computed from disk now."""
    entries = tree_manifest(installed_folders())
    return SoftwareAnswer(
        seed=seed.hex(),
        digest=keyed_digest(seed, manifest_bytes(entries)),
        files=len(entries),
        version=metadata.version(DISTRIBUTION),
        python=platform.python_version(),
        dependencies=installed_dependencies(),
    )


def software_identity() -> dict[str, str]:
    """What session.started says about the software that runs the table."""
    return {
        "version": metadata.version(DISTRIBUTION),
        "manifest_sha256": manifest_sha256(installed_manifest()),
    }


def installed_dependencies() -> dict[str, str]:
    """Each run-time dependency of cardshoe (no extra's) -> the version installed."""
    versions = {}
    for requirement in metadata.requires(DISTRIBUTION) or ():
        if "extra ==" in requirement:
            continue
        name = re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "missing"
    return dict(sorted(versions.items()))
