"""The published rules: the protocol's constants, the statistics, the integrity thresholds, the
recomputation of a run's stated figures and the verdicts a page or a gate may print.

Every number a reader is shown is judged here, once, for the site, the rerun harness and the
gate alike. May import: sitegen.core only.
"""
