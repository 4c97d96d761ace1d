"""Pin each retired [[trust]] key of a registry to the runs it signed (issue 43, item 6).

A retired key's private half may still exist somewhere; its validity window alone would let
whoever kept it sign a new run dated inside the window. Pinned, the entry vouches for the runs
listed and no others. Run it when a key retires (its entry has valid-before), then review the
diff of sitegen.toml and commit it:

    python benchmarks/pin_retired_keys.py records

Each retired entry without ``runs`` gets ``runs = [...]``: the digests of the runs of the registry
whose signature is by that key and valid now. Entries that already pin runs are left alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

from sitegen.registry.config import CONFIG_NAME, load_config
from sitegen.registry.folder import open_registry
from sitegen.core.signing import VALID, check_run, trusted_keys


def pins(root: Path) -> dict[str, list[str]]:
    """{entry name: sorted run digests it validly signed} for each retired entry that pins nothing yet."""
    config = load_config(root)
    retired = [e for e in config.trust if e.valid_before is not None and e.runs is None]
    registry = open_registry(root)
    out: dict[str, list[str]] = {e.name: [] for e in retired}
    for key in trusted_keys(retired):
        for run in registry.of_kind("BenchmarkRun"):
            if run.signature and check_run(run, registry.by_digest, [key]).status == VALID:
                out[key.name].append(run.digest)
    return {name: sorted(digests) for name, digests in out.items()}


def insert(text: str, found: dict[str, list[str]]) -> str:
    """``text`` of a sitegen.toml with a ``runs`` array after the last key line of each named [[trust]] table."""
    lines = text.splitlines(keepends=True)
    after: dict[int, str] = {}  # line index → entry name whose array follows that line
    current, last = None, None
    for i, line in enumerate(lines + ["[end]\n"]):
        stripped = line.strip()
        if stripped.startswith("["):
            if current is not None:
                after[last] = current
            current = last = None
        elif stripped.startswith("name = "):
            name = stripped.removeprefix("name = ").strip().strip('"')
            current, last = (name if name in found else None), i
        elif stripped and not stripped.startswith("#") and current is not None:
            last = i
    out = []
    for i, line in enumerate(lines):
        out.append(line if line.endswith("\n") else line + "\n")
        if i in after:
            body = "".join(f'    "{d}",\n' for d in found[after[i]])
            out.append(f"# The runs it signed, and no others: a kept private half can sign nothing new.\nruns = [\n{body}]\n")
    return "".join(out)


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else "records")
    found = pins(root)
    path = root / CONFIG_NAME
    path.write_text(insert(path.read_text(), found))
    for name, digests in found.items():
        print(f"{name}: {len(digests)} run(s) pinned", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
