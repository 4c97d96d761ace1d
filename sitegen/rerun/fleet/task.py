"""One fleet task, on the GPU Ray gave it: a local rerun of one case group, returned as documents.

The protocol runs through sitegen.rerun.sweep.run exactly as `sitegen rerun` runs it on one
machine (processes, warm-up, gate, integrity checks, throttle guard); only its output goes into
a scratch registry, whose documents travel back to the driver, which alone writes into --out.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

from sitegen.core.problems import InputError
from sitegen.rerun.measure import gpustate
from sitegen.rerun import sweep


def placement(interpret: bool) -> dict[str, Any]:
    """Where this task runs: node, host, process, Ray's GPU ids and (with NVML) the GPU's UUID."""
    import ray

    ctx = ray.get_runtime_context()
    facts = None if interpret else gpustate.facts()
    return {"node": ctx.get_node_id(), "host": socket.gethostname(), "pid": os.getpid(),
            "gpuIds": [str(i) for i in ctx.get_accelerator_ids().get("GPU", [])],
            "gpuUuid": (facts or {}).get("uuid")}


def measure_group(opts: sweep.Options, site_toml: bytes | None, host: str | None = None) -> dict[str, Any]:
    """Run `opts` on this host's GPU into a scratch registry: {"summary", "documents"} or {"refused"}.

    `site_toml` is the driver's <records>/sitegen.toml, so that the documents name the same
    repository as a local run from the driver's registry would.
    """
    with tempfile.TemporaryDirectory(prefix="sitegen-fleet-") as tmp:
        records_dir, out = Path(tmp, "records"), Path(tmp, "out")
        records_dir.mkdir()
        if site_toml is not None:
            (records_dir / "sitegen.toml").write_bytes(site_toml)
        try:
            # key=None: the driver signs what it writes; no key is read on a node.
            summary = sweep.run(replace(opts, records=records_dir, out=out, host=host, key=None))
        except InputError as exc:
            return {"refused": [p.line() for p in exc.problems]}
        documents = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(out.rglob("*.json"))]
    return {"summary": summary, "documents": documents}


def task(opts: sweep.Options, site_toml: bytes | None) -> Iterator[dict[str, Any]]:
    """The Ray task body: yields its placement first (so the driver knows where it runs), then
    the group's outcome."""
    # Ray names its GPUs by index in CUDA_VISIBLE_DEVICES; in PCI bus order CUDA (the measuring
    # processes) and NVML (the UUID and the busy/throttle checks) mean the same GPU by it.
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    where = placement(opts.interpret)
    yield {"where": where}
    # Under the interpreter there is no GPU UUID; the Ray node tells instances on one host apart.
    host = f"{where['host']}/ray-node-{where['node'][:12]}" if opts.interpret else None
    yield {"outcome": measure_group(opts, site_toml, host)}
