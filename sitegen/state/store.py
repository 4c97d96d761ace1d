"""What the last commands knew of a registry, kept between them: one SQLite database per registry.

Everything here stands only for work already done on this machine, so the database lives
in the user's cache folder (SITEGEN_CACHE_DIR, else $XDG_CACHE_HOME/sitegen, else
~/.cache/sitegen), named from the registry's resolved path, never in the registry or the
site: no checkout or pull request can bring entries of its own. SQLite from the standard
library because it is transactional (a command killed mid-write leaves the last committed
state, never a torn file), one file, no dependency, and queryable with the sqlite3 shell
when something looks wrong.

Tables, each with the trust rule of what it holds:

- summaries: lock and verify's documents of one registry folder (sitegen.state.summaries), as
  JSON keyed by sha256 over sitegen's code version and the file's exact bytes.
- documents: a build's validated documents of one folder (sitegen.state.cachedload), pickled
  whole (per-file entries load several times slower), under the code version and the
  payload's sha256; each file's entry names the sha256 of the bytes it was made from. A
  payload unpickles only sitegen's model classes and plain data.
- rankings: what ranking a cohort set on its members (sitegen.site.engine.rankcache), by a key
  over the code version and each member's digest, name and level; a build keeps only the
  keys it used.
- row_tokens: each run's listing-row token (sitegen.site.engine.rowtokens), by the key of the
  run's page group; a build keeps only the groups it has.
- explained: per site folder, what the build that made it saw (its inputs digest, shared
  key and each registry file's digest), for the next build's --explain
  (sitegen.site.engine.explain), which uses it only for the site built from those very inputs.
- file_stats: each registry file's stat and the sha256 of the bytes it had under that stat
  (sitegen.state.filestats), so an unchanged file is not read to fingerprint a build.
- site_dirs: each folder of a built site (the live site and its standby, each known by its
  root folder's device and inode) with its stat and a digest of its entries as sitegen left
  them (sitegen.site.engine.sitedirs), so that a build learns that nobody added, removed or
  replaced a file in the site by a stat of each folder instead of a walk of every file.

The page keys and group keys that decide which files of a site are linked unchanged stay
in the site's own marker (sitegen.site.engine.marker): they describe the files of that very
site, which a build elsewhere, or with --full, may have replaced.

A database that cannot be opened, is of another format or is found damaged is no cache:
it is deleted and made again, and what it held is computed again. One that cannot be
written only costs the next command its speed. A cache problem is never an error.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from functools import partial
from pathlib import Path

from sitegen.state.codeversion import code_version

FORMAT = 4
_SCHEMA = """
CREATE TABLE summaries(folder TEXT PRIMARY KEY, files TEXT NOT NULL);
CREATE TABLE documents(folder TEXT PRIMARY KEY, code TEXT NOT NULL, checksum TEXT NOT NULL, payload BLOB NOT NULL);
CREATE TABLE rankings(cohort TEXT PRIMARY KEY, outcome TEXT NOT NULL);
CREATE TABLE row_tokens(grp TEXT NOT NULL, run TEXT NOT NULL, token TEXT NOT NULL, PRIMARY KEY (grp, run));
CREATE TABLE explained(site TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE file_stats(path TEXT PRIMARY KEY, stat TEXT NOT NULL, sha256 TEXT NOT NULL);
CREATE TABLE site_dirs(folder TEXT NOT NULL, dir TEXT NOT NULL, mtime INTEGER NOT NULL, ctime INTEGER NOT NULL, names TEXT NOT NULL, PRIMARY KEY (folder, dir)) WITHOUT ROWID;
"""
_DAMAGED = {"SQLITE_CORRUPT", "SQLITE_NOTADB"}
_MODEL_MODULES = "sitegen.format.model."


def cache_base() -> Path:
    base = os.environ.get("SITEGEN_CACHE_DIR")
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "sitegen")
    return Path(base)


def _registry_name(root: Path) -> str:
    return hashlib.sha256(os.fsencode(root.resolve())).hexdigest()[:24]


def state_path(root: Path) -> Path:
    """The database of the registry folder ``root``, named from its resolved path."""
    return cache_base() / "state" / (_registry_name(root) + ".sqlite3")


# The cache folders this database replaced (sitegen before the build state), one per kind
# and registry: left behind, they would hold a large registry's documents for ever.
_FILE_CACHES = ("digests", "documents", "rankings", "rows", "explain")


def _forget_file_caches(root: Path) -> None:
    for kind in _FILE_CACHES:
        shutil.rmtree(cache_base() / kind / _registry_name(root), ignore_errors=True)


class _ModelsOnly(pickle.Unpickler):
    """Unpickles sitegen's model classes and plain data, nothing else: a payload is never code."""

    def find_class(self, module: str, name: str):
        if module.startswith(_MODEL_MODULES) and not name.startswith("_"):
            found = super().find_class(module, name)
            from pydantic import BaseModel

            if isinstance(found, type) and issubclass(found, BaseModel):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not a sitegen model")


def unpickle_models(payload: bytes) -> dict:
    """The dict pickled in ``payload``, {} if it is damaged or names anything but sitegen's models."""
    try:
        found = _ModelsOnly(io.BytesIO(payload)).load()
    except Exception:  # any damage at all means: no cache
        return {}
    return found if isinstance(found, dict) else {}


class BuildState:
    """The open database of one registry (or none: every read misses, every write is dropped).

    Opened once per command, in the process that runs it: a connection never crosses a
    fork, so forked workers compute and the parent reads and writes.
    """

    def __init__(self, path: Path | None):
        self.path = path
        self._db: sqlite3.Connection | None = None
        self.created = False
        """Whether this opening made the database (first use, or after damage or an upgrade)."""
        if path is not None:
            self._db, damaged = self._open()
            # A damaged or foreign database is deleted and made again, once; one that is only
            # busy (another command writing) or unreachable is left as it is, and unused.
            if self._db is None and damaged and self._discard():
                self._db, _ = self._open()

    def _open(self) -> tuple[sqlite3.Connection | None, bool]:
        """The connection, or None and whether the database is damaged or of another format."""
        db = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Autocommit: each write below is its own transaction, or an explicit one.
            db = sqlite3.connect(self.path, timeout=2.0, isolation_level=None)
            if db.execute("PRAGMA user_version").fetchone()[0] != FORMAT:
                # WAL: readers never wait for a writer, and a killed writer's transaction is simply not there.
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("BEGIN IMMEDIATE")
                # Asked again inside the transaction: another command may have just made it.
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version != FORMAT:
                    if version or db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                        db.close()
                        return None, True
                    for statement in _SCHEMA.strip().splitlines():
                        db.execute(statement)
                    db.execute(f"PRAGMA user_version={FORMAT}")
                    self.created = True
                db.execute("COMMIT")
            # A cache may lose its last commits to a power cut, never its consistency.
            db.execute("PRAGMA synchronous=NORMAL")
            return db, False
        except (OSError, sqlite3.Error) as exc:
            if db is not None:
                db.close()
            return None, getattr(exc, "sqlite_errorname", None) in _DAMAGED

    def _discard(self) -> bool:
        """Delete the database and its journal, so that it is made again."""
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass
            except OSError:
                return False
        return True

    def _failed(self, exc: sqlite3.Error) -> None:
        # Damage found mid-command: start again from an empty database, so that what this
        # command computes is kept and the damage is not met on every later run.
        if getattr(exc, "sqlite_errorname", None) in _DAMAGED and self._db is not None:
            self._db.close()
            self._db = self._open()[0] if self._discard() else None

    def _rows(self, sql: str, *args) -> list:
        if self._db is None:
            return []
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            self._failed(exc)
            return []

    def _write(self, statements: list[tuple[str, tuple | list]]) -> None:
        """Run ``statements`` in one transaction; on any failure none of them counts.

        A statement's arguments as a list of tuples run it once for each."""
        if self._db is None or not statements:
            return
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for sql, args in statements:
                    if isinstance(args, list):
                        self._db.executemany(sql, args)
                    else:
                        self._db.execute(sql, args)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            self._failed(exc)

    def _keep_folders(self, table: str, folders) -> list[tuple[str, tuple]]:
        """The statements that forget the rows of ``table`` for folders not in ``folders``."""
        kept = {row[0] for row in self._rows(f"SELECT folder FROM {table}")}
        return [(f"DELETE FROM {table} WHERE folder = ?", (gone,)) for gone in sorted(kept - set(folders))]

    @property
    def usable(self) -> bool:
        """Whether there is a database at all: without one, callers may skip making keys for it."""
        return self._db is not None

    def close(self) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None

    def __enter__(self) -> BuildState:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # summaries: lock and verify

    def summaries(self) -> dict[str, str]:
        """Each registry folder's summaries as stored: JSON text {sha256(code, bytes): [entry, ...]}."""
        return {folder: files for folder, files in self._rows("SELECT folder, files FROM summaries")
                if isinstance(folder, str) and isinstance(files, str)}

    def put_summaries(self, changed: dict[str, str], folders) -> None:
        """Replace the summaries of the ``changed`` folders; forget folders not among ``folders``."""
        self._write([*(("INSERT OR REPLACE INTO summaries VALUES (?, ?)", item) for item in changed.items()),
                     *self._keep_folders("summaries", folders)])

    # documents: build

    def document_folders(self) -> set[str]:
        """The folders whose documents were stored by this sitegen."""
        return {row[0] for row in self._rows("SELECT folder FROM documents WHERE code = ?", code_version())}

    def documents(self, folder: str) -> dict:
        """{relative file: (sha256 of its bytes, [(pointer, source, model, digest), ...])} of ``folder``, {} when unusable."""
        return _documents(self._rows(_DOCUMENTS_SQL, folder, code_version()))

    def documents_reader(self) -> Callable[[str], dict]:
        """documents() for forked workers, which must not use this process's connection: each call
        opens the database read-only where it runs, so no process holds every folder's documents."""
        return partial(_read_documents, self.path) if self._db is not None else lambda folder: {}

    @staticmethod
    def usable_entry(entry, sha256: str) -> bool:
        """Whether one file's entry of documents() is well formed and was made from the bytes of ``sha256``."""
        return (isinstance(entry, tuple) and len(entry) == 2 and entry[0] == sha256 and isinstance(entry[1], list)
                and all(isinstance(e, tuple) and len(e) == 4 for e in entry[1]))

    @staticmethod
    def entry_records(entry, name: str) -> list:
        """The loader.Records of one file's entry of documents() (``name``: the file, as problems name it)."""
        from sitegen.format.loader import Record

        return [Record(name, *parts) for parts in entry[1]]

    def put_documents(self, folder: str, payload: bytes) -> None:
        self._write([("INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?)",
                      (folder, code_version(), hashlib.sha256(payload).hexdigest(), payload))])

    def keep_document_folders(self, folders) -> None:
        self._write(self._keep_folders("documents", folders))

    # rankings: build

    def rankings(self) -> dict[str, str]:
        """Each ranked cohort's key → the JSON of what ranking set on its members."""
        return {key: outcome for key, outcome in self._rows("SELECT cohort, outcome FROM rankings")
                if isinstance(key, str) and isinstance(outcome, str)}

    def put_rankings(self, changed: dict[str, str], gone) -> None:
        """Store the ``changed`` cohorts' outcomes; forget the cohorts ``gone``."""
        self._write([*(("INSERT OR REPLACE INTO rankings VALUES (?, ?)", item) for item in changed.items()),
                     *(("DELETE FROM rankings WHERE cohort = ?", (key,)) for key in gone)])

    # row_tokens: build

    def row_tokens(self) -> dict[str, dict[str, str]]:
        """Group key → {run name: its row's token}."""
        found: dict[str, dict[str, str]] = {}
        for group, run, token in self._rows("SELECT grp, run, token FROM row_tokens"):
            if isinstance(group, str) and isinstance(run, str) and isinstance(token, str):
                found.setdefault(group, {})[run] = token
        return found

    def put_row_tokens(self, changed: dict[str, dict[str, str]], gone) -> None:
        """Replace the tokens of the ``changed`` groups; forget the groups ``gone``."""
        self._write([("DELETE FROM row_tokens WHERE grp = ?", [(group,) for group in (*changed, *gone)]),
                     ("INSERT INTO row_tokens VALUES (?, ?, ?)",
                      [(group, run, token) for group, rows in changed.items() for run, token in rows.items()])])

    # explained: build --explain

    def explained(self, site: str) -> str | None:
        rows = self._rows("SELECT state FROM explained WHERE site = ?", site)
        return rows[0][0] if rows and isinstance(rows[0][0], str) else None

    def put_explained(self, site: str, state: str) -> None:
        self._write([("INSERT OR REPLACE INTO explained VALUES (?, ?)", (site, state))])


    # file_stats: build's fingerprint

    def file_stats(self) -> dict[str, tuple[str, str]]:
        """Registry file (relative, "/"-separated) → (its stat key, the sha256 of its bytes under it)."""
        return {path: (key, sha) for path, key, sha in self._rows("SELECT path, stat, sha256 FROM file_stats")
                if isinstance(path, str) and isinstance(key, str) and isinstance(sha, str)}

    def put_file_stats(self, changed: dict[str, tuple[str, str]], gone: list[str]) -> None:
        if not changed and not gone:
            return
        self._write([("INSERT OR REPLACE INTO file_stats VALUES (?, ?, ?)", [(p, k, s) for p, (k, s) in changed.items()]),
                     ("DELETE FROM file_stats WHERE path = ?", [(p,) for p in gone])])


    # site_dirs: the site's folders, for the build's check that a site is as sitegen left it

    def site_dirs(self, folder: str, only=None) -> dict[str, tuple[int, int, str]]:
        """Folder of the site ``folder`` (relative, "" for its root) → (mtime_ns, ctime_ns, digest of its entries);
        ``only``: just those folders."""
        if only is None:
            rows = self._rows("SELECT dir, mtime, ctime, names FROM site_dirs WHERE folder = ?", folder)
        else:
            rows = [row for d in sorted(only) for row in
                    self._rows("SELECT dir, mtime, ctime, names FROM site_dirs WHERE folder = ? AND dir = ?", folder, d)]
        return {d: (m, c, n) for d, m, c, n in rows if isinstance(d, str) and isinstance(n, str)}

    def put_site_dirs(self, folder: str, changed: dict[str, tuple[int, int, str]], gone=(), *, replace: bool = False) -> None:
        """Store the ``changed`` folders of site ``folder``, forget those ``gone``; ``replace``: forget all others first."""
        self._write([
            *([("DELETE FROM site_dirs WHERE folder = ?", (folder,))] if replace else []),
            ("DELETE FROM site_dirs WHERE folder = ? AND dir = ?", [(folder, d) for d in gone]),
            ("INSERT OR REPLACE INTO site_dirs VALUES (?, ?, ?, ?, ?)", [(folder, d, m, c, n) for d, (m, c, n) in changed.items()]),
        ])

    def forget_site(self, folder: str) -> None:
        self._write([("DELETE FROM site_dirs WHERE folder = ?", (folder,))])


_DOCUMENTS_SQL = "SELECT checksum, payload FROM documents WHERE folder = ? AND code = ?"


def _documents(rows: list) -> dict:
    if not rows or not isinstance(rows[0][1], bytes) or rows[0][0] != hashlib.sha256(rows[0][1]).hexdigest():
        return {}
    return unpickle_models(rows[0][1])


def _read_documents(path: Path, folder: str) -> dict:
    try:
        # absolute(): a file URI has no relative form, and SITEGEN_CACHE_DIR may be relative.
        with closing(sqlite3.connect(path.absolute().as_uri() + "?mode=ro", uri=True, timeout=2.0)) as db:
            return _documents(db.execute(_DOCUMENTS_SQL, (folder, code_version())).fetchall())
    except (sqlite3.Error, ValueError):
        return {}


def open_state(root: Path | None) -> BuildState:
    """The build state of the registry folder ``root``; None gives the state of no cache (``--full``)."""
    if root is None:
        return BuildState(None)
    state = BuildState(state_path(root))
    if state.created:
        _forget_file_caches(root)
    return state
