"""`sitegen build` and `sitegen attest` as a user runs them."""

from __future__ import annotations

import json

from conftest import FIXTURE, SEED_RUN
from besides import beside
from helpers import invoke as _invoke
from sitecheck import catalog_runs
from sitegen.site.engine.marker import MARKER


def test_help_texts():
    build = _invoke("build", "--help")
    assert build.exit_code == 0
    for option in ("--records", "--out", "--base-url", "--exclude-dry-runs"):
        assert option in build.output
    attest = _invoke("attest", "-h")
    assert attest.exit_code == 0
    assert "reproduced|could_not_reproduce|environment_note|regression_observed" in attest.output
    assert "build" in _invoke("--help").output and "attest" in _invoke("--help").output


def test_build_reports_progress_and_writes_the_site(registry_copy, tmp_path):
    out = tmp_path / "site"
    result = _invoke("build", "--records", str(registry_copy), "--out", str(out), "--base-url", "https://mirror.example.net/kb/")
    assert result.exit_code == 0, result.output
    assert "built 8 run page(s)" in result.output
    page = (out / "runs" / SEED_RUN / "index.html").read_text()
    assert f"https://mirror.example.net/kb/runs/{SEED_RUN}/" in page


def test_exclude_dry_runs(registry_copy, tmp_path):
    out = tmp_path / "site"
    assert _invoke("build", "--records", str(registry_copy), "--out", str(out), "--exclude-dry-runs").exit_code == 0
    names = [r["name"] for r in catalog_runs(out)]
    assert len(names) == 7 and not any("dry" in n for n in names)


def test_bad_record_is_one_line_per_problem_and_exit_1(registry_copy, tmp_path):
    run = registry_copy / "runs" / f"{SEED_RUN}.json"
    doc = json.loads(run.read_text())
    doc["spec"]["status"] = "great"
    doc["spec"]["colour"] = "green"
    run.write_text(json.dumps(doc))
    result = _invoke("build", "--records", str(registry_copy), "--out", str(tmp_path / "site"))
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[-1] == "2 problem(s) found."
    assert all(line.startswith(str(run) + ": $.spec.") for line in lines[:-1])
    assert "Traceback" not in result.output
    assert not (tmp_path / "site").exists()


def test_missing_registry_and_bad_base_url(tmp_path):
    missing = _invoke("build", "--records", str(tmp_path / "nope"), "--out", str(tmp_path / "site"))
    assert missing.exit_code == 1 and missing.output.strip().splitlines()[0].endswith("no such registry folder")
    bad = _invoke("build", "--base-url", "ftp://x", "--out", str(tmp_path / "site"))
    assert bad.exit_code == 1 and "--base-url: $: must be an absolute http(s) URL" in bad.output


def test_foreign_output_folder_is_refused(registry_copy, tmp_path):
    out = tmp_path / "docs"
    out.mkdir()
    (out / "index.html").write_text("hand written")
    result = _invoke("build", "--records", str(registry_copy), "--out", str(out))
    assert result.exit_code == 1
    assert "was not built by sitegen" in result.output.splitlines()[0]
    assert (out / "index.html").read_text() == "hand written"


def test_a_build_in_its_own_process_reports_and_exits_as_usual(tmp_path):
    # As its own process, a build ends without freeing its registry object by object
    # (cli.Group.main): its output must still be complete and its exit code right.
    import subprocess
    import sys

    out = tmp_path / "site"
    command = [sys.executable, "-m", "sitegen", "build", "--records", str(FIXTURE), "--out", str(out), "--no-search", "--quiet"]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    assert built.stderr.startswith("built ") and built.stderr.endswith("\n")
    # Beside the site only its standby (the copy the next build updates), no staging folder left.
    assert (out / MARKER).is_file() and beside(tmp_path) == [".site.standby-*", "site"]
    again = subprocess.run(command, capture_output=True, text=True)
    assert again.returncode == 0 and "is up to date" in again.stderr
    refused = subprocess.run([*command[:4], "--records", str(tmp_path / "none"), "--out", str(out)], capture_output=True, text=True)
    assert refused.returncode == 1 and "no such registry folder" in refused.stderr


def test_a_build_in_a_checkout_leaves_nothing_git_shows(tmp_path):
    """`sitegen build --out site` in a clone of this repository: the standby copy and staging
    folders it keeps beside site/ (77,000 hard links on the bundled site) stay out of `git status`."""
    import shutil
    import subprocess
    from pathlib import Path

    checkout = tmp_path / "checkout"
    shutil.copytree(FIXTURE, checkout / "records")
    shutil.copy(Path(__file__).resolve().parents[2] / ".gitignore", checkout / ".gitignore")
    git = lambda *args: subprocess.run(["git", "-C", str(checkout), *args], check=True, capture_output=True, text=True,  # noqa: E731
                                       env={"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null", "PATH": "/usr/bin:/bin",
                                            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                                            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}).stdout
    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "registry")
    for _ in range(2):  # the second build swaps the first site out as the standby
        assert _invoke("build", "--records", str(checkout / "records"), "--out", str(checkout / "site"), "--no-search").exit_code == 0
    assert [p.name.split("-")[0] for p in checkout.iterdir() if p.name.startswith(".site.")] == [".site.standby"]
    assert git("status", "--porcelain", "--untracked-files=all") == ""
