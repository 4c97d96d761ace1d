"""The registry's own settings: ``sitegen.toml``, ``sources/<id>.toml`` and ``gpus.toml``.

Every setting has a default, so a bare folder of manifests builds. Sources describe who
published imported records (name, license, date) and are keyed by the id that runs carry
in ``spec.sourceNative.source``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from datetime import date
from typing import Annotated

from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from sitegen.core.inputfile import read_regular
from sitegen.format.model.common import Day, Digest, HttpUrl, Short, Strict
from sitegen.core.problems import InputError, Problem, json_path

CONFIG_NAME = "sitegen.toml"
SOURCES_DIR = "sources"
GPUS_NAME = "gpus.toml"


class Site(Strict):
    """The ``[site]`` table."""

    title: Short = "Kernel benchmark registry"
    """Site title shown on every page."""
    base_url: HttpUrl = "https://kernelindex.dev/"
    """Absolute URL the site is served from; permalinks and citations use it."""
    repository_url: HttpUrl = "https://github.com/kernelindex/registry"
    """Repository of the registry."""
    issue_tracker_url: HttpUrl = "https://github.com/kernelindex/registry/issues"
    """Where "Report an issue" and "Add a reproduction or note" lead."""
    license: Short = "CC-BY-4.0"
    """License of records that name no source."""


class Source(Strict):
    """One ``sources/<id>.toml``: who published a set of imported records."""

    name: Short
    """Human name, e.g. "Liger-Kernel benchmarks"."""
    url: HttpUrl | None = None
    """Where the source is published."""
    license: Short
    """SPDX identifier of the source's license."""
    published: Day
    """Date its records were published in this registry."""
    citation: Short | None = None
    """How to cite the source."""


class Gpu(Strict):
    """One table of ``gpus.toml``, keyed by the product name environments carry (e.g. "NVIDIA B200").

    Datasheet facts about a GPU product, kept beside the records rather than in each
    environment: they are the vendor's claims, not what a run measured, and adding one
    must not change the digest of every environment and run on that GPU.
    """

    nominal_memory_bandwidth_gbs: Annotated[float, Field(gt=0)]
    """The vendor's nominal (datasheet) peak memory bandwidth in GB/s (10^9 bytes/s)."""
    source: HttpUrl | None = None
    """Where the vendor states it."""


class TrustedSigner(Strict):
    """One ``[[trust]]`` table: a key whose signed reruns the registry trusts, like a line of git's allowed_signers."""

    model_config = ConfigDict(populate_by_name=False)

    name: Short
    """Who holds the key, e.g. "sitegen project (H200 reruns)"; shown on the pages of the runs it signed."""
    key: Short
    """The Ed25519 public key as one OpenSSH line, ``ssh-ed25519 AAAA… [comment]`` (a .pub file's content)."""
    valid_after: date | None = Field(None, alias="valid-after")
    """First day (UTC) of runs the key may sign; runs observed before it are not trusted."""
    valid_before: date | None = Field(None, alias="valid-before")
    """Day (UTC) from which runs signed by the key are no longer trusted; what it signed before stays valid."""
    runs: list[Digest] | None = None
    """The digests of the runs the key vouches for, and no others. A retired key's entry pins what it
    signed, so whoever kept its private half cannot backdate a new run into its window."""

    @field_validator("key")
    @classmethod
    def _ed25519(cls, value: str) -> str:
        from sitegen.core.signing import parse_public_line

        parse_public_line(value)
        return value


# name@version of an installed distribution, as its metadata names it (PEP 508 name, any version text).
DistributionPin = Annotated[str, Field(pattern=r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?@[^\s@]+$", max_length=300)]


class ReviewedCode(Strict):
    """One ``[[reviewed]]`` table: outside implementation code a person of this registry read.

    Outside code runs in the process that measures it and can forge any check made there, so a
    controlled rerun of it earns Verified only when the registry lists what ran as reviewed:
    its source digest (the exact bytes) or its distribution and version (whatever bytes that
    release holds, the weaker pin)."""

    model_config = ConfigDict(populate_by_name=False)

    name: Short
    """What the reviewed code is, e.g. "sitegen-example-jsd 0.1.0"; for the people who read the file."""
    source_digest: Digest | None = Field(None, alias="source-digest")
    """The implementation record's projectRevision.sourceDigest, as `sitegen rerun` wrote it."""
    distribution: DistributionPin | None = None
    """``name@version`` of its distribution, as the record's projectRevision names them."""
    reviewer: Short
    """Who read the code."""
    day: date = Field(alias="date")
    """When it was read."""

    @model_validator(mode="after")
    def _one_pin(self):
        if (self.source_digest is None) == (self.distribution is None):
            raise ValueError("give exactly one of source-digest or distribution")
        return self


class Config(Strict):
    site: Site = Site()
    """Site settings."""
    trust: list[TrustedSigner] = []
    """Keys whose signed reruns may earn Verified (``--trust FILE`` reads them from another file instead)."""
    reviewed: list[ReviewedCode] = []
    """Outside implementation code whose controlled reruns may earn Verified (``--trust FILE`` reads them too)."""
    sources: dict[str, Source] = {}
    """Sources by id."""
    gpus: dict[str, Gpu] = {}
    """Datasheet facts by GPU product name."""


MAX_TOML_BYTES = 1024 * 1024


def _read_toml(path: Path, root: Path | None) -> dict:
    # root None: a file the user named outright (--trust), not one found in a registry.
    data = read_regular(path, MAX_TOML_BYTES, registry=root)
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError([Problem(str(path), "$", f"invalid UTF-8 at byte {exc.start}")]) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError([Problem(str(path), "$", f"invalid TOML: {exc}")]) from None
    except RecursionError:
        raise InputError([Problem(str(path), "$", "invalid TOML: nesting too deep")]) from None
    except ValueError as exc:
        # tomllib turns digits into int() directly: past 4,300 digits that is a ValueError.
        raise InputError([Problem(str(path), "$", f"invalid TOML: {str(exc).split(';')[0]}")]) from None


def _validate(model: type[Strict], data: dict, file: Path, prefix: tuple = ()) -> Strict:
    from sitegen.format.loader import validation_problems

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError(validation_problems(exc, str(file), prefix, extra="unknown setting")) from None


def load_config(root: Path) -> Config:
    """Read ``root/sitegen.toml`` and ``root/sources/*.toml``; defaults where absent."""
    site, trust, reviewed = Site(), [], []
    config_file = root / CONFIG_NAME
    if config_file.exists() or config_file.is_symlink():
        data = _read_toml(config_file, root)
        unknown = sorted(set(data) - {"site", "trust", "reviewed"})
        if unknown:
            raise InputError([Problem(str(config_file), json_path([unknown[0]]),
                                      "unknown table; expected [site], [[trust]] or [[reviewed]]")])
        site = _validate(Site, data.get("site", {}), config_file, ("site",))
        trust = _trust(data, config_file)
        reviewed = _reviewed(data, config_file)
    sources = {}
    for file in sorted((root / SOURCES_DIR).glob("*.toml")):
        if file.name.startswith("."):
            continue
        sources[file.stem] = _validate(Source, _read_toml(file, root), file)
    gpus = {}
    gpus_file = root / GPUS_NAME
    if gpus_file.exists() or gpus_file.is_symlink():
        for product, table in _read_toml(gpus_file, root).items():
            if not isinstance(table, dict):
                raise InputError([Problem(str(gpus_file), json_path([product]), "must be a table named by the GPU product")])
            gpus[product] = _validate(Gpu, table, gpus_file, (product,))
    return Config(site=site, sources=sources, gpus=gpus, trust=trust, reviewed=reviewed)


def _tables(model: type[Strict], key: str, data: dict, file: Path) -> list:
    tables = data.get(key, [])
    if not isinstance(tables, list):
        raise InputError([Problem(str(file), f"$.{key}", f"must be an array of tables: [[{key}]]")])
    return [_validate(model, table if isinstance(table, dict) else {}, file, (key, i)) for i, table in enumerate(tables)]


def _trust(data: dict, file: Path) -> list[TrustedSigner]:
    return _tables(TrustedSigner, "trust", data, file)


def _reviewed(data: dict, file: Path) -> list[ReviewedCode]:
    return _tables(ReviewedCode, "reviewed", data, file)


def load_trust(file: Path) -> list[TrustedSigner]:
    """The ``[[trust]]`` tables of ``file`` (a sitegen.toml, e.g. the base branch's): ``--trust FILE``."""
    if not file.is_file():
        raise InputError([Problem(str(file), "$", "no such trust file")])
    return _trust(_read_toml(file, None), file)


def load_reviewed(file: Path) -> list[ReviewedCode]:
    """The ``[[reviewed]]`` tables of ``file``: ``--trust FILE`` decides what outside code is trusted
    as it decides whose keys are, so a change cannot vouch for its own code."""
    if not file.is_file():
        raise InputError([Problem(str(file), "$", "no such trust file")])
    return _reviewed(_read_toml(file, None), file)
