"""Note bodies are sanitized; `sitegen attest` writes a valid Attestation and refreshes the lock."""

from __future__ import annotations

import json

from click.testing import CliRunner

from conftest import SEED_RUN
from sitegen.cli import main
from sitegen.registry import open_registry
from sitegen.site.build import build_site
from sitegen.site.notes import render_markdown


def test_markdown_keeps_safe_formatting():
    html = render_markdown("# Title\n\n**bold** and [a link](https://example.org/x)\n\n- one\n\n###### Deep\n")
    assert "<strong>bold</strong>" in html
    assert '<a href="https://example.org/x" rel="nofollow noopener noreferrer">a link</a>' in html
    assert "<h4>Title</h4>" in html and "<h4>Deep</h4>" in html and "<li>one</li>" in html


def test_javascript_links_and_scripts_are_stripped():
    hostile = (
        "[x](javascript:alert(1)) <a href=\"javascript:alert(2)\">y</a> <a href=\"JaVaScRiPt:alert(5)\">z</a>\n\n"
        "<script>alert(3)</script><img src=x onerror=alert(4)><iframe src=\"https://evil.example\"></iframe>"
        "<a href=\"data:text/html,hi\">d</a> <p onclick=\"alert(6)\">p</p> <style>body{}</style>"
    )
    html = render_markdown(hostile).lower()
    for bad in ('href="javascript', "<script", "alert(3)", "<img", "onerror", "<iframe", "data:", "onclick", "<style"):
        assert bad not in html, bad
    # The Markdown link is left as plain text, never as a link.
    assert "<a" not in html.split("[x](javascript:alert(1))")[0]
    assert html.count("<a") == 0 and html.count("href=") == 0


def _invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_attest_writes_a_note_that_the_site_shows(registry_copy, tmp_path):
    result = _invoke("attest", SEED_RUN, "--kind", "could_not_reproduce", "--value", "12.5 ms",
                     "--note", "Slower on **our** B200 <script>x()</script>", "--link", "https://example.org/log",
                     "--author", "B. Reviewer", "--date", "2026-09-01", "--records", str(registry_copy))
    assert result.exit_code == 0, result.output
    written = sorted((registry_copy / "attestations").glob("*could-not-reproduce*.json"))
    assert len(written) == 1
    doc = json.loads(written[0].read_text())
    assert doc["spec"]["value"] == "12.5 ms" and doc["spec"]["date"] == "2026-09-01"
    open_registry(registry_copy)  # the lock was refreshed: verification passes
    build_site(registry_copy, tmp_path / "out")
    page = (tmp_path / "out" / "runs" / SEED_RUN / "index.html").read_text()
    assert "Could not reproduce · 12.5 ms" in page and "B. Reviewer" in page
    assert "<strong>our</strong>" in page and "x()" not in page


def test_attest_accepts_a_digest_prefix(registry_copy):
    digest = next(r.digest for r in open_registry(registry_copy).of_kind("BenchmarkRun") if r.name == SEED_RUN)
    result = _invoke("attest", digest[:19], "--kind", "environment_note", "--author", "C", "--date", "2026-09-02",
                     "--records", str(registry_copy))
    assert result.exit_code == 0, result.output
    second = _invoke("attest", digest, "--kind", "environment_note", "--author", "D", "--date", "2026-09-02",
                     "--records", str(registry_copy))
    assert second.exit_code == 0, second.output
    assert len(list((registry_copy / "attestations").glob("*environment-note-2026-09-02*.json"))) == 2


def test_attest_refuses_an_identical_note(registry_copy):
    args = ["attest", SEED_RUN, "--kind", "reproduced", "--value", "9.2 ms", "--author", "E", "--date", "2026-09-03",
            "--records", str(registry_copy)]
    assert _invoke(*args).exit_code == 0
    again = _invoke(*args)
    assert again.exit_code == 1 and "the same note already exists" in again.output
    assert len(list((registry_copy / "attestations").glob("*reproduced-2026-09-03*.json"))) == 1
    open_registry(registry_copy)


def test_attest_unknown_run_fails_cleanly(registry_copy):
    before = sorted(p.name for p in registry_copy.rglob("*"))
    result = _invoke("attest", "no-such-run", "--kind", "reproduced", "--records", str(registry_copy))
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("RUN: $: 'no-such-run' is no run name or digest")
    assert "Traceback" not in result.output
    assert sorted(p.name for p in registry_copy.rglob("*")) == before


def test_attest_rejects_a_non_http_link(registry_copy):
    result = _invoke("attest", SEED_RUN, "--kind", "reproduced", "--link", "javascript:alert(1)",
                     "--records", str(registry_copy))
    assert result.exit_code == 1
    assert "$.spec.link" in result.output.splitlines()[0]
    assert not list((registry_copy / "attestations").glob("*reproduced-2*"))


def _run_python(code: str) -> str:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout


def test_attest_offers_exactly_the_kinds_the_model_defines():
    # A kind added to the model's Literal must reach the CLI with no second list to edit.
    out = _run_python(
        "from typing import Literal, get_args\n"
        "from click.testing import CliRunner\n"
        "from sitegen.cli import main\n"
        "from sitegen.model.run import AttestationBody\n"
        "field = AttestationBody.model_fields['kind']\n"
        "field.annotation = Literal[(*get_args(field.annotation), 'benchmark_bug')]\n"
        "print(CliRunner().invoke(main, ['attest', '--help'], terminal_width=400).output)\n"
    )
    assert "benchmark_bug" in out and "regression_observed" in out


def test_sitegen_help_does_not_load_pydantic():
    out = _run_python(
        "import sys\nfrom click.testing import CliRunner\nfrom sitegen.cli import main\n"
        "assert CliRunner().invoke(main, ['--help']).exit_code == 0\nprint('pydantic' in sys.modules)\n"
    )
    assert out.strip() == "False"
