"""Print tried / failed per area of the adversarial suite, trying more than the tests do.

    python tests/adversarial/report.py [--samples N] [--out FILE]

Areas: payload matrix (fields x payloads, html5lib), Chromium page loads, kill at write
points (import, attest, rerun, lock, build), full disk, concurrent writers, special files
(Markdown pages and operation descriptions among them), links out of the registry,
malformed input, names, XML outputs with forbidden characters (xml.etree, feedparser),
and serve (links out of the site, foreign Host, malformed URLs). Exit 1 if anything failed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: headless.py, helpers

import concurrency  # noqa: E402
import faults  # noqa: E402
import hostile  # noqa: E402
import payloads  # noqa: E402
import serveprobe  # noqa: E402
import xmlchars  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=8, help="kill points per command")
    args = parser.parse_args()
    tried: dict[str, int] = defaultdict(int)
    failed: dict[str, list[str]] = defaultdict(list)
    started = time.monotonic()

    def record(area: str, ok: bool, detail: str) -> None:
        tried[area] += 1
        if not ok:
            failed[area].append(detail)

    with tempfile.TemporaryDirectory(prefix="sitegen-adversarial-") as scratch:
        tmp = Path(scratch)
        sites = []
        for i, template in enumerate(payloads.PAYLOADS):
            fields, leaked, pages, broken, site = payloads.build_and_scan(tmp / f"payload-{i}", template)
            sites.append(site)
            for n, field in enumerate(fields):
                record("payload matrix (fields x payloads)", n not in leaked, f"{template!r} in {field}")
            record("JSON twins parse", not broken, f"{template!r}: {broken[:1]}")
        loaded, failures = payloads.browser_sample(sites, per_site=3)
        tried["Chromium page loads"] += loaded
        failed["Chromium page loads"] += failures
        for command in ("import", "attest", "rerun", "lock"):
            for trial in faults.registry_trials(command, tmp / f"fault-{command}", args.samples):
                area = "full disk" if "full disk" in trial.area else f"kill at write point: {command}"
                record(area, trial.ok, f"{trial.area} @{trial.point}: {trial.detail}")
        for trial in faults.build_trials(tmp / "fault-build", args.samples):
            record("kill at write point: build", trial.ok, f"@{trial.point}: {trial.detail}")
        record("concurrent writers", *concurrency.concurrent_attests(tmp / "attests", 8))
        record("concurrent writers", *concurrency.lock_timeout(tmp / "timeout"))
        record("concurrent writers", *concurrency.concurrent_builds(tmp / "builds", 4))
        for i, case in enumerate(hostile.CASES):
            ok, detail = hostile.run_case(case, tmp / f"hostile-{i}")
            record(case.area, ok, f"{case.name}: {detail}")
        for i, char in enumerate(xmlchars.FORBIDDEN):
            site = xmlchars.build(xmlchars.seeded_registry(tmp / f"xml-{i}", char), tmp / f"xml-{i}" / "site")
            broken = xmlchars.broken_outputs(site)
            for name in xmlchars.xml_outputs(site):
                bad = [b for b in broken if b.startswith(name + ": ")]
                record("XML outputs parse (xml.etree, feedparser)", not bad, f"U+{ord(char):04X}: {bad[:1]}")
        for area, ok, detail in serveprobe.serve_trials(tmp / "serve"):
            record(area, ok, detail)

    width = max(len(area) for area in tried)
    print(f"{'area':<{width}}  tried  failed")
    for area in tried:
        print(f"{area:<{width}}  {tried[area]:>5}  {len(failed[area]):>6}")
    print(f"{'total':<{width}}  {sum(tried.values()):>5}  {sum(len(f) for f in failed.values()):>6}")
    print(f"({time.monotonic() - started:.0f} s)")
    for area, details in failed.items():
        for detail in details[:5]:
            print(f"FAILED {area}: {detail}", file=sys.stderr)
    return 1 if any(failed.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
