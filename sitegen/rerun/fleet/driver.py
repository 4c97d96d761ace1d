"""`sitegen rerun --ray`: the driver of a rerun across a Ray cluster's GPUs. Torch-free.

One Ray task per (GPU product × workload × replica) holds one GPU (num_gpus=1) of that product
through Ray's accelerator-type resource and runs the local rerun there (sitegen.rerun.fleet.task).
Replicas of a product go into one placement group, one GPU bundle each, so they land on
distinct GPUs. A task whose worker or node is lost is retried on another node of the same
product, up to RETRIES times. Documents come back to the driver, which writes them only once
every task has ended: Ctrl-C cancels the tasks and leaves --out as it was.
"""

from __future__ import annotations

import contextlib
import importlib.util
import signal
import socket
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from sitegen.core.inputfile import read_regular
from sitegen.core.problems import InputError, Problem
from sitegen.rerun.fleet import report as fleetreport
from sitegen.rerun.outcome import records
from sitegen.rerun.fleet.report import Progress, Task
from sitegen.rerun.sweep import Options

ACCELERATOR = "accelerator_type:"
RETRIES = 2
CANCEL_WAIT_S = 20.0
PROBE_S = 5.0
STRANDED_CHECK_S = 5.0
# Enough of the accelerator resource to place a task on a product, little enough that every GPU
# of the node can hold a task at once.
PRODUCT_SHARE = 0.001


def connect(address: str) -> Any:
    if importlib.util.find_spec("ray") is None:
        raise InputError([Problem("ray", "$", "ray is not installed; pip install 'sitegen[fleet]'")])
    import ray

    _probe(address)
    try:
        if address == "local":
            ray.init(include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise InputError([Problem(f"--ray {address}", "$", f"cannot reach a Ray cluster: {str(exc)[:300]}")]) from None
    return ray


def _probe(address: str) -> None:
    """Refuse an address nothing listens on: ray.init would retry it without end."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # 'auto', 'local': Ray answers for these itself
    try:
        socket.create_connection((host, int(port)), timeout=PROBE_S).close()
    except OSError as exc:
        raise InputError([Problem(f"--ray {address}", "$", f"cannot reach a Ray cluster there ({exc.strerror or exc})")]) from None


def gpus_by_product(ray) -> dict[str, int]:
    """GPUs per accelerator type over the cluster's live nodes."""
    out: dict[str, int] = {}
    for node in ray.nodes():
        res = node.get("Resources", {}) if node.get("Alive") else {}
        for key in res:
            if key.startswith(ACCELERATOR) and res.get("GPU", 0) >= 1:
                out[key[len(ACCELERATOR):]] = out.get(key[len(ACCELERATOR):], 0) + int(res["GPU"])
    return out


def _choose(found: dict[str, int], wanted: tuple[str, ...] | None, address: str) -> list[str]:
    if not found:
        raise InputError([Problem(f"--ray {address}", "$", "the cluster advertises no GPU with an accelerator type")])
    missing = [p for p in wanted or () if p not in found]
    if missing:
        raise InputError([Problem("--gpus", "$", f"no GPU of product {', '.join(missing)} in the cluster "
                                                 f"(it has {', '.join(sorted(found))})")])
    return list(wanted) if wanted else sorted(found)


class Fleet:
    """The outstanding tasks (Ray generator -> Task) and what to do when one reports, is lost or is
    cancelled."""

    def __init__(self, ray, remote, opts: Options, site_toml: bytes | None):
        self.ray, self.remote, self.opts, self.site_toml = ray, remote, opts, site_toml
        self.groups: dict[str, Any] = {}  # product -> placement group (replicas > 1)
        self.active: dict[Any, Task] = {}

    def submit(self, t: Task, node: str | None = None) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy, PlacementGroupSchedulingStrategy

        if t.product in self.groups:
            strategy = PlacementGroupSchedulingStrategy(self.groups[t.product], placement_group_bundle_index=t.replica)
        elif node is not None:
            strategy = NodeAffinitySchedulingStrategy(node_id=node, soft=False)
        else:
            strategy = "DEFAULT"
        opts = replace(self.opts, loads=[t.group])
        gen = self.remote.options(resources={ACCELERATOR + t.product: PRODUCT_SHARE},
                                  scheduling_strategy=strategy).remote(opts, self.site_toml)
        t.attempts += 1
        t.state, t.where = "queued", None
        self.active[gen] = t

    def other_node(self, t: Task) -> str | None:
        for node in sorted(self.ray.nodes(), key=lambda n: n["NodeID"]):
            res = node.get("Resources", {})
            if node.get("Alive") and res.get(ACCELERATOR + t.product) and node["NodeID"] not in t.excluded:
                return node["NodeID"]
        return None

    def lost(self, t: Task, reason: str, progress: Progress) -> None:
        t.lost.append(reason)
        if t.where:
            t.excluded.add(t.where["node"])
        node = None if t.product in self.groups else self.other_node(t)
        if t.attempts <= RETRIES and (node is not None or t.product in self.groups):
            # A replica keeps its bundle: Ray moves the bundle off a lost node, not off a lost worker.
            where = "in its placement group bundle" if t.product in self.groups else f"on another GPU of {t.product}"
            progress.event(t, f"lost ({reason}); retrying {where}")
            self.submit(t, node)
            return
        why = "no other GPU of this product left" if t.attempts <= RETRIES else f"{t.attempts} attempts"
        t.state, t.outcome = "done", {"lost": f"worker lost ({'; '.join(t.lost)}); {why}"}
        progress.event(t, f"not measured: {t.outcome['lost']}")

    def step(self, gen, progress: Progress) -> None:
        from ray.exceptions import RayError, RayTaskError

        t = self.active[gen]
        try:
            item = self.ray.get(next(gen))
        except RayTaskError as exc:  # the task's own code raised: a retry would raise again
            del self.active[gen]
            t.state, t.outcome = "done", {"lost": f"task failed: {str(exc).strip().splitlines()[-1][:300]}"}
            progress.event(t, f"not measured: {t.outcome['lost']}")
            return
        except (RayError, StopIteration) as exc:
            del self.active[gen]
            self.lost(t, type(exc).__name__, progress)
            return
        if "where" in item:
            t.state, t.where = "running", item["where"]
            progress.event(t, f"running on {fleetreport.gpu_of(t.where)} (host {t.where['host']}, pid {t.where['pid']})")
            return
        del self.active[gen]
        t.state, t.outcome = "done", item["outcome"]
        progress.event(t, "refused: " + "; ".join(t.outcome["refused"]) if "refused" in t.outcome else "measured")

    def stranded(self, progress: Progress) -> None:
        """Queued tasks whose product has no live GPU left (or too few for their placement group)
        would wait forever: they are lost."""
        live = gpus_by_product(self.ray)
        for gen, t in list(self.active.items()):
            need = len(self.groups[t.product].bundle_specs) if t.product in self.groups else 1
            if t.state == "queued" and live.get(t.product, 0) < need:
                self.ray.cancel(gen)
                del self.active[gen]
                t.state, t.outcome = "done", {"lost": f"no live GPU of {t.product} left to run on"}
                progress.event(t, f"not measured: {t.outcome['lost']}")

    def cancel(self) -> None:
        """Interrupt every outstanding task and give each a moment to stop its measuring process
        (the task sees KeyboardInterrupt, as a local rerun sees Ctrl-C)."""
        pending = list(self.active)
        self.active.clear()
        for gen in pending:
            try:
                self.ray.cancel(gen)
            except Exception:  # already ended or its node gone: nothing left to stop
                pass
        deadline = time.monotonic() + CANCEL_WAIT_S
        while pending and time.monotonic() < deadline:
            ready, pending = self.ray.wait(pending, num_returns=1, timeout=0.5)
            for gen in ready:
                try:
                    self.ray.get(next(gen))
                    pending.append(gen)  # an item already on its way; the end follows
                except Exception:  # cancelled, ended or lost: this task has stopped
                    pass


def _write(tasks: list[Task], out: Path, operation: str, key: Path | None = None,
           kept: dict[str, str] | None = None) -> int:
    shared, runs = [], []
    for t in tasks:
        for doc in (t.outcome or {}).get("documents", []):
            (runs if doc["kind"] == "BenchmarkRun" else shared).append(doc)
    # Signed here, on the driver: the key never travels to the cluster's nodes.
    # The journal as the command found it: what anything added while the tasks ran is not kept.
    return len(records.write_all(out, records.plan_writes(out, shared, runs, operation, key=key),
                                 journal=kept if kept is not None else {}))


def run_fleet(address: str, opts: Options, products: tuple[str, ...] | None, replicas: int) -> dict[str, Any]:
    """Plan, run and write; returns the --json summary. KeyboardInterrupt leaves --out untouched."""
    t0 = time.monotonic()
    # Ray prints its workers' deaths on stdout; stdout is --json's alone.
    with contextlib.redirect_stdout(sys.stderr):
        return _run(address, opts, products, replicas, t0)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _run(address: str, opts: Options, products: tuple[str, ...] | None, replicas: int, t0: float) -> dict[str, Any]:
    ray = connect(address)
    # A batch system's SIGTERM (Slurm at the time limit) cancels as Ctrl-C does; set after
    # ray.init, which installs a handler of its own.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    # Ctrl-C cancels however the driver was started: a script's `sitegen rerun --ray ... &`
    # (or a test suite run in the background) starts it with SIGINT ignored, which Python
    # then leaves ignored.
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        from sitegen.rerun.fleet.task import task

        found = gpus_by_product(ray)
        chosen = _choose(found, products, address)
        # One process per task (max_calls=1): Ray's CUDA_VISIBLE_DEVICES and cached NVML handles
        # never carry over to the next task. Retries are the driver's, onto another node.
        remote = ray.remote(num_gpus=1, max_retries=0, max_calls=1)(task)
        site = opts.records / "sitegen.toml"
        # As every registry input (sitegen.core.inputfile): a FIFO or a link out of the registry is one line.
        settings = read_regular(site, 1024 * 1024, registry=opts.records) if site.exists() or site.is_symlink() else None
        fleet = Fleet(ray, remote, opts, settings)
        tasks, short = [], {}
        for product in chosen:
            if found[product] < replicas:
                short[product] = f"--replicas {replicas} needs {replicas} GPUs of {product}; the cluster has {found[product]}"
            elif replicas > 1:
                from ray.util.placement_group import placement_group

                bundle = {"CPU": 1, "GPU": 1, ACCELERATOR + product: PRODUCT_SHARE}  # what a task asks for
                fleet.groups[product] = placement_group([bundle] * replicas, strategy="SPREAD")
            tasks += [Task(product, r, w) for w in opts.loads for r in range(replicas)]
        progress = Progress(tasks)
        for t in tasks:
            if t.product in short:
                t.state, t.outcome = "done", {"refused": [short[t.product]]}
                progress.event(t, f"refused: {short[t.product]}")
            else:
                fleet.submit(t)
                progress.event(t, "queued")
        try:
            checked = time.monotonic()
            while fleet.active:
                ready, _ = ray.wait(list(fleet.active), num_returns=1, timeout=1.0)
                for gen in ready:
                    fleet.step(gen, progress)
                if not ready and time.monotonic() - checked > STRANDED_CHECK_S:
                    fleet.stranded(progress)
                    checked = time.monotonic()
        except KeyboardInterrupt:
            fleet.cancel()
            raise
        table = fleetreport.rows(tasks, opts.passes, tuple(ref.name for ref in opts.impls))
        written = _write(tasks, opts.out, opts.op.name, opts.key, opts.journal)
    finally:
        ray.shutdown()
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
    verdicts = {fleetreport.gpu_of(t.where): t.outcome["summary"]["verdict"]
                for t in tasks if "verdict" in (t.outcome or {}).get("summary", {})}
    summary: dict[str, Any] = {
        "ok": all(r["outcome"] == "measured" for r in table), "ray": address, "products": chosen,
        "replicas": replicas, "cases": table, "written": written, "elapsedS": round(time.monotonic() - t0, 1),
    }
    if verdicts:
        summary["verdicts"] = verdicts
    return summary
