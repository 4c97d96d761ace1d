"""Verified is earned by a valid signature of a key the registry trusts, at the time of the run;
anything else reads Reproducible with its reason, and verify names each failing signature."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import stat
import subprocess
from datetime import date, timedelta

import pytest

from trust_registry import RUN, cli, edit_run, mini_registry, problem_lines, write_json

NAME = RUN.stem
# The day the run was observed, and the next: the edges of a key's validity window.
DAY = date.fromisoformat(json.loads(RUN.read_text())["spec"]["observedAt"][:10])
NEXT = DAY + timedelta(days=1)


def keygen(path) -> str:
    """A throw-away key made with `sitegen keygen`; its public line."""
    result = cli("keygen", path)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def trust_toml(*entries: tuple[str, str, str]) -> str:
    """[[trust]] tables of (name, public line, extra TOML lines)."""
    return "".join(f'[[trust]]\nname = "{name}"\nkey = "{line}"\n{extra}\n' for name, line, extra in entries)


@pytest.fixture
def keys(tmp_path):
    folder = tmp_path / "keys"
    folder.mkdir()
    return {name: (folder / name, keygen(folder / name)) for name in ("trusted", "stranger")}


@pytest.fixture
def registry(tmp_path, keys):
    root = mini_registry(tmp_path / "registry")
    (root / "sitegen.toml").write_text(trust_toml(("H200 lab", keys["trusted"][1], "")))
    return root


def sign(root, key) -> None:
    result = cli("sign", "--key", key, "--records", root)
    assert result.exit_code == 0, result.output


def lock(root) -> None:
    assert cli("lock", root).exit_code == 0


def page(root, tmp_path, *options) -> tuple[str, str, str]:
    """(level, reason, signature row) of the run's built record page."""
    out = tmp_path / f"site-{len(list(tmp_path.iterdir()))}"
    result = cli("build", "--records", root, "--out", out, "--no-search", "--quiet", *options)
    assert result.exit_code == 0, result.output
    text = (out / "runs" / NAME / "index.html").read_text()
    level = re.search(r'<span class="level">(\w+) evidence</span>', text)[1]
    reason = re.search(r'<span class="level">[^<]*</span> <span class="reason">([^<]*)</span>', text)
    row = re.search(r"<dt>signature</dt> <dd>([^<]*)</dd>", text)
    return level, html.unescape(reason[1]) if reason else "", html.unescape(row[1]) if row else ""


def test_a_run_signed_by_a_trusted_key_reads_verified(registry, keys, tmp_path):
    sign(registry, keys["trusted"][0])
    lock(registry)
    assert cli("verify", registry).exit_code == 0
    assert page(registry, tmp_path) == ("Verified", "", "valid, by H200 lab")


def test_signing_changes_no_digest(registry, keys):
    lock(registry)
    before = (registry / "digests.lock").read_bytes()
    sign(registry, keys["trusted"][0])
    assert json.loads((registry / "runs" / RUN.name).read_text())["metadata"]["signature"]
    assert cli("verify", registry).exit_code == 0  # the lock of the unsigned run still holds
    lock(registry)
    assert (registry / "digests.lock").read_bytes() == before


def test_an_unsigned_rerun_reads_reproducible_and_builds(registry, tmp_path):
    lock(registry)
    assert cli("verify", registry).exit_code == 0  # unsigned is no problem for verify
    level, reason, row = page(registry, tmp_path)
    assert (level, row) == ("Reproducible", "unsigned")
    assert "the rerun is unsigned" in reason


def test_one_changed_byte_breaks_the_signature(registry, keys, tmp_path):
    sign(registry, keys["trusted"][0])
    path = registry / "runs" / RUN.name
    text = path.read_text()
    before = re.search(r'"temperatureC": (\d+)', text)
    assert before
    at, value = before.start(1), before.group(1)
    path.write_text(text[:at] + str(int(value) + 1)[: len(value)] + text[at + len(value):])  # one field, same length
    lock(registry)  # even a reviewed, re-locked edit
    result = cli("verify", registry)
    assert result.exit_code == 1
    assert problem_lines(result) == [f"{path}: $.metadata.signature: signature does not match the run and the documents it references"]
    level, reason, row = page(registry, tmp_path)
    assert (level, row) == ("Reproducible", "signature does not match the run and the documents it references")


def test_a_swapped_referenced_document_breaks_the_signature(registry, keys, tmp_path):
    sign(registry, keys["trusted"][0])
    [env_path] = (registry / "environments").glob("*.json")
    env = json.loads(env_path.read_text())
    env["spec"]["software"]["driver"] = "999.99"
    write_json(env_path, env)
    digest = cli("digest", env_path).stdout.split()[0]
    edit_run(registry, lambda spec: spec.update(environmentDigest=digest))
    lock(registry)
    result = cli("verify", registry)
    assert [line.split(": ", 2)[1:] for line in problem_lines(result)] == [
        ["$.metadata.signature", "signature does not match the run and the documents it references"]]
    assert page(registry, tmp_path)[0] == "Reproducible"


def test_a_key_the_registry_does_not_trust(registry, keys, tmp_path):
    sign(registry, keys["stranger"][0])
    lock(registry)
    result = cli("verify", registry)
    assert problem_lines(result) == [f"{registry / 'runs' / RUN.name}: $.metadata.signature: signed by a key this registry does not trust"]
    level, reason, row = page(registry, tmp_path)  # build never fails on a signature
    assert (level, row) == ("Reproducible", "signed by a key this registry does not trust")


@pytest.mark.parametrize("window", [f'valid-before = {DAY}', f'valid-after = {NEXT}',
                                    'valid-after = 2025-01-01\nvalid-before = 2026-06-01'])
def test_a_key_outside_its_validity_window_is_refused(registry, keys, tmp_path, window):
    # The run was observed on DAY.
    (registry / "sitegen.toml").write_text(trust_toml(("H200 lab", keys["trusted"][1], window)))
    sign(registry, keys["trusted"][0])
    lock(registry)
    result = cli("verify", registry)
    assert [line.split(": ", 2)[2] for line in problem_lines(result)] == [
        "signed by H200 lab, a trusted key outside its validity window at the time of the run"]
    assert page(registry, tmp_path)[0] == "Reproducible"


def test_a_key_within_its_window_stays_valid_for_what_it_signed(registry, keys, tmp_path):
    (registry / "sitegen.toml").write_text(trust_toml(("H200 lab", keys["trusted"][1], f"valid-after = {DAY}\nvalid-before = {NEXT}")))
    sign(registry, keys["trusted"][0])
    os.remove(keys["trusted"][0])  # the private half is gone
    lock(registry)
    assert cli("verify", registry).exit_code == 0
    assert page(registry, tmp_path)[0] == "Verified"


def test_trust_read_from_outside_the_registry_overrides_its_own(registry, keys, tmp_path):
    # A pull request signs with its own key and adds that key to the registry's sitegen.toml...
    (registry / "sitegen.toml").write_text(trust_toml(("me, trust me", keys["stranger"][1], "")))
    sign(registry, keys["stranger"][0])
    lock(registry)
    assert cli("verify", registry).exit_code == 0
    assert page(registry, tmp_path)[0] == "Verified"
    # ...but CI reads the base branch's trust list.
    base = tmp_path / "base-sitegen.toml"
    base.write_text('[site]\ntitle = "base"\n\n' + trust_toml(("H200 lab", keys["trusted"][1], "")))
    result = cli("verify", "--trust", base, registry)
    assert [line.split(": ", 2)[2] for line in problem_lines(result)] == ["signed by a key this registry does not trust"]
    assert page(registry, tmp_path, "--trust", base)[0] == "Reproducible"


def test_a_trust_list_with_a_bad_key_is_one_line(registry, tmp_path):
    bad = tmp_path / "trust.toml"
    bad.write_text('[[trust]]\nname = "x"\nkey = "ssh-rsa AAAA"\n')
    result = cli("verify", "--trust", bad, registry)
    assert result.exit_code == 1 and "Traceback" not in result.output
    [line] = problem_lines(result)
    assert line.startswith(f"{bad}: $.trust[0].key: ")


def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites(tmp_path):
    line = keygen(tmp_path / "k")
    assert line.startswith("ssh-ed25519 ") and (tmp_path / "k.pub").read_text().startswith(line)
    assert stat.S_IMODE((tmp_path / "k").stat().st_mode) == 0o600
    before = (tmp_path / "k").read_bytes()
    result = cli("keygen", tmp_path / "k")
    assert result.exit_code == 1 and problem_lines(result) == [f"{tmp_path / 'k'}: $: already exists; a key is never overwritten"]
    assert (tmp_path / "k").read_bytes() == before


SSH_KEYGEN = shutil.which("ssh-keygen")
needs_ssh_keygen = pytest.mark.skipif(SSH_KEYGEN is None and not os.environ.get("CI"),
                                      reason="ssh-keygen is not installed (openssh-client); CI installs it")


@needs_ssh_keygen
def test_a_key_made_by_ssh_keygen_signs_and_openssh_checks_the_signature(registry, tmp_path):
    key = tmp_path / "id_ed25519"
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "lab", "-f", str(key)], check=True)
    public = " ".join((tmp_path / "id_ed25519.pub").read_text().split()[:2])
    (registry / "sitegen.toml").write_text(trust_toml(("ssh lab", public, "")))
    sign(registry, key)
    lock(registry)
    assert cli("verify", registry).exit_code == 0
    assert page(registry, tmp_path)[0] == "Verified"
    # A reader checks it with OpenSSH alone: the payload is the canonical JSON of the digests.
    run = json.loads((registry / "runs" / RUN.name).read_text())
    rows = [line.split() for line in cli("digest", *sorted(registry.rglob("*.json"))).stdout.splitlines()]
    [operation] = [digest for digest, kind, _ in rows if kind == "OperationSpec"]
    [run_digest] = [digest for digest, _, name in rows if name == NAME]
    payload = json.dumps({"environment": run["spec"]["environmentDigest"], "implementation": run["spec"]["implementationDigest"],
                          "operation": operation, "protocol": run["spec"]["protocolDigest"],
                          "run": run_digest, "workload": run["spec"]["workloadDigest"]}, separators=(",", ":")).encode()
    blob = run["metadata"]["signature"]
    armored = "-----BEGIN SSH SIGNATURE-----\n" + "\n".join(blob[i:i + 70] for i in range(0, len(blob), 70)) + "\n-----END SSH SIGNATURE-----\n"
    (tmp_path / "sig").write_text(armored)
    (tmp_path / "allowed_signers").write_text(f"lab {public}\n")
    check = [SSH_KEYGEN, "-Y", "verify", "-f", str(tmp_path / "allowed_signers"), "-I", "lab", "-n", "sitegen-run", "-s", str(tmp_path / "sig")]
    assert subprocess.run(check, input=payload, capture_output=True).returncode == 0
    assert subprocess.run(check, input=payload.replace(b'"run":"sha256:', b'"run":"sha256:0'), capture_output=True).returncode != 0


@needs_ssh_keygen
def test_a_passphrase_protected_key_is_one_line(registry, tmp_path):
    key = tmp_path / "locked"
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "secret phrase", "-f", str(key)], check=True)
    result = cli("sign", "--key", key, "--records", registry)
    assert result.exit_code == 1 and "Traceback" not in result.output
    [line] = problem_lines(result)
    assert line.startswith(f"{key}: $: the key is protected by a passphrase")


def test_signing_by_default_leaves_a_signed_run_alone(registry, keys, tmp_path):
    # A run signed by the lab's key when it ran stays so after a newer key signs the registry:
    # that key's window may start after the run, and re-signing would void its Verified.
    sign(registry, keys["trusted"][0])
    before = RUN_FILE(registry).read_bytes()
    result = cli("sign", "--key", keys["stranger"][0], "--records", registry)
    assert result.exit_code == 0, result.output
    assert "signed 0 run(s)" in result.output
    assert RUN_FILE(registry).read_bytes() == before
    # Named, it is signed again: the holder asked for it.
    result = cli("sign", NAME, "--key", keys["stranger"][0], "--records", registry)
    assert result.exit_code == 0 and RUN_FILE(registry).read_bytes() != before


def RUN_FILE(root):
    return root / "runs" / RUN.name
