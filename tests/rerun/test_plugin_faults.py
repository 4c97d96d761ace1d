"""An operation or implementation plugin at fault is one line naming it and the fault, exit 1
(issue 47.5): a constructor that needs an argument or raises, a class without interpret_axes or
whose sweep lacks an axis, and an --impl file nested past Python's parser were tracebacks; a
module that calls sys.exit(3) at import ended sitegen with 3 and no message, and one that raises
KeyboardInterrupt printed a bare "Aborted!"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PLUGINS = Path(__file__).resolve().parent / "plugins"
BASE = "from sqdist import SquaredDistance\nfrom sitegen.operations.base import Operation\n\n"

# module source, --operation, --impl (or None), what the one line must say after the target
CASES = {
    "constructor needs an argument": (
        BASE + "class Op(SquaredDistance):\n    def __init__(self, scale):\n        self.scale = scale\n",
        "faulty:Op", None, "faulty:Op: cannot make one with Op(): TypeError: "),
    "constructor raises": (
        BASE + "class Op(SquaredDistance):\n    def __init__(self):\n        raise RuntimeError('no config file')\n",
        "faulty:Op", None, "faulty:Op: cannot make one with Op(): RuntimeError: no config file"),
    "no interpret_axes": (
        BASE + "class Op(Operation):\n" + "".join(
            f"    {attr} = SquaredDistance.{attr}\n" for attr in ("name", "family", "definition", "axes", "default_axes",
                                                             "tolerances", "reference_name", "peers")),
        "faulty:Op", None, "faulty:Op: lacks interpret_axes (Operation's class attributes without a default)"),
    "sweep lacks an axis": (
        BASE + "class Op(SquaredDistance):\n    interpret_axes = {'rows': (8,)}\n",
        "faulty:Op", None, "faulty:Op: interpret_axes has no cols (its axes: rows, cols)"),
    "sys.exit(3) at import": ("import sys\nsys.exit(3)\n", "faulty:Op", None,
                              "cannot import faulty:Op: its module called sys.exit(3)"),
    "KeyboardInterrupt at import": ("raise KeyboardInterrupt\n", "faulty:Op", None,
                                    "cannot import faulty:Op: KeyboardInterrupt"),
    "impl file nested too deeply": (
        "from sitegen.operations.base import Implementation\n\nclass Deep(Implementation):\n"
        "    operation = 'test-sqdist'\n\nDEPTH = " + "+".join(["1"] * 3000) + "\n",
        "sqdist:SquaredDistance", "faulty:Deep", "Deep (faulty:Deep): "),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_plugin_at_fault_is_one_line_naming_it_and_exit_1(tmp_path, case):
    source, operation, impl, expected = CASES[case]
    (tmp_path / "faulty.py").write_text(source)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(PLUGINS), os.environ.get("PYTHONPATH", "")]))
    out = tmp_path / "records"
    args = [sys.executable, "-m", "sitegen", "rerun", "--interpret", "--operation", operation, "--dtype", "fp32",
            "--pass", "full", "--processes", "1", "--out", str(out), *(["--impl", impl] if impl else [])]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    lines = [line for line in proc.stderr.splitlines() if not line.endswith(" problem(s) found.")]
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert len(lines) == 1 and expected in lines[0], proc.stderr[-2000:]
    assert lines[0].startswith(("--operation: $: ", "--impl: $: "))
    if impl:
        assert str(tmp_path / "faulty.py") in lines[0] and "nested too deeply" in lines[0]
    assert not out.exists()
