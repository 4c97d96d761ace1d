"""Opening a registry through its build state: files whose bytes are unchanged since they were last
read come from the store, the rest are read by worker processes; every check still runs on all."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from sitegen.registry.folder import REFERENCES, Registry, open_registry
from sitegen.state.store import BuildState, open_state


def open_cached(root: Path, *, check_lock_file: bool = True, require_lock: bool = False, cached: bool = False,
                known: dict[str, str] | None = None, jobs: int = 1, state: BuildState | None = None) -> Registry:
    """sitegen.registry.folder.open_registry, with documents taken from the build state.

    ``cached``: documents are sitegen.state.summaries Summaries (kind, name, digest,
    references); enough for lock, verify and attest (which reads its run whole), never for a
    build. Folders the state has never seen are loaded by ``jobs`` processes.

    ``known``: each file's sha256 (relative path → hex, as sitegen.site.engine.fingerprint reads
    them); whole documents are taken from the build state (sitegen.state.cachedload) where a
    file's bytes are unchanged since it was last loaded, the rest by ``jobs`` processes.

    ``state``: the command's open build state; without one, the registry's is opened for this call.
    Without ``cached`` or ``known`` this is open_registry itself.
    """
    if not cached and known is None:
        return open_registry(root, check_lock_file=check_lock_file, require_lock=require_lock)

    def load(folder: Path):
        with nullcontext(state) if state is not None else open_state(folder) as opened:
            if cached:
                from sitegen.state.summaries import load_summaries

                return load_summaries(folder, REFERENCES, opened, jobs)
            from sitegen.state.cachedload import load_cached

            return load_cached(folder, known, opened, jobs)

    return open_registry(root, check_lock_file=check_lock_file, require_lock=require_lock, load=load)
