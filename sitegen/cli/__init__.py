"""The command line: every click command, each a thin function over a feature's entry point.

The top layer: may import anything below. ``sitegen.cli.rerun`` also runs on GPU hosts without
pydantic (``python -m sitegen.rerun``), so this package's import pulls in nothing.
"""
