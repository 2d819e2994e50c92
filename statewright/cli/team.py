"""CLI commands for teams: `token` (the approvers' and admins' tokens of a store) and `audit`
(the history with its hash chain: `export`, and `verify`, which needs no store)."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from ..errors import INVALID_ARGUMENTS, StatewrightError
from .app import ProjectOpt, app, json_option
from .base import answer

token_app = typer.Typer(help="Make, list and revoke the tokens that name approvers and admins.",
                        no_args_is_help=True)
audit_app = typer.Typer(help="Export the history with its hash chain; verify an export "
                             "offline.", no_args_is_help=True)
app.add_typer(token_app, name="token")
app.add_typer(audit_app, name="audit")

AdminTokenOpt = typer.Option(None, "--token", help="An admin's token (default: "
                             "$STATEWRIGHT_TOKEN); not needed for a store's first admin.",
                             show_default=False)


def _runtime(project: str | None) -> Any:
    from ..runtime import Runtime

    return Runtime.open(project)


def _admin(token: str | None) -> str | None:
    import os

    from ..runtime.people import TOKEN_ENV

    return token or os.environ.get(TOKEN_ENV) or None


@token_app.command("create")
def token_create(
    role: str = typer.Option(..., "--role", help="approver (decides parked transitions), admin "
                             "(also makes tokens) or agent (names an agent to `serve --http`)."),
    name: str = typer.Option(..., "--name", help="Whose token: the name history records."),
    token: str | None = AdminTokenOpt,
    as_json: bool = json_option(),
    project: str | None = ProjectOpt,
) -> None:
    """Make a token and print it once (the store keeps only its hash)."""
    from ..runtime.people import create_token

    made = create_token(_runtime(project), role, name, _admin(token))

    def show() -> None:
        print(made["token"])
        sys.stderr.write(f"{made['role']} token {made['id']} for {made['subject']}: shown once, "
                         "keep it where agents cannot read it (not in the project)\n")

    answer(made, as_json, show)


@token_app.command("list")
def token_list(as_json: bool = json_option(), project: str | None = ProjectOpt) -> None:
    """List the store's tokens: id, name, role, made, revoked (never the tokens themselves)."""
    from ..runtime.people import list_tokens

    rows = list_tokens(_runtime(project))

    def show() -> None:
        if not rows:
            print("no tokens yet — `statewright token create --role admin --name NAME`")
        for t in rows:
            state = "revoked" if t["revoked_at"] else "live"
            print(f"{t['id']}  {t['role']:<8}  {t['subject']}  ({state})")

    answer(rows, as_json, show)


@token_app.command("revoke")
def token_revoke(
    token_id: str = typer.Argument(..., help="The token's id, as `token list` shows it."),
    token: str | None = AdminTokenOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Revoke a token: it decides nothing from now on."""
    from ..runtime.people import revoke_token

    revoke_token(_runtime(project), token_id, _admin(token))
    print(f"revoked {token_id}")


@audit_app.command("export")
def audit_export(
    run_id: str | None = typer.Argument(None, help="A run (with the runs it started); default: "
                                                   "every run of the project."),
    output: str | None = typer.Option(None, "--output", "-o", help="Write to FILE, not stdout."),
    project: str | None = ProjectOpt,
) -> None:
    """Write the history with its hash chain, one JSON object a line, for `audit verify`."""
    from ..runtime.audit import export

    rows = export(_runtime(project), run_id)
    out = open(output, "w", encoding="utf-8") if output else sys.stdout
    try:
        for row in rows:
            out.write(json.dumps(row, separators=(",", ":")) + "\n")
    finally:
        if output:
            out.close()


@audit_app.command("verify")
def audit_verify(
    file: str = typer.Argument(..., help="An export (`statewright audit export`)."),
    against_store: bool = typer.Option(
        False, "--against-store", help="Also compare each run's count and last hash with the "
        "store's (a file rewritten whole cannot match them)."),
    as_json: bool = json_option(),
    project: str | None = ProjectOpt,
) -> None:
    """Check an export offline: every row against its hash, every link, each run's head."""
    from ..store.chain import verify_export

    try:
        with open(file, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise StatewrightError(INVALID_ARGUMENTS, f"{file}: cannot read it: {exc}") from None
    counts, problems = verify_export(lines)
    if against_store and counts:
        from ..lean import loads
        from ..runtime.audit import store_chains

        stored = store_chains(_runtime(project), sorted(counts))
        for line in lines:
            row = loads(line) if line.strip().startswith("{") else None
            if not (isinstance(row, dict) and row.get("type") == "head"):
                continue
            rid, n = str(row.get("run_id")), row.get("count")
            chain = stored.get(rid, [])
            if not isinstance(n, int) or n < 1 or len(chain) < n:
                problems.append(f"run {rid}: the store holds {len(chain)} rows, the export says "
                                f"{n}")
            elif chain[n - 1] != row.get("hash"):  # (rows after n: the run went on since)
                problems.append(f"run {rid}: the store's chain has {chain[n - 1][:12]} at row "
                                f"{n}, the export {str(row.get('hash'))[:12]} (the export was "
                                "rewritten, or the store)")
    result = {"ok": not problems, "runs": len(counts), "rows": sum(counts.values()),
              "problems": problems}

    def show() -> None:
        if problems:
            for p in problems:
                print(p)
        else:
            print(f"ok: {result['rows']} rows of {result['runs']} run(s), every hash and link "
                  "intact")

    answer(result, as_json, show)
    if problems:
        raise typer.Exit(1)
