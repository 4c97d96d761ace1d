"""Special files, malformed values and unportable names: one clear line each, never a hang."""

from __future__ import annotations

import pytest

from hostile import CASES, run_case


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_refused_with_one_line(case, tmp_path):
    ok, output = run_case(case, tmp_path)
    assert ok, output


def test_settings_errors_read_like_record_errors(tmp_path):
    from click.testing import CliRunner

    from hostile import registry
    from sitegen.cli.main import main

    root = registry(tmp_path)
    (root / "sitegen.toml").write_text('[site]\nbase_url = "ftp://x"\n')
    result = CliRunner().invoke(main, ["build", "--records", str(root), "--out", str(tmp_path / "site")])
    # The wording a record's bad URL gets (model.common.PATTERN_HELP), not pydantic's regex text.
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == f"{root / 'sitegen.toml'}: $.site.base_url: must be an http:// or https:// URL"
