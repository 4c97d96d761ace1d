"""What docs promise about reading an input file (sitegen.core.inputfile), one clause each.

- Only regular files are read: a FIFO, a device or a folder is refused by its kind, before any read.
- A file is never read past its limit: refused by its size, and refused too when it reports no
  size but holds more (a /proc file).
- A file read from a registry must be in it once links are resolved; a link that stays inside is
  an ordinary input. --allow-outside-links lifts the rule for the whole command.
"""

from __future__ import annotations

import os
import sys

import pytest

from sitegen.core import inputfile
from sitegen.core.inputfile import read_regular
from sitegen.core.problems import InputError


def _refusal(*args, **kwargs) -> str:
    with pytest.raises(InputError) as caught:
        read_regular(*args, **kwargs)
    [problem] = caught.value.problems
    return problem.message


@pytest.fixture(autouse=True)
def _rule_in_force():
    inputfile.allow_outside_links(False)
    yield
    inputfile.allow_outside_links(False)


def test_a_fifo_is_refused_by_its_kind_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "run.json")
    assert _refusal(tmp_path / "run.json", 100) == "is a FIFO (named pipe), not a regular file"


def test_a_folder_is_refused_by_its_kind(tmp_path):
    assert _refusal(tmp_path, 100) == "is a folder, not a regular file"


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_a_device_is_refused_by_its_kind():
    assert _refusal("/dev/null", 100) == "is a character device, not a regular file"


def test_kinds_are_named():
    import stat
    assert inputfile.kind_of(stat.S_IFSOCK) == "a socket"
    assert inputfile.kind_of(stat.S_IFBLK) == "a block device"
    assert inputfile.kind_of(stat.S_IFREG) == "not a regular file"


def test_a_missing_file_is_one_line_naming_what_it_was_called(tmp_path):
    with pytest.raises(InputError) as caught:
        read_regular(tmp_path / "gone.json", 100, "shown.json")
    [problem] = caught.value.problems
    assert problem.file == "shown.json" and problem.message == "cannot read file: No such file or directory"


def test_a_file_at_its_limit_is_read_and_one_byte_more_is_refused(tmp_path):
    path = tmp_path / "run.json"
    path.write_bytes(b"x" * 100)
    assert read_regular(path, 100) == b"x" * 100
    path.write_bytes(b"x" * 101)
    assert _refusal(path, 100) == "file is 101 bytes, over the 100-byte limit"


def test_a_file_larger_than_one_read_is_read_whole(tmp_path):
    path = tmp_path / "big.json"
    data = bytes(range(256)) * (5 * 4096 + 3)  # several reads of 1 MiB, and a remainder
    path.write_bytes(data)
    assert read_regular(path, len(data)) == data


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_a_file_that_reports_no_size_is_still_never_read_past_its_limit():
    # /proc files report st_size 0 and hold more: the read itself stops past the limit.
    assert os.stat("/proc/self/status").st_size == 0
    assert _refusal("/proc/self/status", 10) == "file is over the 10-byte limit"
    assert read_regular("/proc/self/status", 1 << 20).startswith(b"Name:")


def test_a_link_out_of_the_registry_is_refused_and_one_inside_is_read(tmp_path):
    root = tmp_path / "records"
    (root / "pages").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "docs" / "about.md").write_text("inside")
    (tmp_path / "secret.md").write_text("outside")
    (root / "pages" / "in.md").symlink_to(os.path.join("..", "docs", "about.md"))
    (root / "pages" / "out.md").symlink_to(tmp_path / "secret.md")
    assert read_regular(root / "pages" / "in.md", 100, registry=root) == b"inside"
    assert _refusal(root / "pages" / "out.md", 100, registry=root) == (
        f"is a link to {tmp_path / 'secret.md'}, outside the registry; pass --allow-outside-links to read it")
    # Without a registry given, the file is not one of a registry's: read.
    assert read_regular(root / "pages" / "out.md", 100) == b"outside"


def test_a_sibling_folder_sharing_the_registrys_name_as_a_prefix_is_outside(tmp_path):
    root = tmp_path / "records"
    root.mkdir()
    (tmp_path / "records-old").mkdir()
    (tmp_path / "records-old" / "run.json").write_text("{}")
    (root / "run.json").symlink_to(tmp_path / "records-old" / "run.json")
    assert "outside the registry" in _refusal(root / "run.json", 100, registry=root)


def test_the_registry_reached_through_a_link_is_the_registry(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "run.json").write_text("{}")
    (tmp_path / "link").symlink_to(real)
    assert read_regular(tmp_path / "link" / "run.json", 100, registry=tmp_path / "link") == b"{}"


def test_allowing_outside_links_reads_them_for_the_whole_command(tmp_path):
    root = tmp_path / "records"
    root.mkdir()
    (tmp_path / "secret.md").write_text("outside")
    (root / "out.md").symlink_to(tmp_path / "secret.md")
    assert not inputfile.outside_links_allowed()
    inputfile.allow_outside_links()
    assert inputfile.outside_links_allowed()
    assert read_regular(root / "out.md", 100, registry=root) == b"outside"
    inputfile.allow_outside_links(False)
    assert "outside the registry" in _refusal(root / "out.md", 100, registry=root)


def test_where_a_file_is_comes_from_its_descriptor(tmp_path, monkeypatch):
    path = tmp_path / "a.json"
    path.write_text("{}")
    fd = os.open(path, os.O_RDONLY)
    try:
        # Renamed after opening: the descriptor still knows where the file is.
        os.rename(path, tmp_path / "b.json")
        assert inputfile.opened_path(fd, path) == str(tmp_path / "b.json")
        # Without /proc, the path as it resolves now.
        monkeypatch.setattr(os, "readlink", lambda _: (_ for _ in ()).throw(OSError("no /proc")))
        assert inputfile.opened_path(fd, tmp_path / "c" / ".." / "b.json") == str(tmp_path / "b.json")
    finally:
        os.close(fd)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="O_NONBLOCK on a FIFO as Linux has it")
def test_files_are_opened_nonblocking_and_closed(tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    path.write_text("{}")
    opened, closed, real_open, real_close = [], [], os.open, os.close

    def recording_open(p, flags, *args, **kwargs):
        fd = real_open(p, flags, *args, **kwargs)
        opened.append((fd, flags))
        return fd

    def recording_close(fd):
        closed.append(fd)
        return real_close(fd)

    monkeypatch.setattr(os, "open", recording_open)
    monkeypatch.setattr(os, "close", recording_close)
    read_regular(path, 100)
    with pytest.raises(InputError):
        read_regular(path, 1)
    assert len(opened) == 2 and [fd for fd, _ in opened] == closed
    for _, flags in opened:
        assert flags & os.O_NONBLOCK and flags & os.O_CLOEXEC and flags & os.O_ACCMODE == os.O_RDONLY


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs /proc")
def test_a_read_that_fails_is_one_line_saying_why():
    # /proc/self/mem is a regular file whose first page cannot be read.
    assert _refusal("/proc/self/mem", 100) == "cannot read file: Input/output error"


@pytest.mark.parametrize("limit, grown", [(1 << 20, (1 << 20) + 1), (3 << 19, 3 << 20)])
def test_a_file_that_grows_after_its_size_was_checked_is_never_read_past_its_limit(tmp_path, monkeypatch, limit, grown):
    # Another process appends after fstat: the reads themselves must stop past the limit,
    # never return the first `limit` bytes as if they were the file.
    path = tmp_path / "run.json"
    path.write_bytes(b"x" * 10)
    real_fstat = os.fstat

    def fstat_then_grow(fd):
        info = real_fstat(fd)
        path.write_bytes(b"x" * grown)
        return info

    monkeypatch.setattr(os, "fstat", fstat_then_grow)
    assert _refusal(path, limit) == f"file is over the {limit}-byte limit"


def test_where_a_file_is_comes_from_the_descriptor_not_from_its_path_now(tmp_path):
    # A link swapped in after the open cannot slip past the check, either way round.
    root = tmp_path / "records"
    root.mkdir()
    (root / "a.json").write_text("inside")
    (tmp_path / "secret.json").write_text("outside")
    real_root = inputfile.real_root(root)
    inside_fd = os.open(root / "a.json", os.O_RDONLY)
    outside_fd = os.open(tmp_path / "secret.json", os.O_RDONLY)
    try:
        os.rename(root / "a.json", root / "b.json")
        (root / "a.json").symlink_to(tmp_path / "secret.json")
        assert inputfile.outside(inside_fd, root / "a.json", real_root) is None
        (root / "c.json").write_text("inside")
        assert inputfile.outside(outside_fd, root / "c.json", real_root) == str(tmp_path / "secret.json")
    finally:
        os.close(inside_fd)
        os.close(outside_fd)


def test_a_link_swapped_in_between_open_and_check_is_refused(tmp_path, monkeypatch):
    root = tmp_path / "records"
    root.mkdir()
    (tmp_path / "secret.json").write_text("outside")
    (root / "a.json").symlink_to(tmp_path / "secret.json")
    real_fstat = os.fstat

    def fstat_then_swap(fd):
        info = real_fstat(fd)
        (root / "a.json").unlink()
        (root / "a.json").write_text("inside")  # what a check by path would now see
        return info

    monkeypatch.setattr(os, "fstat", fstat_then_swap)
    assert "outside the registry" in _refusal(root / "a.json", 100, registry=root)


def test_without_proc_a_link_out_is_still_refused_by_its_path(tmp_path, monkeypatch):
    root = tmp_path / "records"
    root.mkdir()
    (tmp_path / "secret.md").write_text("outside")
    (root / "out.md").symlink_to(tmp_path / "secret.md")
    (root / "in.md").write_text("inside")
    real_readlink = os.readlink

    def no_proc(path, *args, **kwargs):
        if str(path).startswith("/proc/"):
            raise FileNotFoundError(path)
        return real_readlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "readlink", no_proc)
    assert _refusal(root / "out.md", 100, registry=root) == (
        f"is a link to {tmp_path / 'secret.md'}, outside the registry; pass --allow-outside-links to read it")
    assert read_regular(root / "in.md", 100, registry=root) == b"inside"


def test_a_registry_whose_name_ends_in_a_space_holds_its_files(tmp_path):
    root = tmp_path / "records "
    root.mkdir()
    (root / "run.json").write_text("{}")
    assert read_regular(root / "run.json", 100, registry=root) == b"{}"
