"""Which implementations a rerun compares, and what exactly each one is, found without running
them: an implementation is untrusted code, so this process (which plans, judges and writes the
records) only reads its source files (``ast``) and its distribution's metadata. Workers import it.

An implementation is named by an operation's peer name ("sitegen"), an installed distribution's
``sitegen.implementations`` entry point, or ``pkg.module:Name``. Its record names the
distribution and version where there is one, the git commit of a clean checkout it lives in,
and always a digest of its source files, so two revisions read apart.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import re
from dataclasses import dataclass, replace
from pathlib import Path

from sitegen.core.gitread import clean_commit
from sitegen.operations import IMPLEMENTATIONS_GROUP, Operation, entry_points
from sitegen.core.problems import InputError, Problem
from sitegen.rerun.plan.sourcefiles import importable_files, module_file


@dataclass(frozen=True)
class ImplRef:
    """One implementation as the records name it."""

    name: str
    """What the records and the summary call it: a peer's or entry point's name, else the class name."""
    target: str
    """pkg.module:Name of its Implementation class."""
    operation: str | None
    """The operation its class body names (read with ast)."""
    files: tuple[Path, ...]
    source_digest: str | None
    needs: tuple[str, ...] = ()
    """Modules it imports that may be missing here, and how to get them (its ``needs``)."""
    install: str | None = None
    distribution: str | None = None
    dist_version: str | None = None
    commit: str | None = None
    asked: str = ""
    """What --impl named (reproduces the rerun's command line)."""

    @property
    def internal(self) -> bool:
        """Shipped inside sitegen (its own document() describes it)."""
        return self.target.startswith("sitegen.")

    def as_json(self) -> dict:
        return {"name": self.name, "target": self.target}


def source_files(module: str) -> tuple[Path, ...]:
    """Every .py file of the top-level package ``module`` lives in (the module alone if it is
    not in a package): what the implementation can import of its own. An extension module or a
    .pyc with no source beside it is imported too, so it is digested too; bytecode caches are
    not (measuring processes never read them: sitegen.rerun.sweep)."""
    top = module_file(module.split(".")[0])
    if top is None:
        return ()
    if top.name != "__init__.py":
        return (top,)
    return tuple(importable_files(top.parent))


def digest_files(files: tuple[Path, ...]) -> str | None:
    """sha256 over each file's path (relative to the first's folder) and bytes."""
    if not files:
        return None
    root = files[0].parent
    h = hashlib.sha256()
    for f in files:
        rel = f.relative_to(root).as_posix() if f.is_relative_to(root) else f.name
        h.update(rel.encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    return "sha256:" + h.hexdigest()


class TooDeep(ValueError):
    """A source file that ast cannot read within Python's own bounds."""


def declared(path: Path, cls: str, attr: str):
    """The literal value of ``attr = ...`` in the class body of ``cls`` in ``path``, read with
    ast (never run), or None."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return None
    except (RecursionError, MemoryError):
        # CPython's parser gives these for nesting past its stack (1+1+… 3,000 terms, x.a.a…).
        raise TooDeep(f"{path}: nested too deeply for Python's parser") from None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for stmt in node.body:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
                if any(isinstance(t, ast.Name) and t.id == attr for t in targets) and getattr(stmt, "value", None):
                    try:
                        return ast.literal_eval(stmt.value)
                    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                        return None
    return None


def _distribution_of(module: str) -> tuple[str | None, str | None]:
    top = module.split(".")[0]
    try:
        names = importlib.metadata.packages_distributions().get(top) or []
    except Exception:
        names = []
    for name in sorted(names):
        try:
            return name, importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None, None


def describe(name: str, target: str, dist: importlib.metadata.Distribution | None = None) -> ImplRef:
    module, _, cls = target.partition(":")
    if not module or not cls or not re.fullmatch(r"[A-Za-z_][\w.]*", module + "." + cls):
        raise InputError([Problem("--impl", "$", f"{target!r} is not pkg.module:Name")])
    path = module_file(module)
    if path is None:
        raise InputError([Problem("--impl", "$", f"{name}: no Python source found for module {module}")])
    files = source_files(module) or (path,)
    if dist is not None:
        dname, dversion = dist.metadata["Name"], dist.version
    else:
        dname, dversion = _distribution_of(module)
    try:
        operation = declared(path, cls, "operation")
    except TooDeep as exc:
        raise InputError([Problem("--impl", "$", f"{name} ({target}): {exc}")]) from None
    needs = declared(path, cls, "needs")
    install = declared(path, cls, "install")
    return ImplRef(name=name, target=target, operation=operation if isinstance(operation, str) else None, files=files,
                   needs=tuple(n for n in needs if isinstance(n, str)) if isinstance(needs, (tuple, list)) else (),
                   install=install if isinstance(install, str) else None,
                   source_digest=digest_files(files), distribution=dname, dist_version=dversion,
                   commit=None if target.startswith("sitegen.") else clean_commit(path.parent))


def installed() -> dict[str, importlib.metadata.EntryPoint]:
    return entry_points(IMPLEMENTATIONS_GROUP)


def resolve(op: Operation, names: tuple[str, ...]) -> list[ImplRef]:
    """Each named implementation; InputError naming every one unknown or of another operation."""
    eps = installed()
    refs, problems = [], []
    for name in names:
        if name in op.peers:
            ref = describe(name, op.peers[name])
        elif name in eps:
            ref = describe(name, eps[name].value, eps[name].dist)
        elif ":" in name:
            ref = describe(name.rsplit(":", 1)[1], name)
        else:
            problems.append(Problem("--impl", "$", f"unknown implementation {name!r} of {op.name}: not a peer "
                                    f"({', '.join(op.peers) or 'none'}), not an installed {IMPLEMENTATIONS_GROUP} "
                                    "entry point, not pkg.module:Name"))
            continue
        if ref.operation != op.name:
            what = repr(ref.operation) if ref.operation else "no operation named as a string in its class body"
            who = name if name == ref.target else f"{name} ({ref.target})"
            problems.append(Problem("--impl", "$", f"{who} implements {what}, not {op.name}"))
            continue
        refs.append(replace(ref, asked=name))
    if problems:
        raise InputError(problems)
    return refs


def installed_for(op: Operation) -> list[str]:
    """Entry-point implementations installed here that declare ``op``."""
    out = []
    for name, ep in installed().items():
        if name in op.peers:
            continue
        try:
            ref = describe(name, ep.value, ep.dist)
        except InputError:
            continue
        if ref.operation == op.name:
            out.append(name)
    return out
