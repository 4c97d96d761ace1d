"""Where a module's code lives, found without running it: its source file (importlib's finders,
no package executed) and every file Python could import from a package folder.

Both the plugin description (sitegen.rerun.plan.plugins: what an implementation's digest covers)
and the own-code check (sitegen.rerun.plan.owncode: whether sitegen's and its peers' files are the
shipped ones) read code this way; here, below both, so neither imports the other (issue 46).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

# What Python imports from a package folder (bytecode caches aside: workers never read them).
IMPORTABLE = ("*.py", "*.pyc", "*.so", "*.pyd")


def importable_files(folder: Path) -> list[Path]:
    """Every file Python could import from ``folder``, outside bytecode caches."""
    return sorted(p for pattern in IMPORTABLE for p in folder.rglob(pattern) if "__pycache__" not in p.parts)


def module_file(module: str) -> Path | None:
    """The source file of ``module``, found without executing it or its parent packages."""
    parts = module.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])  # a top-level lookup imports nothing
    except (ImportError, ValueError):
        return None
    for k in range(1, len(parts)):
        if spec is None or not spec.submodule_search_locations:
            return None
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:k + 1]), list(spec.submodule_search_locations))
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)
