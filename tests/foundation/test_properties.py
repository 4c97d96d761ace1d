"""Property-based: generated valid manifests load, dump and load again unchanged, and their
digest depends on the spec alone — not on key order, not on metadata. Any value put
anywhere in a valid manifest gives a record or one-line problems, never a crash."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from manifest_edits import VALID, leaves, with_leaf_changed

from sitegen.core.digest import document_digest
from sitegen.format.loader import load_file, validate_document
from sitegen.rules.stats import summary
from sitegen.core.problems import InputError
from sitegen.core.strictjson import parse_bytes

API = "kernelindex.dev/v1alpha1"
SETTINGS = settings(max_examples=100, deadline=None)
EXACT = 2**53 - 1

names = st.from_regex(r"[a-z0-9](?:[a-z0-9._-]{0,30}[a-z0-9])?", fullmatch=True).filter(lambda n: ".." not in n)
keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,12}", fullmatch=True)
label_keys = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,20}", fullmatch=True)
dtypes = st.from_regex(r"[a-z][a-z0-9_]{1,15}", fullmatch=True)
# Any Unicode text (Hypothesis leaves out lone surrogates, which are not Unicode).
short = st.text(min_size=1, max_size=40)
ints = st.integers(-EXACT, EXACT)
counts = st.integers(0, EXACT)
floats = st.floats(allow_nan=False, allow_infinity=False)
nonneg_floats = st.floats(min_value=0, allow_nan=False, allow_infinity=False)
numbers = st.one_of(ints, floats)
scalars = st.one_of(ints, floats, short, st.booleans())
digests = st.binary(min_size=32, max_size=32).map(lambda b: "sha256:" + b.hex())
timestamps = st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(timezone.utc)).map(
    lambda t: t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{t.microsecond:06d}" if t.microsecond else "") + "Z"
)


def documents(kind: str, spec: st.SearchStrategy) -> st.SearchStrategy:
    metadata = st.fixed_dictionaries(
        {"name": names},
        optional={"title": short, "labels": st.dictionaries(label_keys, short, max_size=3), "authors": st.lists(short, max_size=2)},
    )
    return st.fixed_dictionaries({"apiVersion": st.just(API), "kind": st.just(kind), "metadata": metadata, "spec": spec})


workload_specs = st.fixed_dictionaries(
    {"operationSpecDigest": digests, "axes": st.dictionaries(keys, scalars, max_size=4)},
    optional={
        "dtype": dtypes,
        "tensors": st.lists(st.fixed_dictionaries({"name": keys, "dtype": dtypes, "shape": st.lists(counts, max_size=4)}), max_size=3),
        "scalars": st.dictionaries(keys, scalars, max_size=3),
        "config": st.dictionaries(keys, scalars, max_size=3),
        "correctness": st.fixed_dictionaries(
            {"comparator": short},
            optional={"tolerance": st.fixed_dictionaries({}, optional={"rtol": nonneg_floats, "atol": nonneg_floats}), "notes": short},
        ),
    },
)


@st.composite
def timings(draw):
    # Quantiles must not cross: draw five and sort them into min ≤ p20 ≤ median ≤ p80 ≤ max.
    low, p20, median, p80, high = sorted(draw(st.lists(counts, min_size=5, max_size=5)))
    latency = {"median": median}
    for key, value in (("min", low), ("p20", p20), ("p80", p80), ("max", high)):
        if draw(st.booleans()):
            latency[key] = value
    timing = {"latencyNs": latency, "primaryStatistic": "median"}
    if draw(st.booleans()):
        timing["samplesNs"] = draw(st.lists(counts, max_size=5))
        if timing["samplesNs"]:
            # Raw samples fix the figures stated with them (sitegen.rules.recompute refuses any other).
            stated = summary(timing["samplesNs"])
            timing["latencyNs"] = {key: stated[key] for key in latency}
    return timing


run_specs = st.fixed_dictionaries(
    {
        "implementationDigest": digests, "workloadDigest": digests, "protocolDigest": digests,
        "environmentDigest": digests, "status": st.sampled_from(["passed", "errored", "retracted"]),
        "observedAt": timestamps, "timing": timings(),
    },
    optional={
        "timedPass": st.sampled_from(["forward", "backward", "full"]),
        "statusReason": short,
        "measurements": st.lists(st.fixed_dictionaries({
            "metric": keys, "statistic": st.sampled_from(["mean", "stdev", "p95"]), "unit": short, "value": nonneg_floats,
        }), max_size=3),
        "sourceNative": st.fixed_dictionaries({
            "source": keys, "benchmark": short, "externalId": short, "metrics": st.dictionaries(keys, numbers, max_size=3),
        }),
        "evidence": st.fixed_dictionaries({}, optional={
            "dryRun": st.booleans(), "command": short, "details": st.dictionaries(keys, scalars, max_size=3),
            "instance": st.fixed_dictionaries({}, optional={"gpuUuid": short, "hostname": short}),
        }),
    },
)

manifests = st.one_of(documents("WorkloadCase", workload_specs), documents("BenchmarkRun", run_specs))


def load(data: bytes):
    return validate_document(parse_bytes(data, "generated.json"), "generated.json")


def dump(raw: dict, *, ascii_only: bool = True) -> bytes:
    return json.dumps(raw, ensure_ascii=ascii_only).encode("utf-8")


def reordered(value, rng):
    """The same JSON value with every object's keys in another order."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: reordered(v, rng) for k, v in items}
    if isinstance(value, list):
        return [reordered(v, rng) for v in value]
    return value


@SETTINGS
@given(manifests, st.booleans())
def test_load_dump_load_round_trip(document, ascii_only):
    first = load(dump(document, ascii_only=ascii_only))
    second = load(dump(first.raw, ascii_only=not ascii_only))
    assert second.model == first.model
    assert second.raw == first.raw == document
    assert second.digest == first.digest == document_digest(document)


@SETTINGS
@given(manifests, st.randoms(use_true_random=False))
def test_key_order_does_not_change_the_digest(document, rng):
    shuffled = reordered(document, rng)
    assert load(dump(shuffled)).digest == load(dump(document)).digest


@SETTINGS
@given(manifests, names, short)
def test_metadata_does_not_change_the_digest(document, name, title):
    edited = {**document, "metadata": {**document["metadata"], "name": name, "title": title, "labels": {"edited": "yes"}}}
    assert load(dump(edited)).digest == load(dump(document)).digest


@SETTINGS
@given(manifests, st.data())
def test_any_spec_change_changes_the_digest(document, data):
    leaf = data.draw(st.sampled_from(sorted(leaves(document["spec"]), key=repr)))
    edited = with_leaf_changed(document, ("spec", *leaf))
    assert document_digest(edited) != document_digest(document)


# Any JSON value at all, to put where a valid one was.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**60, 2**60) | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
FIXTURE_DOCUMENTS = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(VALID.glob("*.json"))]


def _places(value, at=()):
    """Every leaf and every container below the top, as paths."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*at, key)
            yield from _places(child, (*at, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield (*at, index)
            yield from _places(child, (*at, index))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(FIXTURE_DOCUMENTS), st.data(), json_values)
def test_any_value_anywhere_is_a_record_or_one_line_problems(tmp_path_factory, document, data, value):
    place = data.draw(st.sampled_from(list(_places(document))))
    edited = copy.deepcopy(document)
    node = edited
    for key in place[:-1]:
        node = node[key]
    node[place[-1]] = value
    path = tmp_path_factory.mktemp("any") / "edited.json"
    path.write_bytes(json.dumps(edited, allow_nan=True).encode("utf-8"))
    try:
        load_file(path)
    except InputError as exc:  # anything else escaping is a bug (a traceback for the user)
        assert exc.problems
        for problem in exc.problems:
            assert len(problem.line().splitlines()) == 1, problem
