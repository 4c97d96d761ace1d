"""The registry folder: where records live (layout), the lock file, crash-safe transactions, the
project's sitegen.toml (config) and opening a folder as a checked registry (folder).

May import: sitegen.core, sitegen.rules, sitegen.format.
"""
