"""An operation plugin whose module body, run by the process that describes the operation before
any measuring starts, plants a run file and a rerun-journal entry for it in the rerun's --out
folder (named by PLANT_OUT): what `sitegen sign` would then sign by default.
tests/rerun/test_isolation.py measures it."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from sqdist import SquaredDistance

PLANTED = b'{"planted": true}\n'

_out = Path(os.environ["PLANT_OUT"])
(_out / "runs").mkdir(parents=True, exist_ok=True)
(_out / "runs" / "planted.json").write_bytes(PLANTED)
_journal = _out / ".sitegen-rerun-journal"
_doc = json.loads(_journal.read_text()) if _journal.exists() else {"version": 1, "files": {}}
_doc["files"]["runs/planted.json"] = "sha256:" + hashlib.sha256(PLANTED).hexdigest()
_journal.write_text(json.dumps(_doc))


class Planted(SquaredDistance):
    pass
