"""A progress display on stderr for long commands (reruns, large builds), drawn with rich.

It is shown only when stderr is a terminal and --quiet was not given, so logs piped into
a file and ``--json`` on stdout are exactly what they would be without it. Log lines
printed through ``log`` appear above the display instead of tearing it. Into a pipe or a
file, a command may ask for one plain line per stage instead (``lines``), as static site
generators print, so a long build in CI is not minutes of silence.
"""

from __future__ import annotations

import sys
import time
from datetime import timedelta


def wanted(quiet: bool) -> bool:
    """Whether to draw progress: never with --quiet, never into a pipe or a file."""
    return not quiet and sys.stderr.isatty()


class Progress:
    """One line of progress: a description, a bar, done/total of the current stage, the time
    since the command started, and the stage's ETA.

    ``delay_s`` holds the display back until the work has run that long, so quick commands
    print nothing extra. Disabled, every method is a no-op except ``log``, which then
    writes the line to stderr as it is.
    """

    def __init__(self, *, enabled: bool, delay_s: float = 0.0, lines: bool = False, lines_after_s: float = 0.0):
        """``lines``: without the display, write ``[elapsed] stage (total)`` on stderr as each stage
        starts, once the command has run ``lines_after_s`` (a stage begun sooner is written then)."""
        self._bar = None
        self._task = None
        self._shown = False
        self._delay_s = delay_s
        self._t0 = time.monotonic()
        self._lines = lines and not enabled
        self._lines_after_s = lines_after_s
        self._pending: tuple[str, int | None] | None = None
        if enabled:
            try:
                self._bar = _rich_progress(self._t0)
            except ImportError:
                # `python -m sitegen.rerun` runs from a checkout on GPU hosts that may lack
                # sitegen's dependencies; the log lines still say everything the bar would.
                self._bar = None

    def __enter__(self) -> Progress:
        if self._bar is not None:
            self._task = self._bar.add_task("starting", total=None)
            self._maybe_show()
        return self

    def __exit__(self, *exc) -> None:
        if self._shown:
            self._bar.stop()

    def _maybe_show(self) -> None:
        if not self._shown and time.monotonic() - self._t0 >= self._delay_s:
            self._bar.start()
            self._shown = True

    def _line(self) -> None:
        if self._pending is not None and time.monotonic() - self._t0 >= self._lines_after_s:
            description, total = self._pending
            self._pending = None
            elapsed = timedelta(seconds=int(time.monotonic() - self._t0))
            sys.stderr.write(f"[{elapsed}] {description}" + (f" ({total:,})" if total else "") + "\n")
            sys.stderr.flush()

    def stage(self, description: str, total: int | None = None) -> None:
        """Start a new stage: its description, and how many steps it has if known."""
        if self._lines:
            self._pending = (description, total)
            self._line()
        if self._bar is not None:
            # A new task rather than reset(): reset keeps the old total when the new one is unknown.
            self._bar.remove_task(self._task)
            self._task = self._bar.add_task(description, total=total)
            self._maybe_show()

    def update(self, *, description: str | None = None, completed: int | None = None, total: int | None = None) -> None:
        if self._lines:
            if self._pending is not None and total is not None:
                self._pending = (description or self._pending[0], total)
            self._line()
        if self._bar is not None:
            fields = {k: v for k, v in (("description", description), ("completed", completed), ("total", total)) if v is not None}
            self._bar.update(self._task, **fields)
            self._maybe_show()

    def advance(self, steps: int = 1) -> None:
        if self._lines:
            self._line()
        if self._bar is not None:
            self._bar.advance(self._task, steps)
            self._maybe_show()

    def log(self, line: str) -> None:
        """A log line: above the display while it is shown, else straight to stderr."""
        if self._shown:
            self._bar.console.print(line, markup=False, highlight=False, soft_wrap=True)
        else:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()


def _rich_progress(t0: float):
    # Imported only when drawing: `sitegen --help` and piped runs never pay for rich.
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, ProgressColumn, TextColumn, TimeRemainingColumn
    from rich.text import Text

    class SinceStart(ProgressColumn):
        """Elapsed time of the whole command (rich's own column restarts with every stage)."""

        def render(self, task) -> Text:
            return Text(str(timedelta(seconds=int(time.monotonic() - t0))), style="progress.elapsed")

    # A rerun's cases take seconds to minutes each: a minute of history steadies the ETA.
    return Bar(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("elapsed"), SinceStart(), TextColumn("ETA"), TimeRemainingColumn(),
        console=Console(file=sys.stderr), transient=True, redirect_stdout=False, redirect_stderr=False,
        speed_estimate_period=60.0,
    )
