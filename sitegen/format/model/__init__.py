"""The kernelindex.dev/v1alpha1 record format: one pydantic model per kind."""

from __future__ import annotations

from typing import get_args

from sitegen.format.model.common import API_VERSION, Metadata
from sitegen.format.model.definitions import ImplementationRevision, OperationSpec, WorkloadCase
from sitegen.format.model.run import Attestation, BenchmarkRun
from sitegen.format.model.setup import BenchmarkProtocol, ExecutionEnvironment

Document = (
    OperationSpec | WorkloadCase | ImplementationRevision | BenchmarkProtocol
    | ExecutionEnvironment | BenchmarkRun | Attestation
)

KINDS: dict[str, type[Document]] = {model.__name__: model for model in get_args(Document)}

# The keys of a bundled record file, as the canonical manifest on a record page.
BUNDLE_KINDS = {"run": "BenchmarkRun", "protocol": "BenchmarkProtocol", "environment": "ExecutionEnvironment"}

__all__ = [
    "API_VERSION", "KINDS", "BUNDLE_KINDS", "Document", "Metadata", "OperationSpec",
    "WorkloadCase", "ImplementationRevision", "BenchmarkProtocol", "ExecutionEnvironment",
    "BenchmarkRun", "Attestation",
]
