"""Open reruns (issue 28): operations and implementations sitegen did not write, found through
entry points or pkg.module:Name, measured under --interpret, and identified in their records."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from sitegen.core.gitread import clean_commit
from sitegen.operations import load
from sitegen.core.problems import InputError
from sitegen.rerun.plan import plugins

REPO = Path(__file__).resolve().parents[2]
PLUGINS = Path(__file__).resolve().parent / "plugins"


def needs_rerun_stack():
    for module in ("torch", "triton", "numpy"):
        pytest.importorskip(module, reason="rerun measures with torch (numpy: Triton's interpreter)")


def text_of(html: str) -> str:
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# -- implementations are read, never run, by the process that writes the records ----------

def test_an_implementation_is_identified_without_running_its_code(tmp_path, monkeypatch):
    pkg = tmp_path / "untrusted_impl"
    pkg.mkdir()
    boom = tmp_path / "ran"
    side_effect = f"open({str(boom)!r}, 'w').write('x')\n"
    (pkg / "__init__.py").write_text(side_effect)
    (pkg / "kernel.py").write_text(side_effect + "class K:\n    operation = 'jsd'\n    needs = ('torch',)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ref = plugins.describe("k", "untrusted_impl.kernel:K")
    assert (ref.operation, ref.needs) == ("jsd", ("torch",))
    assert not boom.exists(), "the parent ran the implementation's code"
    assert "untrusted_impl" not in sys.modules
    # The digest covers every file of the package: a change anywhere reads as another revision.
    before = ref.source_digest
    (pkg / "helper.py").write_text("X = 1\n")
    assert plugins.describe("k", "untrusted_impl.kernel:K").source_digest not in (before, None)


def test_an_implementation_of_another_operation_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "other_op.py").write_text("class K:\n    operation = 'rms-norm'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(InputError) as err:
        plugins.resolve(load("jsd"), ("other_op:K",))
    [problem] = err.value.problems
    assert problem.message == "other_op:K implements 'rms-norm', not jsd"


def test_unknown_operation_and_implementation_are_one_line_each():
    with pytest.raises(InputError) as err:
        load("no-such-op")
    assert "unknown operation 'no-such-op'" in err.value.problems[0].message and "jsd" in err.value.problems[0].message
    with pytest.raises(InputError) as err:
        plugins.resolve(load("jsd"), ("nope",))
    assert "unknown implementation 'nope' of jsd" in err.value.problems[0].message


def test_the_cli_refuses_an_axis_the_operation_lacks(tmp_path):
    from click.testing import CliRunner

    from sitegen.cli.main import main

    result = CliRunner().invoke(main, ["rerun", "--interpret", "--axis", "hidden=8", "--out", str(tmp_path / "o")])
    assert result.exit_code == 1 and "jsd has no axis hidden; its axes: tokens, vocab" in result.output
    assert not (tmp_path / "o").exists()


# -- Done-when 1: the example package, installed into a fresh environment ------------------

def test_the_example_package_installs_and_reruns_through_its_entry_point(tmp_path):
    needs_rerun_stack()
    venv = tmp_path / "venv"
    # --without-pip, and a .pth naming the test environment's site-packages: pip, setuptools and
    # sitegen's dependencies come from there (the venv's bundled setuptools cannot build a wheel
    # offline, and --system-site-packages would show the base interpreter's, which may be older).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    own = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    ours = dict.fromkeys((sysconfig.get_path("purelib"), sysconfig.get_path("platlib")))
    Path(own, "test-environment.pth").write_text("".join(f"{p}\n" for p in ours))
    # sitegen and the example as a user installs them, with pip and no network, each from a copy
    # (an install writes build metadata beside the sources).
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    sitegen_copy, example = tmp_path / "sitegen-checkout", tmp_path / "jsd-torch"
    for part in ("sitegen", "kernels", "templates"):
        shutil.copytree(REPO / part, sitegen_copy / part, ignore=ignore)
    for part in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / part, sitegen_copy / part)
    shutil.copytree(REPO / "examples" / "jsd-torch", example, ignore=ignore)
    for project in (sitegen_copy, example):
        pip = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                              "--no-index", "-e", str(project)], capture_output=True, text=True)
        assert pip.returncode == 0, pip.stdout + pip.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    out = tmp_path / "records"
    rerun = subprocess.run([str(python), "-m", "sitegen", "rerun", "--interpret", "--impl", "example-jsd-torch",
                            "--tokens", "8", "--dtype", "fp32", "--pass", "full", "--processes", "1",
                            "--out", str(out), "--json"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    [row] = json.loads(rerun.stdout)["runs"]
    assert (row["impl"], row["status"]) == ("example-jsd-torch", "passed")
    run = json.loads((out / row["file"]).read_text())
    impl = next(json.loads(p.read_text()) for p in (out / "implementations").glob("*.json")
                if json.loads(p.read_text())["spec"]["name"] == "example-jsd-torch")
    assert run["spec"]["implementationDigest"] == _digest(impl)
    revision = impl["spec"]["projectRevision"]
    expected = plugins.digest_files(tuple(sorted((example / "sitegen_example_jsd").glob("*.py"))))
    assert (revision["project"], revision["version"], revision["sourceDigest"]) == ("sitegen-example-jsd", "0.1.0", expected)
    assert impl["spec"]["callable"] == {"module": "sitegen_example_jsd", "name": "PlainTorchJSD"}
    for command in (["validate", str(out)], ["verify", str(out)],
                    ["build", "--records", str(out), "--out", str(tmp_path / "site"), "--quiet", "--no-search"]):
        done = subprocess.run([str(python), "-m", "sitegen", *command], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert done.returncode == 0, (command, done.stderr)
    page = next((tmp_path / "site" / "implementations").glob(f"{impl['metadata']['name']}*/index.html"), None) \
        or next((tmp_path / "site" / "implementations").rglob(f"{impl['metadata']['name']}*.html"))
    shown = text_of(page.read_text())
    assert "sitegen-example-jsd" in shown and "0.1.0" in shown and expected.removeprefix("sha256:")[:12] in shown


def _digest(doc):
    from sitegen.core.digest import document_digest

    return document_digest(doc)


# -- Done-when 2: an operation defined only in the tests, two implementations -------------

def test_an_operation_from_the_tests_reruns_and_its_page_lists_both_in_one_cohort(tmp_path):
    needs_rerun_stack()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PLUGINS), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    out = tmp_path / "records"
    rerun = subprocess.run([sys.executable, "-m", "sitegen", "rerun", "--interpret", "--operation", "sqdist:SquaredDistance",
                            "--axis", "rows=16", "--axis", "cols=64", "--dtype", "fp32", "--pass", "full",
                            "--processes", "1", "--out", str(out), "--json"], capture_output=True, text=True, env=env)
    assert rerun.returncode == 0, rerun.stderr
    rows = json.loads(rerun.stdout)["runs"]
    assert {(r["impl"], r["status"], r["operation"]) for r in rows} == {
        ("eager", "passed", "test-sqdist"), ("looped", "passed", "test-sqdist")}
    fast, slow = sorted(rows, key=lambda r: r["medianNs"])
    # The cohort line lists them by median (the row-by-row loop is the slower one), and ranks no dry run.
    assert (fast["impl"], slow["impl"]) == ("eager", "looped")
    assert f"rows 16 cols 64 fp32 full: eager {fast['medianNs'] / 1e6:.4f} ms | looped {slow['medianNs'] / 1e6:.4f} ms (dry run: not ranked)" in rerun.stderr
    assert "(#" not in rerun.stderr
    op = json.loads((out / "operations" / "test-sqdist.json").read_text())
    assert op["spec"]["semantics"]["expression"].startswith("loss = mean over rows and cols")
    built = subprocess.run([sys.executable, "-m", "sitegen", "build", "--records", str(out), "--out", str(tmp_path / "site"),
                            "--quiet", "--no-search"], capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stderr
    page = text_of((tmp_path / "site" / "operations" / "test-sqdist" / "index.html").read_text())
    # One cohort (same workload, pass, protocol family, host), eager listed before looped.
    # A CPU rehearsal is never ranked on the site: each says why.
    assert page.count("rows = 16 · cols = 64 · fp32 · full") >= 1
    at_eager, at_looped = page.find(" eager ("), page.find(" looped (")
    assert -1 < at_eager < at_looped, page[:2000]
    assert page.count("not ranked: dry run (CPU rehearsal)") >= 2


def _git(folder, *args):
    import subprocess

    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)


def test_identifying_a_checkout_runs_none_of_its_own_git_config(tmp_path):
    """A checkout's .git/config is the implementation author's: its fsmonitor, hooks and clean
    filters must not run in the process that plans, judges and writes the records."""
    repo = tmp_path / "impl"
    (repo / "evil_impl").mkdir(parents=True)
    (repo / "evil_impl" / "__init__.py").write_text("class K:\n    operation = 'jsd'\n")
    marker = tmp_path / "ran"
    script = tmp_path / "hook.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    script.chmod(0o755)
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "k")
    (repo / ".gitattributes").write_text("*.py filter=evil\n")
    _git(repo, "add", ".gitattributes")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "attrs")
    for key, value in (("core.fsmonitor", str(script)), ("filter.evil.clean", str(script)),
                       ("filter.evil.smudge", str(script)), ("core.hooksPath", str(tmp_path))):
        _git(repo, "config", key, value)
    (repo / "evil_impl" / "__init__.py").touch()  # a changed stat: git status would re-read it through the filter
    head = clean_commit(repo / "evil_impl")
    assert not marker.exists(), marker.read_text()
    assert head is not None and len(head) == 40
    (repo / "evil_impl" / "__init__.py").write_text("class K:\n    operation = 'jsd'  # edited\n")
    assert clean_commit(repo / "evil_impl") is None
    (repo / "evil_impl" / "__init__.py").write_text("class K:\n    operation = 'jsd'\n")
    (repo / "evil_impl" / "new.py").write_text("")
    assert clean_commit(repo / "evil_impl") is None
    assert not marker.exists()
