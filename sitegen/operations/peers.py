"""What the shipped operations share: their documents (the Liger importer's, so that reruns
join the Reported cohorts) and their peers' revision records (sitegen's own kernels, Liger's
modules, torch eager and torch.compile)."""

from __future__ import annotations

from typing import Any, ClassVar

from sitegen.operations.base import Implementation
from sitegen.core.workload import Workload


def kernels_file(name: str):
    """A file of the bundled kernels, located without importing sitegen.kernels (which imports torch)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("sitegen.kernels")
    return Path(next(iter(spec.submodule_search_locations))) / name


def revision(source: str, *, version, commit, repository) -> dict[str, Any]:
    """projectRevision of sitegen code whose bytes are those of kernels/``source``."""
    from sitegen.core.revision import source_digest

    return {"project": "sitegen", **{k: v for k, v in (
        ("repository", repository), ("commit", commit), ("version", version),
        ("sourceDigest", source_digest(kernels_file(source)))) if v}}


def bundled_document(kernel: str, source: str, target: tuple[str, str], *, title: str, record: str, version,
                     commit, repository, **spec) -> dict[str, Any]:
    """ImplementationRevision ``record`` of sitegen's own kernel for ``kernel`` (kernels/``source``):
    the importer's, with the revision and callable that ran and ``spec``'s further fields."""
    from sitegen.core import identity
    from sitegen.core.documents import named

    doc = identity.implementation_document(kernel, "sitegen", None)
    module, name = target
    doc["spec"].update({"name": "sitegen",
                        "projectRevision": revision(source, version=version, commit=commit, repository=repository),
                        "callable": {"module": module, "name": name}, **spec})
    doc["metadata"]["title"] = title
    return named(doc, record)


class ImportedDocuments:
    """An operation of Liger's benchmark (``kernel``): its OperationSpec and WorkloadCases exactly
    as sitegen's Liger importer writes them (axes in the importer's order, its scalars)."""

    kernel: ClassVar[str]
    scalars: ClassVar[dict[str, Any]] = {}

    @property
    def definition(self) -> str:
        from sitegen.core.ligertables import SEMANTICS

        return SEMANTICS.get(self.kernel, self.title)

    def operation_document(self) -> dict[str, Any]:
        from sitegen.core import identity

        return identity.operation_document(self.kernel)

    def workload_document(self, w: Workload) -> dict[str, Any]:
        from sitegen.core import identity

        axes = {name: w[name] for name in identity.operation_axes(self.kernel)}
        return identity.workload_document(self.kernel, axes, dtype=w.dtype, scalars=self.scalars or None)


class Peer(Implementation):
    """A peer the Liger importer knows (``kernel``, ``provider``): its ImplementationRevision is
    the importer's, Liger's exactly (same pages), torch's with the callable that ran."""

    kernel: ClassVar[str]
    provider: ClassVar[str]
    callable: ClassVar[tuple[str, str]] = ("", "")

    def document(self, op: dict, *, run_version, **_) -> dict:
        from sitegen.core import identity
        from sitegen.core.documents import named

        doc = identity.implementation_document(self.kernel, self.provider, run_version)
        if self.provider == "liger":
            return doc
        module, name = self.callable
        doc["spec"]["callable"] = {"module": module, "name": name,
                                   "variant": "torch.compile" if self.provider == "torch_compile" else "eager"}
        self.amend(doc["spec"])
        return named(doc, doc["metadata"]["name"])

    def amend(self, spec: dict) -> None:
        """Anything more the record must say of this peer (before its name is derived)."""


class LigerPeer(Peer):
    """Liger-Kernel's module ``liger_class`` (from liger_kernel.transformers), built with
    ``liger_kwargs``."""

    provider = "liger"
    liger_class: ClassVar[str]
    liger_kwargs: ClassVar[dict[str, Any]] = {}

    def available(self) -> str | None:
        try:
            import liger_kernel.transformers as lt

            getattr(lt, self.liger_class)
        except Exception as exc:  # an optional peer that fails to import is simply absent
            return f"{type(exc).__name__}: {exc}"
        return None

    def version(self) -> str | None:
        import importlib.metadata

        try:
            return importlib.metadata.version("liger-kernel")
        except importlib.metadata.PackageNotFoundError:
            import liger_kernel

            return getattr(liger_kernel, "__version__", None)

    def build(self, *, dynamic: bool = False):
        import liger_kernel.transformers as lt

        return getattr(lt, self.liger_class)(**self.liger_kwargs)


class TorchPeer(Peer):
    """A torch module (``module()``), eager or, with provider torch_compile, compiled."""

    provider = "torch"
    module_kwargs: ClassVar[dict[str, Any]] = {}

    def version(self) -> str | None:
        import torch

        return torch.__version__

    def module(self):
        """The module class ``callable`` names, built with ``module_kwargs``: the record names what runs.
        Override where ``callable`` names a function or the peer itself."""
        import importlib

        module, name = self.callable
        return getattr(importlib.import_module(module), name)(**self.module_kwargs)

    def build(self, *, dynamic: bool = False):
        """torch.compile is timed with static shapes (one graph per timed shape, the fastest code
        it makes); the gate, which sees several shapes and never times, may ask for dynamic=True."""
        module = self.module()
        if self.provider == "torch_compile":
            import torch

            return torch.compile(module, dynamic=dynamic)
        return module
