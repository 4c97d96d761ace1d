"""Signed reruns: SSH signatures (Ed25519) over a run's digest and every document it references.

A signature is an SSHSIG blob, the format of ``ssh-keygen -Y sign`` and git's SSH-signed
commits, in namespace ``sitegen-run``, over the signed payload: the RFC 8785 canonical
JSON of the digests of the run and of its implementation, workload, operation, protocol
and environment. Because the run's spec names the first four by digest and the workload
names the operation, no document of the set can be swapped without the payload changing;
naming them all keeps the payload readable on its own. The blob lives in the run's
``metadata.signature``, outside the digested spec, so signing never changes the run's
digest (which the signature covers) and a signed run keeps its name, lock entry and URL.

Anyone can check one by hand with OpenSSH alone: the payload is the canonical JSON above
(``payload``), the armored blob ``armor(signature)``, and ``ssh-keygen -Y verify -n
sitegen-run`` checks it against an allowed_signers file of the registry's trusted keys
(tests/trust/test_signatures.py does exactly that).

Keys are OpenSSH Ed25519 keys, read and written with ``cryptography``: an existing
``ssh-keygen -t ed25519`` key works, and ``sitegen keygen`` writes the same format.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import struct
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from sitegen.core.digest import canonical
from sitegen.core.problems import InputError, Problem

NAMESPACE = b"sitegen-run"
_MAGIC = b"SSHSIG"
_HASH = b"sha512"
_KEY_TYPE = b"ssh-ed25519"
MAX_KEY_BYTES = 64 * 1024

# What the signed payload names, in its own words: payload key → the run spec's field.
REFERENCED = {"implementation": "implementationDigest", "workload": "workloadDigest",
              "protocol": "protocolDigest", "environment": "environmentDigest"}

VALID = "valid"
UNSIGNED = "unsigned"
UNKNOWN_KEY = "signed by a key this registry does not trust"
BAD = "signature does not match the run and the documents it references"
OUTSIDE = "signed by a trusted key outside its validity window"
UNPINNED = "signed by a retired key that vouches only for the runs its trust entry lists"


def payload(run_digest: str, references: dict[str, str]) -> bytes:
    """The bytes a run's signature covers: the digests of the run and of each document it references."""
    return canonical({"run": run_digest, **references})


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _read_string(blob: bytes, at: int) -> tuple[bytes, int]:
    if at + 4 > len(blob):
        raise ValueError("truncated")
    (size,) = struct.unpack(">I", blob[at:at + 4])
    end = at + 4 + size
    if end > len(blob):
        raise ValueError("truncated")
    return blob[at + 4:end], end


def _public_blob(key: Ed25519PublicKey) -> bytes:
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return _string(_KEY_TYPE) + _string(raw)


def public_line(key: Ed25519PublicKey) -> str:
    """The key as one OpenSSH line, ``ssh-ed25519 AAAA…`` (as in a .pub file or allowed_signers)."""
    return key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()


def _signed_data(message: bytes) -> bytes:
    return _MAGIC + _string(NAMESPACE) + _string(b"") + _string(_HASH) + _string(hashlib.sha512(message).digest())


def sign(key: Ed25519PrivateKey, message: bytes) -> str:
    """The SSHSIG blob of ``message``, base64 (unarmored)."""
    signature = _string(_KEY_TYPE) + _string(key.sign(_signed_data(message)))
    blob = (_MAGIC + struct.pack(">I", 1) + _string(_public_blob(key.public_key())) + _string(NAMESPACE)
            + _string(b"") + _string(_HASH) + _string(signature))
    return base64.b64encode(blob).decode()


def armor(signature: str) -> str:
    """The blob as ``ssh-keygen -Y verify`` reads it."""
    lines = [signature[i:i + 70] for i in range(0, len(signature), 70)]
    return "-----BEGIN SSH SIGNATURE-----\n" + "\n".join(lines) + "\n-----END SSH SIGNATURE-----\n"


def _parse(signature: str) -> tuple[bytes, bytes]:
    """(public key's raw 32 bytes, raw Ed25519 signature); ValueError when it is no sitegen SSHSIG."""
    try:
        blob = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("not base64") from None
    if not blob.startswith(_MAGIC) or blob[6:10] != struct.pack(">I", 1):
        raise ValueError("not an SSH signature")
    public, at = _read_string(blob, 10)
    namespace, at = _read_string(blob, at)
    _reserved, at = _read_string(blob, at)
    hash_name, at = _read_string(blob, at)
    inner, at = _read_string(blob, at)
    if namespace != NAMESPACE or hash_name != _HASH or at != len(blob):
        raise ValueError("not a sitegen-run signature")
    key_type, rest = _read_string(public, 0)
    raw_key, end = _read_string(public, rest)
    sig_type, rest = _read_string(inner, 0)
    raw_sig, sig_end = _read_string(inner, rest)
    if key_type != _KEY_TYPE or sig_type != _KEY_TYPE or end != len(public) or sig_end != len(inner):
        raise ValueError("not an Ed25519 signature")
    return raw_key, raw_sig


@dataclass(frozen=True)
class TrustedKey:
    """One entry of a trust list, as sitegen.registry.config reads it."""

    name: str
    key: Ed25519PublicKey
    raw: bytes
    valid_after: date | None
    valid_before: date | None
    runs: frozenset[str] | None = None
    """The run digests the key vouches for, when its entry pins them (a retired key); None: any run in its window."""

    def vouches_for(self, run_digest: str) -> bool:
        return self.runs is None or run_digest in self.runs

    def valid_at(self, when: datetime) -> bool:
        day = when.astimezone(timezone.utc).date()
        return (self.valid_after is None or day >= self.valid_after) and (self.valid_before is None or day < self.valid_before)


def parse_public_line(line: str) -> Ed25519PublicKey:
    """An OpenSSH one-line public key; ValueError unless it is Ed25519."""
    if any(ch in line.strip() for ch in "\r\n"):
        # The parser reads the first line and drops the rest: a second key would pass unseen.
        raise ValueError("holds a line break; a key is one line of a .pub file")
    try:
        key = serialization.load_ssh_public_key(line.strip().encode())
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise ValueError(f"not an OpenSSH public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 key (ssh-keygen -t ed25519 makes one)")
    return key


@dataclass(frozen=True)
class Outcome:
    status: str
    """VALID, UNSIGNED, UNKNOWN_KEY, BAD or OUTSIDE."""
    signer: str | None = None
    """The trusted key's name, when one signed it."""

    @property
    def valid(self) -> bool:
        return self.status == VALID

    def reason(self) -> str:
        if self.status == OUTSIDE:
            return f"signed by {self.signer}, a trusted key outside its validity window at the time of the run"
        if self.status == UNPINNED:
            return f"signed by {self.signer}, a retired key that vouches only for the runs its trust entry lists, not this one"
        return "the rerun is unsigned" if self.status == UNSIGNED else f"the rerun is {self.status}"


def check(signature: str | None, message: bytes, observed: datetime, trust: list[TrustedKey],
          run_digest: str | None = None) -> Outcome:
    """Whether ``signature`` is a valid signature of ``message`` by a key of ``trust`` valid at ``observed``
    that vouches for ``run_digest`` (a retired key vouches only for the runs its entry pins)."""
    if not signature:
        return Outcome(UNSIGNED)
    try:
        raw_key, raw_sig = _parse(signature)
    except ValueError:
        return Outcome(BAD)
    trusted = [t for t in trust if t.raw == raw_key]
    if not trusted:
        return Outcome(UNKNOWN_KEY)
    try:
        Ed25519PublicKey.from_public_bytes(raw_key).verify(raw_sig, _signed_data(message))
    except (InvalidSignature, ValueError):
        return Outcome(BAD)
    in_window = [t for t in trusted if t.valid_at(observed)]
    if not in_window:
        return Outcome(OUTSIDE, trusted[0].name)
    pinned = [t for t in in_window if t.vouches_for(run_digest)]
    if not pinned:
        return Outcome(UNPINNED, in_window[0].name)
    return Outcome(VALID, pinned[0].name)


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """An OpenSSH Ed25519 private key file (``ssh-keygen -t ed25519`` or ``sitegen keygen``); InputError otherwise."""
    from sitegen.core.inputfile import read_regular

    data = read_regular(path, MAX_KEY_BYTES)
    try:
        key = serialization.load_ssh_private_key(data, password=None)
    except TypeError:
        raise InputError([Problem(str(path), "$", "the key is protected by a passphrase; sign with an unencrypted copy "
                                  "kept on the signing machine (ssh-keygen -p -N '' -f COPY)")]) from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise InputError([Problem(str(path), "$", f"not an OpenSSH private key: {exc}")]) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError([Problem(str(path), "$", "not an Ed25519 key; make one with `sitegen keygen` or ssh-keygen -t ed25519")])
    return key


def keygen(path: Path, comment: str) -> str:
    """Write a new key to ``path`` (private, mode 0600) and ``path``.pub; the public line."""
    public = Path(f"{path}.pub")
    if any(not ch.isprintable() for ch in comment):
        # A line break would make the .pub two key lines, of which a [[trust]] entry reads one.
        raise InputError([Problem("--comment", "$", f"{comment!r} holds a line break or control character; "
                                  "a .pub file is one line")])
    for target in (path, public):
        if target.exists() or target.is_symlink():
            raise InputError([Problem(str(target), "$", "already exists; a key is never overwritten")])
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                serialization.NoEncryption())
    line = f"{public_line(key.public_key())} {comment}".rstrip() + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(private)
    public.write_text(line)
    return line.strip()


def trusted_keys(entries) -> list[TrustedKey]:
    """config.TrustedSigner entries (already checked to be Ed25519 lines) as keys."""
    keys = []
    for entry in entries:
        key = parse_public_line(entry.key)
        keys.append(TrustedKey(entry.name, key, raw_public(key), entry.valid_after, entry.valid_before,
                               None if entry.runs is None else frozenset(entry.runs)))
    return keys


def references(run, by_digest) -> dict[str, str] | None:
    """The payload's digests of the documents ``run`` references; None when its workload is not in ``by_digest``.

    ``run`` and the values of ``by_digest`` are loader.Records or summaries.Summaries."""
    refs = {key: run.reference((field,)) for key, field in REFERENCED.items()}
    workload = by_digest.get(refs["workload"])
    if workload is None:
        return None
    refs["operation"] = workload.reference(("operationSpecDigest",))
    return refs


def observed_at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def check_run(run, by_digest, trust: list[TrustedKey]) -> Outcome:
    """The signature outcome of a BenchmarkRun of a registry whose references resolve."""
    refs = references(run, by_digest)
    if refs is None:
        return Outcome(BAD)
    return check(run.signature, payload(run.digest, refs), observed_at(run.observed), trust, run.digest)


def sign_run(run, by_digest, key: Ed25519PrivateKey) -> str:
    """The signature of ``run`` (its digest and those of the documents it references) by ``key``."""
    refs = references(run, by_digest)
    if refs is None:
        raise InputError([Problem(run.file, f"{run.pointer}.spec.workloadDigest", "references no workload in the registry")])
    return sign(key, payload(run.digest, refs))


def signature_problems(registry, entries) -> list[Problem]:
    """One Problem per signed run whose signature is not valid by a key of ``entries`` (config.TrustedSigner)."""
    trust = trusted_keys(entries)
    problems = []
    for run in registry.of_kind("BenchmarkRun"):
        if not run.signature:
            continue
        outcome = check_run(run, registry.by_digest, trust)
        if not outcome.valid:
            problems.append(Problem(run.file, f"{run.pointer}.metadata.signature", outcome.reason().removeprefix("the rerun is ")))
    return problems
