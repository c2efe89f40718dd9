"""A table's Ed25519 signing key: the proof that a record comes from the table.

The hash chain proves order, not origin: anyone who can publish on the
floor's broker can compute a record that links to a table's head. So each
table has its own key, made by `shoectl journal init` beside the journal,
readable by the table's own user only; the uplink signs every record's hash
with it, and the floor, which holds only the public half (registered with
`shoectl floor register-table`), stores a registered table's record only when
its signature verifies. docs/security.md says where the keys live and how one
is rotated.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
)

from cardshoe.controller.errors import EXIT_DEVICE_UNAVAILABLE, UserError
from cardshoe.controller.journal.atomic_file import replace_file

KEY_SUFFIX = ".signing-key"
"""The key file is the journal's path with this added: journal.sqlite.signing-key."""
KEY_MODE = 0o600
SIGNED_PREFIX = b"cardshoe/v1 record "
"""What is signed is this prefix and the record's hash, so the signature means nothing else."""
PUBLIC_KEY_HEX_LENGTH = 64


def signing_key_path(journal_path: Path) -> Path:
    return journal_path.with_name(journal_path.name + KEY_SUFFIX)


@dataclass(frozen=True)
class TableKey:
    """The private half of a table's key, as the uplink signs with it."""

    private: Ed25519PrivateKey

    @classmethod
    def generate(cls) -> TableKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def load(cls, path: Path) -> TableKey:
        """The key in a file `save` wrote; a file that is not one is one line, exit 2 or 3."""
        try:
            body = path.read_bytes()
        except PermissionError:
            raise UserError(
                f"{path}: the table's signing key is not readable by this user: run as the "
                "table's user (cardshoe)",
                EXIT_DEVICE_UNAVAILABLE,
            ) from None
        except OSError as exc:
            raise UserError(
                f"{path}: cannot read the table's signing key ({exc.strerror})"
            ) from None
        try:
            private = load_pem_private_key(body, password=None)
        except (ValueError, TypeError):
            private = None
        if not isinstance(private, Ed25519PrivateKey):
            raise UserError(
                f"{path}: not an Ed25519 signing key: make a new one with 'shoectl journal key "
                "--new' and register it on the floor"
            )
        return cls(private)

    def save(self, path: Path) -> None:
        """Write the key atomically, readable by its owner only."""
        body = self.private.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
        try:
            replace_file(path, body, KEY_MODE)
        except OSError as exc:
            raise UserError(
                f"{path}: cannot write the table's signing key ({exc.strerror}): run as the "
                "journal's owner",
                EXIT_DEVICE_UNAVAILABLE,
            ) from None

    @property
    def public_hex(self) -> str:
        """The public half as the floor registers it: 64 hex digits."""
        return self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()

    def sign(self, record_hash: str) -> str:
        return self.private.sign(SIGNED_PREFIX + record_hash.encode("ascii")).hex()


def load_signing_key(journal_path: Path) -> TableKey | None:
    """The journal's signing key, or None for a journal made before keys (it has none)."""
    path = signing_key_path(journal_path)
    return TableKey.load(path) if path.exists() else None


def make_signing_key(journal_path: Path, *, replace: bool) -> TableKey | None:
    """A new key beside the journal; without replace, None where one is already (kept)."""
    path = signing_key_path(journal_path)
    if path.exists() and not replace:
        return None
    if not journal_path.exists():
        raise UserError(f"{journal_path}: no journal: make it with 'shoectl journal init'")
    made = TableKey.generate()
    made.save(path)
    return made


def public_key(text: str) -> Ed25519PublicKey:
    """A registered public key from its 64 hex digits; anything else is one line, exit 2."""
    text = text.strip()
    try:
        if len(text) != PUBLIC_KEY_HEX_LENGTH:
            raise ValueError
        return Ed25519PublicKey.from_public_bytes(bytes.fromhex(text))
    except ValueError:
        raise UserError(
            f"{text[:80]!r} is not a table's public key: give the 64 hex digits "
            "'shoectl journal key' prints on the table PC"
        ) from None


def signature_verifies(key: Ed25519PublicKey, record_hash: str, signature: str) -> bool:
    """Whether signature is the key's signature of this record hash."""
    try:
        key.verify(bytes.fromhex(signature), SIGNED_PREFIX + record_hash.encode("ascii"))
    except (InvalidSignature, ValueError):  # not hex, or a hash that is not ASCII
        return False
    return True
