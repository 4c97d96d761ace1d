"""Links in a registry: one that stays inside is an ordinary input, one that leads out is read
only with --allow-outside-links, and one that is no input at all (even to /proc/self/pagemap
or the root folder) never hangs a build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hostile import registry


def _sitegen(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    # A timeout, so a hang fails the test instead of stalling the suite.
    return subprocess.run([sys.executable, "-m", "sitegen", *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def _build(tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    return _sitegen("build", "--records", str(registry(tmp)), "--out", str(tmp / "site"), "--no-search", *extra, cwd=tmp)


def test_a_page_linked_out_is_published_only_when_allowed(tmp_path):
    root = registry(tmp_path)
    outside = tmp_path / "shared-docs" / "about.md"
    outside.parent.mkdir()
    outside.write_text("# About us\n\nWritten outside the registry.\n")
    (root / "pages").mkdir()
    (root / "pages" / "about.md").symlink_to(outside)

    refused = _build(tmp_path)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.splitlines()[0] == (f"{root / 'pages' / 'about.md'}: $: is a link to {outside}, "
                                              "outside the registry; pass --allow-outside-links to read it")
    assert not (tmp_path / "site").exists()

    allowed = _build(tmp_path, "--allow-outside-links")
    assert allowed.returncode == 0, allowed.stderr
    assert "Written outside the registry." in (tmp_path / "site" / "pages" / "about" / "index.html").read_text()
    # The setting is the command's own: the next command without it refuses again.
    assert _sitegen("validate", str(root), cwd=tmp_path).returncode == 0  # the manifests, not the pages
    assert _build(tmp_path).returncode == 1


def test_links_that_stay_inside_the_registry_are_read(tmp_path):
    root = registry(tmp_path)
    (root / "docs").mkdir()
    (root / "docs" / "about.md").write_text("# About\n\nKept in docs/.\n")
    (root / "pages").mkdir()
    (root / "pages" / "about.md").symlink_to(Path("..") / "docs" / "about.md")
    result = _build(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Kept in docs/." in (tmp_path / "site" / "pages" / "about" / "index.html").read_text()


def test_links_that_are_no_input_never_hang_a_build(tmp_path):
    root = registry(tmp_path)
    (root / "notes.txt").symlink_to("/proc/self/pagemap")
    (root / "everything").symlink_to("/")
    for extra in ((), ("--allow-outside-links",)):
        if extra:
            (root / "everything").unlink()  # walked when allowed: the whole machine
        result = _build(tmp_path, *extra)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr


def test_rerun_reads_the_registry_settings_as_every_input(tmp_path):
    """rerun takes the registry's repository URL from sitegen.toml: a FIFO there must not hang it,
    and a link out of the registry must not lend it another registry's URL."""
    import os

    root = registry(tmp_path)
    elsewhere = tmp_path / "other.toml"
    elsewhere.write_text('[site]\nrepository_url = "https://example.org/not-this-registry"\n')
    probe = "import sys; from pathlib import Path; from sitegen.core.revision import repository_url; print(repository_url(Path(sys.argv[1])))"
    (root / "sitegen.toml").unlink()
    (root / "sitegen.toml").symlink_to(elsewhere)
    assert subprocess.run([sys.executable, "-c", probe, str(root)], capture_output=True, text=True, timeout=60).stdout == "None\n"
    (root / "sitegen.toml").unlink()
    os.mkfifo(root / "sitegen.toml")
    assert subprocess.run([sys.executable, "-c", probe, str(root)], capture_output=True, text=True, timeout=60).stdout == "None\n"
