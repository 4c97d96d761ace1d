"""Concurrent writers keep every update; a writer that cannot get the lock says so."""

from __future__ import annotations

from concurrency import concurrent_attests, concurrent_builds, lock_timeout


def test_concurrent_attests_keep_every_note(tmp_path):
    ok, detail = concurrent_attests(tmp_path, 6)
    assert ok, detail


def test_a_writer_that_cannot_get_the_lock_refuses_in_one_line(tmp_path):
    ok, detail = lock_timeout(tmp_path)
    assert ok, detail


def test_concurrent_builds_leave_one_complete_site(tmp_path):
    ok, detail = concurrent_builds(tmp_path, 3)
    assert ok, detail
