"""The `zgain` command line: tools around the DVC pipeline (each stage keeps its own module)."""

from __future__ import annotations

import typer

from zgain.commands.shard import shard

app = typer.Typer(help="Tools around the zgain DVC pipeline.", no_args_is_help=True)
app.command("shard")(shard)


@app.callback()
def main() -> None:
    """Tools around the zgain DVC pipeline (`dvc repro` runs the pipeline itself)."""
