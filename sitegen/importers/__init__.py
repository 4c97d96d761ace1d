"""Importers, a feature: other tools' benchmark results brought into a registry as Reported runs.

    core.py      the plan every importer fills and the one transactional write
    plugin.py    finding an importer by name (sitegen's, an entry point, or pkg.module:Name)
    harness.py   what the harness importers share (pytest-benchmark, Google Benchmark, NVBench,
                 TritonBench, a mapped table); liger*.py and kernelbench*.py, the two sources

The documents they write use sitegen.core.identity, so an import and a rerun of the same work
land in one cohort. May import the layers below the features; never site, rerun, trust or gate.
"""
