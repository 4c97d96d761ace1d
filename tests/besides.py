"""What a build leaves beside --out: the site and its standby (sitegen.site.engine.standby), nothing else."""

from __future__ import annotations

import re
from pathlib import Path

_STANDBY = re.compile(r"^\.(.+)\.standby-[0-9a-f]{8}$")


def beside(folder: Path) -> list[str]:
    """The names in ``folder``, sorted, each standby shown as ``.NAME.standby-*``."""
    return sorted(_STANDBY.sub(r".\1.standby-*", p.name) for p in folder.iterdir())


def standby_of(out: Path) -> Path | None:
    """The standby folder of the site ``out``, if there is one."""
    found = [p for p in out.parent.iterdir() if _STANDBY.match(p.name) and p.name.startswith(f".{out.name}.standby-")]
    assert len(found) <= 1, found
    return found[0] if found else None
