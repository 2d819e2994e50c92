"""CLI command: `statewright schema [--config] [--output FILE]` — the published JSON schema of
workflow definitions (or of `statewright.json`), for people who installed statewright with pip
and have no `schema/` folder. The files are `schema/*.json` of the source tree, shipped inside
the wheel as package data (`config.schema_path`)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..config import CONFIG_SCHEMA, WORKFLOW_SCHEMA, schema_path
from ..errors import INVALID_ARGUMENTS, StatewrightError
from .app import app


@app.command("schema")
def schema_cmd(
    config: bool = typer.Option(False, "--config",
                                help="The schema of statewright.json instead of workflows'."),
    output: str | None = typer.Option(None, "--output", "-o", metavar="FILE",
                                      help="Write the schema to FILE instead of printing it."),
) -> None:
    """Print the published JSON schema (draft 2020-12) of workflow definitions.

    Point a workflow's "$schema" at the written file and editors complete and check its fields.
    """
    src = schema_path(CONFIG_SCHEMA if config else WORKFLOW_SCHEMA)
    text = src.read_text(encoding="utf-8")
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    dest = Path(output)
    try:
        dest.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise StatewrightError(INVALID_ARGUMENTS,
                               f"--output: cannot write {output}: {exc.strerror or exc}") from None
    sys.stderr.write(f"wrote {src.name} to {dest}\n")
