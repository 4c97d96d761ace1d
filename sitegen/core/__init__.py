"""The core: the vocabulary and utilities every layer shares, with no pydantic.

Problems and input reading, strict JSON and digests, atomic writes, the identities of operations,
workloads and implementations (the documents the importers and the rerun harness must build
byte for byte alike), units, process pools and progress. GPU hosts import it without pydantic.
May import: nothing else of sitegen (``sitegen`` itself for its version excepted).
"""
