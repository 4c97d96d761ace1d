"""What docs/registries.md promises about putting a built site in place (sitegen.site.engine.swap).

- On Linux the new site is swapped with the old one in one renameat2(RENAME_EXCHANGE): swap_in
  takes that path, and `--out` names the old site or the new one at every instant.
- Where the exchange is missing (or the file system refuses it), two renames do it.
- The old site is handed back to the caller, not deleted: the build keeps it as the standby
  (sitegen.site.engine.standby) or removes it. Only files a marker lists are ever deleted; a file
  sitegen did not write, or one reached through a link, is left alone.
- A site holding a file sitegen did not write is refused before anything is staged or swapped.
- The next build removes every `.X.building-*`, `.X.previous-*` and `.X.starting-*` folder no
  running build holds, and puts back a site lost between the two renames.
- Every folder of a site is rwxr-xr-x whatever the umask.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import stat
import sys

import pytest

from sitegen.site.engine import swap
from sitegen.site.engine.marker import MARKER

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")


def _site(folder, files: dict[str, str], listed: list[str] | None = None):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    (folder / MARKER).write_text(json.dumps({"files": sorted(files) if listed is None else listed}))
    return folder


def _tree(folder) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file() and p.name != MARKER}


# --- the exchange ----------------------------------------------------------------------------

@LINUX
def test_on_linux_swap_in_exchanges_the_sites_in_one_call(tmp_path, monkeypatch):
    out = _site(tmp_path / "site", {"index.html": "old"})
    staged = _site(tmp_path / ".site.building-x", {"index.html": "new"})
    calls, real = [], swap.exchange

    def exchange(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(swap, "exchange", exchange)
    monkeypatch.setattr(os, "rename", lambda *a: pytest.fail(f"renamed {a} instead of exchanging"))
    kept = swap.swap_in(staged, out)
    assert calls == [(staged, out)]
    assert _tree(out) == {"index.html": "new"}
    # The previous site, exchanged into staged, is handed back whole.
    assert kept == staged and _tree(staged) == {"index.html": "old"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.building-x", "site"]


@LINUX
def test_the_exchange_is_renameat2_with_rename_exchange():
    assert swap._RENAMEAT2 is not None
    assert swap._RENAME_EXCHANGE == 2 and swap._AT_FDCWD == -100


@LINUX
@pytest.mark.parametrize("code", [errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP])
def test_a_file_system_without_the_exchange_falls_back(tmp_path, monkeypatch, code):
    def refused(*args):
        ctypes.set_errno(code)
        return -1

    monkeypatch.setattr(swap, "_RENAMEAT2", refused)
    assert swap.exchange(tmp_path / "a", tmp_path / "b") is False


@LINUX
def test_any_other_failure_of_the_exchange_is_an_error_naming_the_output(tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(OSError) as caught:
        swap.exchange(tmp_path / "missing", tmp_path / "out")
    assert caught.value.errno == errno.ENOENT and caught.value.filename == str(tmp_path / "out")


def test_without_renameat2_nothing_is_exchanged(tmp_path, monkeypatch):
    monkeypatch.setattr(swap, "_RENAMEAT2", None)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x").write_text("a")
    assert swap.exchange(tmp_path / "a", tmp_path / "b") is False
    assert (tmp_path / "a" / "x").read_text() == "a"


def test_off_linux_there_is_no_renameat2(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert swap._renameat2() is None


# --- two renames, and sites with nothing to swap ---------------------------------------------

def test_two_renames_replace_the_site_where_the_exchange_is_missing(tmp_path, monkeypatch):
    out = _site(tmp_path / "site", {"index.html": "old", "gone.html": "old"})
    staged = _site(tmp_path / ".site.building-x", {"index.html": "new"})
    monkeypatch.setattr(swap, "exchange", lambda a, b: False)
    kept = swap.swap_in(staged, out)
    assert _tree(out) == {"index.html": "new"}
    assert kept == staged and _tree(staged) == {"index.html": "old", "gone.html": "old"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.building-x", "site"]


def test_a_new_output_is_the_staged_site_renamed(tmp_path, monkeypatch):
    monkeypatch.setattr(swap, "exchange", lambda a, b: pytest.fail("nothing to exchange"))
    staged = _site(tmp_path / ".site.building-x", {"index.html": "new"})
    swap.swap_in(staged, tmp_path / "site")
    assert _tree(tmp_path / "site") == {"index.html": "new"} and not staged.exists()


def test_an_empty_output_folder_is_replaced(tmp_path, monkeypatch):
    monkeypatch.setattr(swap, "exchange", lambda a, b: pytest.fail("nothing to exchange"))
    (tmp_path / "site").mkdir()
    staged = _site(tmp_path / ".site.building-x", {"index.html": "new"})
    swap.swap_in(staged, tmp_path / "site")
    assert _tree(tmp_path / "site") == {"index.html": "new"} and not staged.exists()


# --- deleting the previous site --------------------------------------------------------------

def test_only_the_files_the_marker_lists_are_deleted(tmp_path):
    old = _site(tmp_path / "old", {"index.html": "x", "runs/a/index.html": "x", "kept.txt": "mine"},
                listed=["index.html", "runs/a/index.html"])
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "index.html").write_text("not the site's")
    (old / "linked").symlink_to(tmp_path / "elsewhere")
    (old / "file-link.html").symlink_to(tmp_path / "elsewhere" / "index.html")
    swap.remove_own(old, {"linked/index.html", "file-link.html"} | {"index.html", "runs/a/index.html"})
    assert (tmp_path / "elsewhere" / "index.html").read_text() == "not the site's"
    assert sorted(p.name for p in old.iterdir()) == ["file-link.html", "kept.txt", "linked"]


def test_the_marker_is_read_when_no_list_is_given_and_empty_folders_go(tmp_path):
    old = _site(tmp_path / "old", {"index.html": "x", "a/b/c.html": "x"})
    swap.remove_own(old)
    assert not old.exists()


def test_a_folder_without_a_readable_marker_loses_nothing_but_empty_folders(tmp_path):
    old = tmp_path / "old"
    (old / "empty").mkdir(parents=True)
    (old / "data.txt").write_text("mine")
    swap.remove_own(old)
    assert _tree(old) == {"data.txt": "mine"} and not (old / "empty").exists()


# --- leftovers of killed builds --------------------------------------------------------------

def test_leftover_staging_folders_are_removed_and_a_lost_site_put_back(tmp_path):
    out = tmp_path / "site"
    _site(tmp_path / ".site.previous-k1", {"index.html": "old"})
    _site(tmp_path / ".site.building-k2", {"index.html": "half"})
    (tmp_path / ".site.starting-k3").mkdir()
    (tmp_path / ".site.starting-k3" / "x").write_text("unmarked")
    _site(tmp_path / ".other.building-k4", {"index.html": "another output's"})
    swap.clean_leftovers(out)
    assert _tree(out) == {"index.html": "old"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.building-k4", "site"]


def test_a_previous_site_is_not_put_back_over_an_existing_output(tmp_path):
    out = _site(tmp_path / "site", {"index.html": "current"})
    _site(tmp_path / ".site.previous-k1", {"index.html": "old"})
    swap.clean_leftovers(out)
    assert _tree(out) == {"index.html": "current"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_a_previous_folder_without_a_marker_is_no_site_to_put_back(tmp_path):
    (tmp_path / ".site.previous-k1").mkdir()
    (tmp_path / ".site.previous-k1" / "index.html").write_text("half")
    swap.clean_leftovers(tmp_path / "site")
    assert list(tmp_path.iterdir()) == []


def test_a_leftover_with_a_marker_loses_only_its_own_files(tmp_path):
    leftover = _site(tmp_path / ".site.building-k1", {"index.html": "x", "mine.txt": "y"}, listed=["index.html"])
    _site(tmp_path / "site", {"index.html": "current"})
    swap.clean_leftovers(tmp_path / "site")
    assert _tree(leftover) == {"mine.txt": "y"}


def test_a_folder_a_running_build_holds_is_left_alone(tmp_path):
    held, building = swap.new_staging(tmp_path / "site")
    try:
        assert building.name.startswith(".site.building-") and building.parent == tmp_path
        swap.clean_leftovers(tmp_path / "site")
        assert building.is_dir()
        # The folder is held: another build's lock on it would block.
        probe = os.open(building, os.O_RDONLY | os.O_DIRECTORY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(probe)
    finally:
        os.close(held)
    swap.clean_leftovers(tmp_path / "site")
    assert list(tmp_path.iterdir()) == []


def test_a_link_named_like_a_leftover_is_not_followed(tmp_path):
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "index.html").write_text("keep")
    (tmp_path / ".site.building-k1").symlink_to(tmp_path / "precious")
    (tmp_path / ".site.previous-k2").write_text("a file, not a folder")
    swap.clean_leftovers(tmp_path / "site")
    assert (tmp_path / "precious" / "index.html").read_text() == "keep"
    assert (tmp_path / ".site.building-k1").is_symlink() and (tmp_path / ".site.previous-k2").is_file()


def test_an_output_whose_parent_is_missing_has_no_leftovers(tmp_path):
    swap.clean_leftovers(tmp_path / "missing" / "site")


def test_a_staging_folder_that_vanishes_before_it_is_held_is_made_again(tmp_path, monkeypatch):
    real, tries = swap._hold, []

    def vanishing(folder):
        tries.append(folder)
        if len(tries) == 1:
            os.rmdir(folder)
        return real(folder)

    monkeypatch.setattr(swap, "_hold", vanishing)
    held, building = swap.new_staging(tmp_path / "site")
    os.close(held)
    assert len(tries) == 2 and building.is_dir() and sorted(p.name for p in tmp_path.iterdir()) == [building.name]


def test_a_staging_folder_that_never_holds_is_an_error(tmp_path, monkeypatch):
    def vanishing(folder):
        os.rmdir(folder)
        raise FileNotFoundError(folder)

    monkeypatch.setattr(swap, "_hold", vanishing)
    with pytest.raises(OSError) as caught:
        swap.new_staging(tmp_path / "site")
    assert caught.value.errno == errno.EAGAIN


# --- folder modes --------------------------------------------------------------------------------

@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_every_folder_of_a_site_is_rwxr_xr_x_whatever_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        top = tmp_path / "staged"
        (top / "a" / "b").mkdir(parents=True)
        os.chmod(top, 0o700)
        swap.open_folders(top)
        assert os.umask(umask) == umask  # the umask is left as it was
    finally:
        os.umask(old)
    for folder in (top, top / "a", top / "a" / "b"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o755, folder


# --- details a killed or concurrent build relies on ------------------------------------------------

@LINUX
def test_renameat2_is_found_through_libc_and_reports_errors_by_errno(tmp_path, monkeypatch):
    function = swap._renameat2()
    assert function is not None
    monkeypatch.setattr(swap, "_RENAMEAT2", function)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x").write_text("a")
    assert swap.exchange(tmp_path / "a", tmp_path / "b") is True and (tmp_path / "b" / "x").read_text() == "a"
    ctypes.set_errno(0)  # no earlier call's errno to fall back on: the call's own must be read
    with pytest.raises(OSError) as caught:
        swap.exchange(tmp_path / "missing", tmp_path / "b")
    assert caught.value.errno == errno.ENOENT and caught.value.strerror == os.strerror(errno.ENOENT)


def test_in_the_two_rename_gap_the_old_site_sits_beside_the_output_as_previous(tmp_path, monkeypatch):
    out = _site(tmp_path / "site", {"index.html": "old"})
    staged = _site(tmp_path / ".site.building-x", {"index.html": "new"})
    monkeypatch.setattr(swap, "exchange", lambda a, b: False)
    moved, real_rename = [], os.rename

    def rename(src, dst):
        moved.append((os.fspath(src), os.fspath(dst)))
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    swap.swap_in(staged, out)
    (source, parked), *_ = moved
    assert source == str(out)
    assert os.path.dirname(parked) == str(tmp_path) and os.path.basename(parked).startswith(".site.previous-")


def test_held_folders_are_opened_as_folders_and_never_inherited(tmp_path, monkeypatch):
    # A lock held through a descriptor a child process inherits (Pagefind, a worker) would keep
    # a killed build's folder "running" for as long as the child lives.
    _site(tmp_path / ".site.building-k1", {"index.html": "half"})
    flags, real_open = [], os.open

    def recording_open(path, mode, *args, **kwargs):
        if sys._getframe(1).f_globals.get("__name__") == swap.__name__:  # swap's own, not rmtree's or the marker's
            flags.append(mode)
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "open", recording_open)
    held, _ = swap.new_staging(tmp_path / "site")
    os.close(held)
    swap.clean_leftovers(tmp_path / "other")  # nothing of its own
    swap.clean_leftovers(tmp_path / "site")
    assert len(flags) >= 3
    for mode in flags:
        assert mode & os.O_DIRECTORY and mode & os.O_CLOEXEC and mode & os.O_ACCMODE == os.O_RDONLY


def test_a_held_folder_does_not_stop_the_cleanup_of_the_others(tmp_path):
    first = tmp_path / ".site.building-0000"
    first.mkdir()
    fd = os.open(first, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    _site(tmp_path / ".site.building-zzzz", {"index.html": "half"})
    try:
        swap.clean_leftovers(tmp_path / "site")
    finally:
        os.close(fd)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.building-0000"]


def _fail_on(monkeypatch, call: str, suffix: str, error: type[OSError]) -> None:
    """os.<call> raises ``error`` for paths ending in ``suffix``, and works for the rest."""
    real = getattr(os, call)

    def failing(path, *args, **kwargs):
        if os.fspath(path).endswith(suffix):
            raise error(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, call, failing)


def test_a_leftover_that_vanishes_before_it_is_opened_does_not_stop_the_cleanup(tmp_path, monkeypatch):
    (tmp_path / ".site.building-0000").mkdir()
    _site(tmp_path / ".site.building-zzzz", {"index.html": "half"})
    _fail_on(monkeypatch, "open", "-0000", FileNotFoundError)
    swap.clean_leftovers(tmp_path / "site")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.building-0000"]


def test_a_leftover_that_cannot_be_deleted_never_fails_the_build(tmp_path, monkeypatch):
    leftover = tmp_path / ".site.building-k1"
    leftover.mkdir()
    (leftover / "stuck").write_text("x")
    _fail_on(monkeypatch, "unlink", "stuck", PermissionError)
    swap.clean_leftovers(tmp_path / "site")
    assert (leftover / "stuck").exists()


def test_a_folder_that_cannot_be_listed_does_not_stop_the_removal_of_the_others(tmp_path, monkeypatch):
    old = _site(tmp_path / "old", {"a/index.html": "x", "b/index.html": "x", "c/index.html": "x"})
    real_scandir, calls = os.scandir, []

    def scandir(path):
        calls.append(path)
        if len(calls) == 2:  # the first folder below the top, whichever the listing gives first
            raise PermissionError(path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    swap.remove_own(old)
    monkeypatch.undo()
    assert list(_tree(old)) == [os.path.relpath(calls[1], old) + "/index.html"]


def test_an_output_named_like_a_staging_folder_gets_a_building_folder_of_its_own(tmp_path):
    out = tmp_path / "site.starting-1"
    held, building = swap.new_staging(out)
    os.close(held)
    assert building.name.startswith(f".{out.name}.building-")
    swap.clean_leftovers(out)
    assert list(tmp_path.iterdir()) == []


def test_a_staging_folder_renamed_away_before_it_is_building_is_made_again(tmp_path, monkeypatch):
    real_rename, tries = os.rename, []

    def rename(src, dst):
        tries.append(src)
        if len(tries) == 1:
            raise FileNotFoundError(src)
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    held, building = swap.new_staging(tmp_path / "site")
    os.close(held)
    assert len(tries) == 2 and building.is_dir()


def test_giving_up_on_a_staging_folder_says_so_and_where(tmp_path, monkeypatch):
    def vanishing(folder):
        os.rmdir(folder)
        raise FileNotFoundError(folder)

    monkeypatch.setattr(swap, "_hold", vanishing)
    with pytest.raises(OSError) as caught:
        swap.new_staging(tmp_path / "site")
    assert str(caught.value) == f"[Errno {errno.EAGAIN}] could not create a staging folder: '{tmp_path}'"


@pytest.mark.parametrize("exchange", [True, False])
def test_an_output_holding_a_file_sitegen_did_not_write_is_refused_before_the_swap(tmp_path, monkeypatch, exchange):
    import shutil
    from pathlib import Path

    from sitegen.core.problems import InputError
    from sitegen.site.build import build_site

    if not exchange:
        monkeypatch.setattr(swap, "exchange", lambda a, b: False)
    records = tmp_path / "records"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "registry-small", records)
    out = tmp_path / "site"
    build_site(records, out)
    (out / "notes.txt").write_text("the user's")
    (records / "sitegen.toml").write_text('[site]\ntitle = "Renamed"\n')  # so the build is no no-op
    before = {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    with pytest.raises(InputError) as caught:
        build_site(records, out)
    [problem] = caught.value.problems
    assert problem.file == str(out / "notes.txt") and problem.message.startswith("not written by sitegen")
    # Nothing changed: not the site, not its standby, and nothing staged beside them.
    assert {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()} == before


def test_a_staging_folder_is_made_as_starting_beside_the_output_and_keeps_its_name_as_building(tmp_path, monkeypatch):
    # Killed before its rename, a build leaves a .X.starting-* folder, which the next build removes.
    real, made = swap._hold, []

    def hold(folder):
        made.append(folder)
        return real(folder)

    monkeypatch.setattr(swap, "_hold", hold)
    held, building = swap.new_staging(tmp_path / "site")
    os.close(held)
    [starting] = made
    assert starting.parent == tmp_path and starting.name.startswith(".site.starting-")
    assert building.name == ".site.building-" + starting.name.removeprefix(".site.starting-")


def test_an_output_folder_that_cannot_be_locked_gives_no_lock_and_leaks_no_descriptor(tmp_path, monkeypatch):
    # flock can fail (ENOLCK on some network file systems): hold_output answers None, as where the
    # folder does not exist yet, and closes the descriptor it opened for the lock.
    opened = []
    real_open = os.open
    monkeypatch.setattr(swap.os, "open", lambda *a, **k: opened.append(real_open(*a, **k)) or opened[-1])

    def refuse(fd, op):
        raise OSError(errno.ENOLCK, "no locks available")

    monkeypatch.setattr(swap.fcntl, "flock", refuse)
    assert swap.hold_output(tmp_path / "site") is None
    assert len(opened) == 1
    with pytest.raises(OSError):
        os.fstat(opened[0])  # closed
