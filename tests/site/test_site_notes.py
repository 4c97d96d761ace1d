"""Note bodies are sanitized; `sitegen attest` writes a valid Attestation and refreshes the lock."""

from __future__ import annotations

import json

import pytest

from conftest import SEED_RUN
from helpers import invoke as _invoke
from sitegen.registry.folder import open_registry
from sitegen.site.build import build_site
from sitegen.site.text.markdown import render_markdown


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
    result = _invoke("attest", digest[:19], "--kind", "environment_note", "--note", "Driver 570", "--author", "C",
                     "--date", "2026-09-02", "--records", str(registry_copy))
    assert result.exit_code == 0, result.output
    second = _invoke("attest", digest, "--kind", "environment_note", "--note", "Driver 570", "--author", "D",
                     "--date", "2026-09-02", "--records", str(registry_copy))
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
    result = _invoke("attest", "no-such-run", "--kind", "reproduced", "--value", "9 ms", "--records", str(registry_copy))
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("RUN: $: 'no-such-run' is no run name or digest")
    assert "Traceback" not in result.output
    assert sorted(p.name for p in registry_copy.rglob("*")) == before


def test_attest_rejects_a_non_http_link(registry_copy):
    result = _invoke("attest", SEED_RUN, "--kind", "reproduced", "--value", "9.2 ms", "--link", "javascript:alert(1)",
                     "--records", str(registry_copy))
    assert result.exit_code == 1
    assert "$.spec.link" in result.output.splitlines()[0]
    assert not list((registry_copy / "attestations").glob("*reproduced-2*"))


def _unchanged(registry_copy):
    before = {p: p.read_bytes() for p in registry_copy.rglob("*") if p.is_file()}
    return lambda: {p: p.read_bytes() for p in registry_copy.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("value", ["fast", "12.5", "12.5 MB", "-3 ms", "0 ms", "ms 12.5", "1e400 ms", "1,23 ms", "12 ms ms"])
def test_attest_value_must_be_a_number_with_a_unit_of_the_runs_metric(registry_copy, value):
    unchanged = _unchanged(registry_copy)
    result = _invoke("attest", SEED_RUN, "--kind", "reproduced", "--value", value, "--records", str(registry_copy))
    assert result.exit_code == 1
    [line] = [line for line in result.stderr.splitlines() if not line.endswith("problem(s) found.")]
    assert line.startswith(f"--value: $: {value!r}") and "Traceback" not in result.output
    assert unchanged()


def test_attest_value_is_stored_normalized_and_shown_so(registry_copy, tmp_path):
    result = _invoke("attest", SEED_RUN, "--kind", "reproduced", "--value", "9300us", "--author", "F",
                     "--date", "2026-09-04", "--records", str(registry_copy))
    assert result.exit_code == 0, result.output
    [written] = (registry_copy / "attestations").glob("*reproduced-2026-09-04*.json")
    assert json.loads(written.read_text())["spec"]["value"] == "9.3 ms"
    build_site(registry_copy, tmp_path / "out")
    assert "Reproduced · 9.3 ms" in (tmp_path / "out" / "runs" / SEED_RUN / "index.html").read_text()


@pytest.mark.parametrize("extra", [[], ["--link", "https://example.org/log"], ["--note", "   "]], ids=["bare", "link-only", "blank-note"])
def test_attest_needs_a_value_or_a_body(registry_copy, extra):
    unchanged = _unchanged(registry_copy)
    result = _invoke("attest", SEED_RUN, "--kind", "reproduced", *extra, "--records", str(registry_copy))
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == "--note: $: a note needs --value or --note: with neither it says nothing"
    assert unchanged()


@pytest.mark.parametrize(("text", "metric", "unit", "stored"), [
    ("12.5 ms", "latency", "ns", "12.5 ms"), ("12500 us", "latency", "ns", "12.5 ms"), ("0.5ms", "latency", "ns", "500 µs"),
    ("9.30 ms", "latency", "ns", "9.3 ms"), ("1e3 ns", "latency", "ns", "1 µs"), ("2 s", "latency", "ns", "2 s"),
    ("750 μs", "latency", "ns", "750 µs"), ("12.50 mb", "memory", "MB", "12.5 MB"), ("4096 MB", "memory", "MB", "4096 MB"),
    ("2,048 MB", "memory", "MB", "2048 MB"), ("1,234.5 ms", "latency", "ns", "1.2345 s"),
])
def test_values_are_normalized_in_the_runs_unit(text, metric, unit, stored):
    from sitegen.format.observedvalue import normalize

    assert normalize(text, metric, unit) == stored


def test_the_value_a_record_page_suggests_is_accepted_as_shown():
    from sitegen.core import units
    from sitegen.format.observedvalue import normalize

    for value, unit, metric, stored in ((9_110_560.0, "ns", "latency", "9.11 ms"), (2048.0, "MB", "memory", "2048 MB"),
                                        (1_500_000_000.0, "ns", "latency", "1.5 s")):
        assert normalize(units.show(value, unit), metric, unit) == stored


def test_a_memory_run_takes_only_its_own_unit():
    from sitegen.core.problems import InputError
    from sitegen.format.observedvalue import normalize

    with pytest.raises(InputError) as err:
        normalize("12.5 ms", "memory", "MB")
    assert "a unit of the run's memory (MB)" in err.value.problems[0].message


def _run_python(code: str) -> str:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout


def test_attest_offers_exactly_the_kinds_the_model_defines():
    # A kind added to the model's Literal must reach the CLI with no second list to edit.
    out = _run_python(
        "from typing import Literal, get_args\n"
        "from click.testing import CliRunner\n"
        "from sitegen.cli.main import main\n"
        "from sitegen.format.model.run import AttestationBody\n"
        "field = AttestationBody.model_fields['kind']\n"
        "field.annotation = Literal[(*get_args(field.annotation), 'benchmark_bug')]\n"
        "print(CliRunner().invoke(main, ['attest', '--help'], terminal_width=400).output)\n"
    )
    assert "benchmark_bug" in out and "regression_observed" in out


def test_sitegen_help_does_not_load_pydantic():
    out = _run_python(
        "import sys\nfrom click.testing import CliRunner\nfrom sitegen.cli.main import main\n"
        "assert CliRunner().invoke(main, ['--help']).exit_code == 0\nprint('pydantic' in sys.modules)\n"
    )
    assert out.strip() == "False"
