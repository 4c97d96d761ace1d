"""The identities of what is measured, as documents: operations, workloads, implementations,
named as Liger-Kernel's benchmarks name them, so importers and the rerun harness build them alike.

The name tables they are built from live in ligertables.py.

Stdlib only (plus sitegen.core.digest and sitegen.core.documents, which need rfc8785 but not
pydantic): the GPU rerun harness imports this module on hosts without pydantic, and must
produce byte-identical OperationSpec and WorkloadCase documents so its runs land in the same
cohorts as the imported ones. Anything here that changes a ``spec`` changes digests, so edit with care.
"""

from __future__ import annotations

import re
from typing import Any

from sitegen.core.digest import document_digest
from sitegen.core.documents import document
from sitegen.core.ligertables import (
    AXIS_DESCRIPTIONS,
    CALLABLES,
    JSD_DTYPES,
    JSD_SPEC_EXTRA,
    KERNELS,
    LIGER_REPOSITORY,
    PASS_NOTES,
    PROVIDERS,
    SEMANTICS,
)


def _axes(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"name": name, "description": description} for name, description in pairs]


def name_slug(text: str) -> str:
    """A name segment: lowercase, runs of other characters as one "-", no "-" at either end."""
    # Names admit no ".." (they become paths), so runs of dots collapse to one.
    return re.sub(r"\.{2,}", ".", re.sub(r"[^a-z0-9.]+", "-", text.lower())).strip("-.")


def kernel_title(kernel: str) -> str:
    """Human name of a kernel; an unknown one reads as words: "foo_bar" → "Foo bar"."""
    known = KERNELS.get(kernel)
    if known is not None:
        return known["title"]
    return kernel.replace("_", " ").strip().capitalize() or kernel


def operation_name(kernel: str) -> str:
    """metadata.name of a kernel's OperationSpec: the kernel name with "_" → "-"."""
    return name_slug(kernel.replace("_", "-"))


def operation_axes(kernel: str) -> list[str]:
    """Axis names of a known kernel's workloads, in display order ([] for an unknown kernel)."""
    known = KERNELS.get(kernel)
    return list(known["axes"]) if known else []


def operation_document_with_axes(kernel: str, axes: list[str]) -> dict[str, Any]:
    """The OperationSpec of ``kernel``; ``axes`` only matter for a kernel not in KERNELS."""
    known = KERNELS.get(kernel)
    family = known["family"] if known else "uncategorized"
    axis_names = known["axes"] if known else axes
    spec: dict[str, Any] = {
        "family": family,
        "axes": _axes(*[(name, AXIS_DESCRIPTIONS.get(name, name.replace("_", " "))) for name in axis_names]),
    }
    if kernel == "jsd":
        spec.update(JSD_SPEC_EXTRA)
    elif kernel in SEMANTICS:
        spec["semantics"] = {"expression": SEMANTICS[kernel]}
    metadata: dict[str, Any] = {"name": operation_name(kernel), "title": kernel_title(kernel)}
    if known and known["description"]:
        metadata["description"] = known["description"]
    return document("OperationSpec", metadata, spec)


def operation_document(kernel: str) -> dict:
    """The full OperationSpec document of a Liger benchmark kernel, e.g. "jsd"."""
    return operation_document_with_axes(kernel, [])


def axes_label(axes: dict[str, Any], dtype: str | None) -> str:
    """How a workload reads: "vocab = 128256 · tokens = 2048 · fp32" (axes in order, then dtype)."""
    parts = [f"{name} = {value}" for name, value in axes.items()]
    if dtype:
        parts.append(dtype)
    return " · ".join(parts)


def case_slug(axes: dict[str, Any], dtype: str | None) -> str:
    """A workload in one name segment: axes alphabetically, then dtype ("tokens2048-vocab128256-fp32")."""
    parts = [f"{name_slug(name)}{name_slug(str(value))}" for name, value in sorted(axes.items())]
    if dtype:
        parts.append(name_slug(dtype))
    return "-".join(parts)


def workload_document(
    kernel: str, axes: dict[str, Any], *, dtype: str | None = None, tensors: list[dict] | None = None,
    scalars: dict[str, Any] | None = None, config: dict[str, Any] | None = None,
    operation: dict[str, Any] | None = None, description: str | None = None,
) -> dict[str, Any]:
    """A WorkloadCase of ``kernel``; correctness is "not_asserted" (the source publishes no check)."""
    op = operation or operation_document(kernel)
    spec: dict[str, Any] = {"operationSpecDigest": document_digest(op), "axes": dict(axes)}
    if dtype:
        spec["dtype"] = dtype
    if tensors:
        spec["tensors"] = tensors
    if scalars:
        spec["scalars"] = dict(scalars)
    if config:
        spec["config"] = dict(config)
    spec["correctness"] = {"comparator": "not_asserted"}
    metadata: dict[str, Any] = {
        "name": f"{operation_name(kernel)}-{case_slug(axes, dtype)}",
        "title": axes_label(axes, dtype),
    }
    if description:
        metadata["description"] = description
    return document("WorkloadCase", metadata, spec)


def jsd_workload_document(tokens: int, vocab: int, dtype: str) -> dict:
    """The WorkloadCase of JSD on [tokens, vocab] student and teacher log-probabilities.

    ``dtype`` is "fp32", "bf16" or "fp16". Imported Liger rows and sitegen reruns of the
    same shape and type produce this same document, hence the same digest and cohort.
    """
    if dtype not in JSD_DTYPES:
        raise ValueError(f"dtype must be fp32, bf16 or fp16, got {dtype!r}")
    for label, value in (("tokens", tokens), ("vocab", vocab)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{label} must be a positive integer, got {value!r}")
    tensors = [
        {"name": name, "dtype": dtype, "shape": [tokens, vocab]}
        for name in ("student_log_probs", "teacher_log_probs")
    ]
    return workload_document("jsd", {"vocab": vocab, "tokens": tokens}, dtype=dtype, tensors=tensors)


def provider_info(provider: str) -> dict[str, Any]:
    """Shown name, project, repository and license of a provider; unknown ones read as words."""
    known = PROVIDERS.get(provider)
    if known is not None:
        return known
    words = provider.replace("_", " ").replace("-", " ").strip() or provider
    return {"name": words, "project": words, "liger": provider.startswith("liger")}


def implementation_name(kernel: str, provider: str, version: str | None) -> str:
    """metadata.name of an ImplementationRevision, e.g. "liger-jsd-0.8.0" or "torch-jsd"."""
    parts = [name_slug(provider), operation_name(kernel)]
    if version:
        parts.append(name_slug(version))
    return "-".join(part for part in parts if part)


def implementation_document(kernel: str, provider: str, version: str | None) -> dict:
    """The ImplementationRevision of ``provider``'s code for ``kernel``.

    ``version`` is the project's released version where known (for Liger providers, the
    Liger release); no commit is known for published benchmark data.
    """
    return implementation_document_for(operation_document(kernel), kernel, provider, version)


def implementation_document_for(operation: dict[str, Any], kernel: str, provider: str, version: str | None) -> dict[str, Any]:
    """As implementation_document, against a given OperationSpec (an unknown kernel's)."""
    info = provider_info(provider)
    revision: dict[str, Any] = {"project": info["project"]}
    if info.get("repository"):
        revision["repository"] = info["repository"]
    if version:
        revision["version"] = version
    spec: dict[str, Any] = {
        "name": info["name"],
        "projectRevision": revision,
        "operation": {"specDigest": document_digest(operation)},
    }
    entry = CALLABLES.get((kernel, provider))
    if entry:
        spec["callable"] = {**entry, **({"variant": info["variant"]} if info.get("variant") else {})}
    if info.get("license"):
        spec["licensing"] = {"license": info["license"]}
    notes = PASS_NOTES.get((kernel, provider))
    if notes:
        spec["passNotes"] = dict(notes)
    title = f"{info['name']} {version}" if version else info["name"]
    return document(
        "ImplementationRevision",
        {"name": implementation_name(kernel, provider, version), "title": f"{title} · {kernel_title(kernel)}"},
        spec,
    )


__all__ = [
    "JSD_DTYPES", "KERNELS", "LIGER_REPOSITORY", "PROVIDERS", "SEMANTICS", "axes_label", "case_slug",
    "implementation_document", "implementation_document_for", "jsd_workload_document", "kernel_title", "name_slug",
    "operation_axes", "operation_document", "operation_document_with_axes", "operation_name", "provider_info",
    "workload_document",
]
