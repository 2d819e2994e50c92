"""CLI commands: `statewright install codex|gemini|copilot [--scope project|user] [--hooks
mcp|process] [--uninstall]`.

What goes where is `statewright.hostwiring` (pure). As for Claude Code (`install claude`):
every file is read and checked first, so one bad file changes nothing anywhere; files are
written atomically and only when they change; a file that uninstalling leaves empty is removed.
Each command ends by saying what the host does when a hook fails and the host's trust step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from .. import hostwiring as hw
from ..errors import INVALID_ARGUMENTS, StatewrightError
from ..wiring import CLI_SCRIPT
from .app import ProjectOpt, console
from .install_files import (
    _bad,
    hook_program,
    install_app,
    read_json_file,
    script_path,
    write_json_file,
    write_text_file,
)

#: what the user must do once before the host runs the project's hooks
TRUST: dict[str, str] = {
    "codex": "Codex runs a hook only once it is reviewed: open `codex` in the project and "
             "approve statewright's hooks in `/hooks` (and trust the project, for project-scope "
             "files); headless runs in CI pass `--dangerously-bypass-hook-trust` instead.",
    "gemini": "Gemini CLI runs project hooks only in a trusted folder: trust the project when "
              "Gemini CLI asks (or add it to ~/.gemini/trustedFolders.json), and confirm the "
              "project's hooks when asked.",
    "copilot": "Copilot CLI runs hooks only in a trusted folder: trust the project when Copilot "
               "CLI asks (or add it to `trustedFolders` in ~/.copilot/settings.json).",
}


def plan_files(p: hw.HostPlan, uninstall: bool) -> list[tuple[Path, Any, bool, bool]]:
    """[(path, new content (a dict, or text for TOML), changed, remove)], every file read and
    checked first."""
    keep = None if uninstall else p
    out: list[tuple[Path, Any, bool, bool]] = []
    if p.host == "copilot":
        cur, existed = read_json_file(p.hooks_file)
        new = {} if uninstall else hw.copilot_hooks(p)
        if uninstall:
            out.append((p.hooks_file, new, existed, existed))
        else:
            out.append((p.hooks_file, new, cur != new, False))
        return out
    cur, existed = read_json_file(p.hooks_file)
    cur = {} if cur is None else cur
    problems = hw.nested_problems(cur)
    if problems:
        raise _bad(p.hooks_file, problems)
    new = hw.merge_nested(cur, keep, p.host)
    if p.host == "gemini":
        if not uninstall and hw.server_taken(new):
            raise _bad(p.hooks_file, [("/mcpServers/statewright", "a server of that name that "
                                       "is not statewright's proxy is configured; rename it "
                                       "first")])
        new = hw.merge_json_server(new, keep)
    out.append((p.hooks_file, new, new != cur, uninstall and existed and new == {}))
    if p.host == "codex":  # (the proxy in both forms: its tools are how the agent moves on)
        assert p.servers_file is not None
        try:
            text = p.servers_file.read_text(encoding="utf-8")
            had = True
        except FileNotFoundError:
            text, had = "", False
        except (OSError, UnicodeDecodeError) as exc:
            raise StatewrightError(INVALID_ARGUMENTS, f"{p.servers_file}: cannot read: {exc}; "
                                   "nothing was changed") from None
        try:
            new_text = hw.merge_toml_server(text, keep)
        except ValueError as exc:
            raise StatewrightError(INVALID_ARGUMENTS, f"{p.servers_file}: {exc}; nothing was "
                                   "changed") from None
        out.append((p.servers_file, new_text, new_text != text,
                    uninstall and had and not new_text.strip()))
    return out


def install_host_files(host: str, root: Path, scope: str = "project", form: str | None = None,
                       uninstall: bool = False) -> list[tuple[Path, str]]:
    if scope not in hw.HOST_SCOPES:
        raise StatewrightError(INVALID_ARGUMENTS, f"--scope must be one of "
                               f"{', '.join(hw.HOST_SCOPES)} for {host}, not {scope!r}")
    form = form or "mcp"
    if form not in hw.HOST_FORMS:
        raise StatewrightError(INVALID_ARGUMENTS, f"--hooks must be one of "
                               f"{', '.join(hw.HOST_FORMS)}, not {form!r}")
    hook_bin = cli_bin = ""
    if not uninstall and scope != "project":
        hook_bin, cli_bin = hook_program(), script_path(CLI_SCRIPT)
    p = hw.plan(host, scope, form, root, hook_bin, cli_bin)
    report = []
    for path, content, changed, remove in plan_files(p, uninstall):
        if remove:
            path.unlink()
            _remove_empty_dirs(path.parent, root)
            report.append((path, "removed (it held only statewright's wiring)"))
        elif changed:
            if isinstance(content, str):
                write_text_file(path, content)
            else:
                write_json_file(path, content)
            report.append((path, "removed from" if uninstall else "installed in"))
        else:
            report.append((path, "not present in" if uninstall else "already up to date in"))
    return report


def _remove_empty_dirs(d: Path, root: Path) -> None:
    """The host's directories an uninstall left empty (`.codex`, `.gemini`, `.github/hooks`,
    `.github`), in the project only."""
    while d != root and root in d.parents and d.name in (".codex", ".gemini", "hooks",
                                                          ".github"):
        try:
            d.rmdir()
        except OSError:
            return
        d = d.parent


def _command(host: str, scope: str, hooks: str | None, uninstall: bool,
             project: str | None) -> None:
    from ..config import find_project_root

    root = find_project_root(project)
    for path, what in install_host_files(host, root, scope, hooks, uninstall):
        if what.startswith("removed ("):
            console.print(f"{path}: {what}", highlight=False, soft_wrap=True)
            continue
        unchanged = what in ("not present in", "already up to date in")
        console.print(f"statewright {what} {path}" + (" (unchanged)" if unchanged else ""),
                      highlight=False, soft_wrap=True)
    if uninstall:
        return
    console.print(f"When a hook fails, {host}: {hw.POSTURE[host]}.", highlight=False,
                  soft_wrap=True)
    console.print(TRUST[host], highlight=False, soft_wrap=True)
    if scope == "project":
        console.print("Commit these files: they name programs found on PATH, so they work on "
                      "every machine with statewright installed.", highlight=False,
                      soft_wrap=True)


_SCOPE_HELP = ("project: files in the project a team commits (no machine paths); user: the "
               "host's per-user files, every project.")


@install_app.command("codex", help="Install (or --uninstall) statewright's hooks and proxy "
                                   "for OpenAI Codex CLI.")
def install_codex(
    scope: str = typer.Option("project", "--scope", help=_SCOPE_HELP),
    hooks: str | None = typer.Option(
        None, "--hooks", help="mcp: per-call hooks answered by the running proxy (no process "
        "per call; default); process: the statewright-hook program."),
    uninstall: bool = typer.Option(False, "--uninstall",
                                   help="Remove only statewright's hooks and server."),
    project: str | None = ProjectOpt,
) -> None:
    _command("codex", scope, hooks, uninstall, project)


@install_app.command("gemini", help="Install (or --uninstall) statewright's hooks and proxy "
                                    "for Google Gemini CLI.")
def install_gemini(
    scope: str = typer.Option("project", "--scope", help=_SCOPE_HELP),
    uninstall: bool = typer.Option(False, "--uninstall",
                                   help="Remove only statewright's hooks and server."),
    project: str | None = ProjectOpt,
) -> None:
    _command("gemini", scope, "process", uninstall, project)


@install_app.command("copilot", help="Install (or --uninstall) statewright's hooks for GitHub "
                                     "Copilot CLI.")
def install_copilot(
    scope: str = typer.Option("project", "--scope", help=_SCOPE_HELP),
    uninstall: bool = typer.Option(False, "--uninstall",
                                   help="Remove only statewright's hooks."),
    project: str | None = ProjectOpt,
) -> None:
    _command("copilot", scope, "process", uninstall, project)
