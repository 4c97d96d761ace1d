"""A name in a message never splits the message (issue 47.7): a registry in a folder whose name
holds a line break gave one problem over two lines; names are printed with their control
characters escaped, so each problem is one line a reader (or grep) can take whole."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from hostile import FIXTURE, RUN


def test_a_folder_name_with_a_line_break_gives_one_problem_on_one_line(tmp_path):
    root = tmp_path / "rec\nords\r\u2028x"
    shutil.copytree(FIXTURE, root)
    run = root / "runs" / f"{RUN}.json"
    doc = json.loads(run.read_text())
    doc["spec"]["surprise"] = 1
    run.write_text(json.dumps(doc))
    for args in (["validate", str(root)], ["verify", str(root)]):
        proc = subprocess.run([sys.executable, "-m", "sitegen", *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1
        lines = proc.stderr.splitlines()
        assert lines == [f"{tmp_path}/rec\\nords\\r\\u2028x/runs/{RUN}.json: $.spec.surprise: unknown field",
                         "1 problem(s) found."], proc.stderr
