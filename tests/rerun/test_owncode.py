"""Trusted code is known by its bytes (issue 43 item 3): a module dropped into an installed sitegen,
or a fork of Liger earlier on the path under Liger's names, is not sitegen's or Liger's code,
whatever its module name; a rerun that would trust it is refused in one line before any work.
And a worker runs the .py its record digests, never a bytecode cache beside it."""

from __future__ import annotations

import json
import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ONE_CASE = ["--tokens", "4", "--vocab", "64", "--dtype", "fp32", "--pass", "forward", "--processes", "1"]


def sitegen_cli(*args, env_path: list[Path], cwd: Path) -> subprocess.CompletedProcess:
    # PYTHONSAFEPATH: nothing is imported from the working folder.
    env = dict(os.environ, PYTHONSAFEPATH="1",
               PYTHONPATH=os.pathsep.join([*map(str, env_path), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return subprocess.run([sys.executable, "-m", "sitegen", *map(str, args)], capture_output=True, text=True, env=env,
                          cwd=cwd)


@pytest.fixture(scope="module")
def installed_sitegen(tmp_path_factory) -> Path:
    """sitegen installed from a wheel of this tree into a folder of its own (RECORD with hashes)."""
    tmp = tmp_path_factory.mktemp("install")
    copy = tmp / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for part in ("sitegen", "kernels", "templates"):
        shutil.copytree(REPO / part, copy / part, ignore=ignore)
    for part in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / part, copy / part)
    target = tmp / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                          "--no-compile", "--target", str(target), str(copy)], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return target


def test_a_module_dropped_into_sitegen_is_not_sitegen_s_code(installed_sitegen, tmp_path):
    pytest.importorskip("torch")
    dropped = installed_sitegen / "sitegen" / "operations" / "dropped.py"
    dropped.write_text("from sitegen.operations.base import Implementation\n\n\n"
                       "class K(Implementation):\n    operation = 'jsd'\n    needs = ('torch',)\n")
    try:
        done = sitegen_cli("rerun", "--impl", "sitegen.operations.dropped:K", *ONE_CASE, env_path=[installed_sitegen],
                           cwd=tmp_path)
    finally:
        dropped.unlink()
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"--impl: $: K (sitegen.operations.dropped:K) is not the code sitegen ships: {dropped} is not one of "
        "sitegen 0.1.0's files; rerun from an installed release or a clean checkout, or measure it as outside code "
        "from a package of its own (--impl pkg.module:Name)"), done.stderr
    # The same install, untouched: sitegen's own peer passes the check and meets the next refusal
    # (this host has no GPU), so it is the bytes that were refused, not the module's name.
    honest = sitegen_cli("rerun", "--impl", "sitegen", *ONE_CASE, env_path=[installed_sitegen], cwd=tmp_path)
    if honest.returncode == 1:
        assert "is not the code sitegen ships" not in honest.stderr, honest.stderr


def test_a_fork_of_liger_under_liger_s_names_is_not_liger(installed_sitegen, tmp_path):
    pytest.importorskip("liger_kernel")
    fork = tmp_path / "fork"
    (fork / "liger_kernel" / "transformers").mkdir(parents=True)
    (fork / "liger_kernel" / "__init__.py").write_text("")
    (fork / "liger_kernel" / "transformers" / "__init__.py").write_text("from torch.nn import Module as LigerJSD\n")
    done = sitegen_cli("rerun", "--impl", "liger", *ONE_CASE, env_path=[fork, installed_sitegen], cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("--impl: $: liger (sitegen.operations.jsd:LigerJSDPeer) is not the code sitegen ships: "
                                  f"liger_kernel imports from {fork / 'liger_kernel'}, not from the files of "), \
        done.stderr


CHEAT = """
import pathlib
pathlib.Path({marker!r}).write_text("the .pyc ran")
from sitegen.operations.jsd import TorchJSD as K
"""


def test_a_worker_runs_the_source_not_an_unchecked_pyc_beside_it(tmp_path):
    for module in ("torch", "triton", "numpy"):
        pytest.importorskip(module)
    from sitegen.rerun.plan import plugins

    pkg = tmp_path / "pkgs" / "pycswap"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    honest = pkg / "kernel.py"
    honest.write_text("from sitegen.operations.jsd import TorchJSD\n\n\nclass K(TorchJSD):\n    operation = 'jsd'\n")
    marker = tmp_path / "ran"
    cheat = tmp_path / "cheat.py"
    cheat.write_text(CHEAT.format(marker=str(marker)))
    # Unchecked hash: Python loads it without looking at kernel.py at all.
    pyc = pkg / "__pycache__" / f"kernel.{sys.implementation.cache_tag}.pyc"
    py_compile.compile(str(cheat), cfile=str(pyc), dfile=str(honest), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    out = tmp_path / "records"
    done = sitegen_cli("rerun", "--interpret", "--impl", "pycswap.kernel:K", *ONE_CASE, "--out", out, "--json",
                       env_path=[tmp_path / "pkgs"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), "the worker ran the cached bytecode, not the source its record names"
    [row] = json.loads(done.stdout)["runs"]
    impl = next(json.loads(p.read_text()) for p in (out / "implementations").glob("*.json"))
    assert row["impl"] == "K"
    assert impl["spec"]["projectRevision"]["sourceDigest"] == plugins.digest_files((pkg / "__init__.py", honest))


def test_a_sourceless_module_in_an_implementation_s_package_is_in_its_digest(tmp_path, monkeypatch):
    from sitegen.rerun.plan import plugins

    pkg = tmp_path / "withpyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("class K:\n    operation = 'jsd'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = plugins.describe("k", "withpyc:K").source_digest
    helper = tmp_path / "helper.py"
    helper.write_text("X = 1\n")
    # helper.pyc beside __init__.py, with no helper.py: `import withpyc.helper` runs it.
    py_compile.compile(str(helper), cfile=str(pkg / "helper.pyc"), doraise=True)
    ref = plugins.describe("k", "withpyc:K")
    assert pkg / "helper.pyc" in ref.files and ref.source_digest != before


def test_torch_is_hashed_once_however_many_implementations_need_it(monkeypatch):
    # Every shipped peer needs torch (thousands of files, about 3 GB with CUDA): a rerun of JSD's
    # three shipped implementations must read them once, not once per implementation.
    pytest.importorskip("torch")
    from sitegen.rerun.plan import opfacts, owncode, selection

    refs = selection.choose(opfacts.load("jsd"), (), interpret=False).impls
    # The trust check reads torch for every shipped implementation: two or more of them is the case here.
    assert len([ref for ref in refs if ref.internal]) >= 2
    listed = []
    real = owncode.importable_files
    monkeypatch.setattr(owncode, "importable_files", lambda folder: listed.append(folder.name) or real(folder))
    owncode.trust_problems(refs, interpret=False)
    assert listed.count("torch") == 1, listed
