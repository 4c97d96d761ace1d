"""The build state: the per-registry store of what was loaded, summarised and written before, so
that a build or a lock does work in proportion to the change.

May import: sitegen.core, sitegen.rules, sitegen.format, sitegen.registry.
"""
