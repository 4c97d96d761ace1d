"""``sitegen build``, ``sitegen serve`` and ``sitegen attest``: thin click commands over build_site, the
local server and attest."""

from __future__ import annotations

import time
from pathlib import Path

import click

from sitegen.cli.options import CONTEXT, EXIT_HELP, OUTSIDE_LINKS, UNLOCKED, hold_until_exit, warn_unlocked


class AttestKind(click.Choice):
    """The kinds of note (sitegen.trust.attest.ATTEST_KINDS), looked up only when used.

    They come from the model, and importing it loads pydantic, which would make every
    sitegen command, --help included, start several times slower
    (about 0.2 s instead of 0.06 s).
    """

    def __init__(self) -> None:
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:
        from sitegen.trust.attest import ATTEST_KINDS

        return ATTEST_KINDS


# Quicker builds finish before a display would be worth drawing.
BUILD_PROGRESS_AFTER_S = 2.0
# Into a pipe or a file, a line per stage once a build has run this long: a quick build (and
# its one-line problems) stays as terse as before, a long one says what it is doing.
BUILD_LINES_AFTER_S = 10.0


@click.command(context_settings=CONTEXT, epilog=EXIT_HELP)
@click.option("--records", type=click.Path(path_type=Path, file_okay=False), default=Path("records"),
              show_default=True, help="Registry folder to build from.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("site"), show_default=True,
              help="Output folder; replaced only if sitegen built it.")
@click.option("--base-url", help="Absolute URL the site is served from (overrides sitegen.toml); used for permalinks.")
@click.option("--exclude-dry-runs", is_flag=True, help="Leave out runs marked evidence.dryRun.")
@click.option("--quiet", is_flag=True, help="No progress display on stderr (shown only on a terminal, for builds over 2 s).")
@click.option("--search/--no-search", default=True, show_default=True,
              help="Index the pages with Pagefind and put a search box on every page.")
@click.option("--jobs", type=click.IntRange(min=1), help="Processes loading records and rendering record pages  [default: one per core]")
@click.option("--full", is_flag=True,
              help="Parse, validate and digest every document, rank every cohort and make every listing row, "
                   "ignoring this machine's build state (use it where the cache folder is not yours alone, as in CI).")
@UNLOCKED
@OUTSIDE_LINKS
@click.option("--trust", type=click.Path(path_type=Path, dir_okay=False),
              help="Read the trusted rerun keys ([[trust]]) from this file instead of the registry's sitegen.toml "
                   "(in CI: the base branch's, which a pull request cannot edit).")
@click.option("--explain", "explain", multiple=True, metavar="PAGE",
              help="Say of PAGE (a site path, e.g. runs/NAME/; repeatable) whether this build took it unchanged "
                   "from the site it replaced or made it again, and why, on stdout.")
def build(records: Path, out: Path, base_url: str | None, exclude_dry_runs: bool, quiet: bool, search: bool,
          jobs: int | None, full: bool, unlocked: bool, trust: Path | None, explain: tuple[str, ...]) -> None:
    """Build the static registry site from a folder of records.

    Every record is validated first; on any problem nothing is written and the
    previous site stays as it was. Links between pages are relative, so the site
    works on any static host and under `python -m http.server`.
    """
    from sitegen.core.problems import InputError, Problem
    from sitegen.core.progress import Progress, wanted
    from sitegen.site.engine.uptodate import check, unchanged

    # Checked here as well as in build_site, so a bad URL is named before the registry is read.
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        from sitegen.site.build import bad_base_url

        raise bad_base_url()
    if not records.is_dir():
        raise InputError([Problem(str(records), "$", "no such registry folder")])
    if unlocked:
        warn_unlocked(records)
    started = time.perf_counter()
    with Progress(enabled=wanted(quiet), delay_s=BUILD_PROGRESS_AFTER_S, lines=not quiet,
                  lines_after_s=BUILD_LINES_AFTER_S) as progress:
        progress.stage("checking for changes")
        checked = check(records, out, base_url=base_url, exclude_dry_runs=exclude_dry_runs, search=search,
                        unlocked=unlocked, full=full, trust=trust, explain=list(explain))
        if checked.previous is not None:
            result = unchanged(checked)
        else:
            # Only now: the page modules and models take most of a no-op build's time to import.
            from sitegen.site.build import build_site

            result = build_site(records, out, base_url=base_url, exclude_dry_runs=exclude_dry_runs, progress=progress,
                                search=search, unlocked=unlocked, jobs=jobs, full=full, trust=trust,
                                explain=list(explain), checked=checked)
        del checked
    elapsed = time.perf_counter() - started
    for line in result.explained:
        click.echo(line)
    hold_until_exit(result.heap)
    if not result.fresh:
        click.echo(f"{out} is up to date: built from the same records and options ({result.runs} run page(s), "
                   f"{result.files} file(s)); checked in {elapsed:.1f} s", err=True)
        return
    click.echo(f"built {result.runs} run page(s), {result.files} file(s) into {out} in {elapsed:.1f} s", err=True)


@click.command(context_settings=CONTEXT, epilog=EXIT_HELP)
@click.argument("run")
@click.option("--kind", required=True, type=AttestKind(), help="What kind of note.")
@click.option("--value", help='The number you observed, with a unit of the run\'s metric, e.g. "9.3 ms" on a latency '
                               'run; stored normalized ("9300 us" becomes "9.3 ms").')
@click.option("--note", help="The note, in Markdown (rendered sanitized). A note needs --value or --note.")
@click.option("--link", help="Supporting http(s) link.")
@click.option("--author", default="anonymous", show_default=True, help="Who writes the note.")
@click.option("--date", "day", help="Date of the note, YYYY-MM-DD (default: today).")
@click.option("--records", type=click.Path(path_type=Path, file_okay=False), default=Path("records"),
              show_default=True, help="Registry folder.")
@click.option("--full", is_flag=True,
              help="Parse, validate and digest every document, ignoring this machine's build state "
                   "(use it where the cache folder is not yours alone, as in CI).")
@OUTSIDE_LINKS
def attest(run: str, kind: str, value: str | None, note: str | None, link: str | None, author: str,
           day: str | None, records: Path, full: bool) -> None:
    """Add a community note (Attestation) to RUN, a run name or digest.

    Writes records/attestations/<name>.json and refreshes digests.lock. Notes are
    shown under "Replications and notes" and never change a run's evidence level.
    """
    from sitegen.core.problems import InputError, Problem
    from sitegen.trust.attest import attest as write_attestation

    if not records.is_dir():
        raise InputError([Problem(str(records), "$", "no such registry folder")])
    path = write_attestation(records, run, kind=kind, value=value, note=note, link=link, author=author, day=day, full=full)
    click.echo(f"wrote {path}", err=True)


@click.command(context_settings=CONTEXT, epilog=EXIT_HELP)
@click.option("--records", type=click.Path(path_type=Path, file_okay=False), default=Path("records"),
              show_default=True, help="Registry folder to build from and watch.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("site"), show_default=True,
              help="Output folder; replaced only if sitegen built it.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port on 127.0.0.1 (0: any free port).")
@click.option("--search/--no-search", default=True, show_default=True, help="Index the pages with Pagefind on every build.")
@OUTSIDE_LINKS
def serve(records: Path, out: Path, port: int, search: bool) -> None:
    """Build the site, serve it on 127.0.0.1 and rebuild when records, settings or templates change.

    Open pages reload after each rebuild. An edit that does not build prints its
    problems here and on the open page, and the last good site keeps being served.
    """
    from sitegen.core.problems import InputError, Problem
    from sitegen.site.build import build_site
    from sitegen.site.serve.server import serve as run_server

    if not records.is_dir():
        raise InputError([Problem(str(records), "$", "no such registry folder")])
    run_server(records, out, port=port, build=lambda: build_site(records, out, search=search))
