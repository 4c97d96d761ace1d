"""Whether code a rerun would trust (sitegen's own, and the peers it ships: Liger's modules,
torch) is that code, known by the bytes of the files that would run, never by a module name.

sitegen's own files are its own when they are what its distribution installed: every importable
file of the package (``.py``, an extension module, a ``.pyc`` with no source beside it) listed in
the distribution's RECORD with a matching sha256 and none missing from it. An editable install's
RECORD lists only its finder, so there the checkout is the statement of what sitegen's bytes are:
its package folders must match git's HEAD, with no untracked file (a module dropped into the
package is untracked; a changed one differs from HEAD). Read with sitegen.core.gitread, which runs
none of the checkout's programs. A shipped peer's package must be imported from its
distribution's own files (a fork earlier on the path, under Liger's or torch's names, is not),
each matching its RECORD hash.

Workers ignore bytecode caches (sitegen.rerun.sweep), so the files judged here are the files
that run. Reruns under --interpret are rehearsals, never Verified: they are not refused.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import subprocess
from functools import cache
from pathlib import Path

from sitegen.core import gitread
from sitegen.core.problems import InputError, Problem
from sitegen.rerun.plan.sourcefiles import importable_files, module_file


def _record_hash(path: Path) -> str:
    # Streamed: a CUDA torch's libtorch_cuda.so alone is about a GB.
    with path.open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@cache
def _owners() -> dict[str, list[str]]:
    try:
        return importlib.metadata.packages_distributions()
    except Exception:
        return {}


def _distribution(top: str) -> importlib.metadata.Distribution | None:
    """The installed distribution whose RECORD lists ``top``'s package with a hash (an
    egg-info's file list, or an editable install's RECORD, states no bytes)."""
    for dist in importlib.metadata.distributions():
        if dist.metadata["Name"] not in _owners().get(top, ()):
            continue
        if any(str(f) == f"{top}/__init__.py" and f.hash is not None for f in dist.files or ()):
            return dist
    return None


def record_mismatch(top: str, package: Path) -> str | None:
    """Why the package ``top`` that imports from ``package`` (its folder) is not its
    distribution's files as installed, or None."""
    dist = _distribution(top)
    if dist is None:
        return f"{top} is installed by no distribution that lists its files"
    where = f"{dist.metadata['Name']} {dist.version}"
    listed = {}
    for f in dist.files or ():
        if f.hash is not None:
            listed[Path(dist.locate_file(f)).resolve()] = f"{f.hash.mode}={f.hash.value}"
    if package.resolve() / "__init__.py" not in listed:
        return f"{top} imports from {package}, not from the files of {where}"
    for path in importable_files(package):
        want = listed.get(path.resolve())
        if want is None:
            return f"{path} is not one of {where}'s files"
        if _record_hash(path) != want:
            return f"{path} differs from {where}'s file (its RECORD hash)"
    return None


def checkout_mismatch(folders: tuple[Path, ...]) -> str | None:
    """Why ``folders`` (in one git checkout) differ from its HEAD, or None."""
    try:
        head = gitread.head(folders[0])
        if head is None:
            return f"{folders[0]} is in no git checkout with a commit"
        for folder in folders:
            changed = gitread.changed(folder, head)
            if changed is not None:
                return f"{changed} differs from the checkout's commit {head[:12]} (changed, missing or untracked)"
    except (OSError, ValueError, subprocess.SubprocessError):
        return f"{folders[0]} could not be read as a git checkout"
    return None


def _sitegen_folders() -> tuple[Path, ...]:
    import sitegen
    from sitegen.operations.peers import kernels_file

    root = Path(sitegen.__file__).resolve().parent
    kernels = kernels_file("").resolve()
    return (root,) if kernels.is_relative_to(root) else (root, kernels)


@cache
def sitegen_mismatch() -> str | None:
    """Why sitegen's installed files are not sitegen's own (its RECORD, or an editable install's
    checkout at HEAD), or None."""
    folders = _sitegen_folders()
    dist = _distribution("sitegen")
    if dist is not None:
        return record_mismatch("sitegen", folders[0])  # a wheel installs the kernels inside the package
    return checkout_mismatch(folders)


def trust_problems(refs, *, interpret: bool) -> list[Problem]:
    """One problem per implementation the rerun would trust (sitegen's, a shipped peer) whose
    files are not the shipped ones; none under --interpret (a rehearsal is never Verified)."""
    if interpret:
        return []
    problems = []
    # Each package is hashed once per check, however many implementations need it: torch alone
    # is thousands of files (about 3 GB with CUDA), and every shipped peer needs it.
    judged: dict[str, str | None] = {}
    for ref in refs:
        if not ref.internal:
            continue  # outside code: identified by its digest, trusted only when reviewed
        why = None
        for top in dict.fromkeys(("torch", *ref.needs)):
            if top not in judged:
                init = module_file(top)
                judged[top] = record_mismatch(top, init.parent) if init is not None else None
            why = judged[top]
            if why:
                break
        why = why or sitegen_mismatch()
        if why:
            problems.append(Problem("--impl", "$", f"{ref.name} ({ref.target}) is not the code sitegen ships: {why}; "
                                    "rerun from an installed release or a clean checkout, or measure it as outside "
                                    "code from a package of its own (--impl pkg.module:Name)"))
    return problems


def require_shipped(refs, *, interpret: bool) -> None:
    problems = trust_problems(refs, interpret=interpret)
    if problems:
        raise InputError(problems)
