"""The shared catalog: pydantic-free, valid documents, stable JSD identities."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sitegen.core.digest import document_digest
from sitegen.core import identity
from sitegen.format.model import KINDS


def _valid(document: dict) -> None:
    KINDS[document["kind"]].model_validate(document, strict=True)


def test_catalog_imports_without_pydantic():
    code = (
        "import sys; sys.modules['pydantic'] = None\n"
        "from sitegen.core.ligertables import KERNELS, PROVIDERS\n"
        "from sitegen.core.identity import jsd_workload_document, operation_document, implementation_document\n"
        "jsd_workload_document(2048, 128256, 'fp32'); operation_document('jsd'); implementation_document('jsd', 'liger', '0.8.0')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("kernel", sorted(identity.KERNELS))
def test_every_operation_is_valid_and_named(kernel):
    document = identity.operation_document(kernel)
    _valid(document)
    assert document["metadata"]["name"] == kernel.replace("_", "-")
    assert document["metadata"]["title"] and "_" not in document["metadata"]["title"]


def test_unknown_kernel_reads_as_words():
    assert identity.operation_document("foo_bar")["metadata"]["title"] == "Foo bar"


def test_jsd_workload_references_the_jsd_operation_and_reads_like_the_seed():
    workload = identity.jsd_workload_document(2048, 128256, "fp32")
    _valid(workload)
    assert workload["spec"]["operationSpecDigest"] == document_digest(identity.operation_document("jsd"))
    assert workload["metadata"]["title"] == "vocab = 128256 · tokens = 2048 · fp32"
    assert [t["shape"] for t in workload["spec"]["tensors"]] == [[2048, 128256], [2048, 128256]]
    assert workload["spec"]["correctness"] == {"comparator": "not_asserted"}


def test_jsd_workload_rejects_an_unknown_dtype():
    with pytest.raises(ValueError):
        identity.jsd_workload_document(2048, 128256, "float32")


def test_liger_releases_are_distinct_implementations():
    new = identity.implementation_document("jsd", "liger", "0.8.0")
    old = identity.implementation_document("jsd", "liger", "0.2.1")
    for document in (new, old):
        _valid(document)
    assert document_digest(new) != document_digest(old)
    assert new["spec"]["name"] == "Liger" and new["spec"]["projectRevision"]["project"] == "Liger-Kernel"
    assert "commit" not in new["spec"]["projectRevision"]
