"""``python -m sitegen.rerun``: the rerun command without the rest of the CLI (GPU hosts lack pydantic)."""

from sitegen.cli.rerun import rerun

if __name__ == "__main__":
    rerun(prog_name="sitegen rerun")
