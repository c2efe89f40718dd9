"""The installed cardshoe package as a lab sees it: its folders, and docs/security.md's
manifest and digest recomputed with hashlib and hmac alone, never through cardshoe's code."""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import os
import zipfile
from pathlib import Path

FOLDERS = ("controller", "drivers", "firmware_sim")


def installed_tree() -> dict[str, Path]:
    """Where Python finds each folder of the cardshoe package, as a lab would look it up."""
    tree = {}
    for name in FOLDERS:
        spec = importlib.util.find_spec(f"cardshoe.{name}")
        assert spec is not None and spec.submodule_search_locations
        tree[name] = Path(next(iter(spec.submodule_search_locations)))
    return tree


def tree_files(tree: dict[str, Path]) -> dict[str, bytes]:
    """Manifest path -> bytes of every file of the tree, byte-code caches left out."""
    files = {}
    for name, folder in tree.items():
        for directory, subfolders, names in os.walk(folder):
            subfolders[:] = [sub for sub in subfolders if sub != "__pycache__"]
            for file_name in names:
                path = Path(directory, file_name)
                files[f"{name}/{path.relative_to(folder).as_posix()}"] = path.read_bytes()
    return files


def lab_manifest(files: dict[str, bytes]) -> bytes:
    """docs/security.md's manifest, written from the text: PATH NUL SHA256HEX newline, sorted."""
    lines = sorted((path, hashlib.sha256(data).hexdigest()) for path, data in files.items())
    return b"".join(f"{path}\0{digest}\n".encode() for path, digest in lines)


def lab_digest(seed_hex: str, manifest: bytes) -> str:
    return hmac.new(bytes.fromhex(seed_hex), manifest, hashlib.sha256).hexdigest()


def release_wheel(path: Path, files: dict[str, bytes]) -> Path:
    """A wheel laid out as pip builds cardshoe's: the files under cardshoe/, and its dist-info
    (which the manifest leaves out)."""
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in sorted(files.items()):
            wheel.writestr(f"cardshoe/{name}", data)
        wheel.writestr("cardshoe-0.1.0.dist-info/METADATA", "Name: cardshoe\nVersion: 0.1.0\n")
    return path
