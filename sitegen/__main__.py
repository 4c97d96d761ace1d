"""``python -m sitegen``: the same as the ``sitegen`` command."""

from sitegen.cli.main import main

main(prog_name="sitegen")
