"""Payloads in every author-controlled text field never leave their text: scanned with html5lib
on every page, and a sample loaded in Chromium with a dialog listener. A sample of payloads
(report.py tries all of them)."""

from __future__ import annotations

import headless
import pytest

from payloads import PAYLOADS, browser_sample, build_and_scan, scan_page

SAMPLE = [0, 3, 10, 13]


def test_the_scanner_catches_what_it_looks_for():
    page = '<p>"><x-pwn data-f="f3"></p><a href="javascript:alert(\'f4\')">x</a><i onmouseover="alert(\'f5\')">f649</i>'
    assert scan_page(page) == {3, 4, 5, 6}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("payloads")
    return [build_and_scan(tmp / str(i), PAYLOADS[i]) for i in SAMPLE]


def test_no_payload_leaves_its_text_on_any_page(built):
    for (fields, leaked, pages, broken, _), i in zip(built, SAMPLE):
        assert len(fields) >= 80 and pages >= 15
        assert not leaked, (PAYLOADS[i], [fields[n] for n in sorted(leaked)])
        assert not broken


@pytest.mark.browser
def test_no_dialog_opens_in_chromium(built):
    headless.require_chromium()
    loaded, failures = browser_sample([site for *_, site in built[:2]], per_site=3)
    assert loaded == 6 and not failures, failures
