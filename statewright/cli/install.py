"""CLI command: `statewright install claude [--scope local|project|user] [--hooks mcp|process]
[--uninstall]`.

Wires statewright into Claude Code in one command; what goes where is `statewright.wiring`
(pure). This module reads, checks and writes the files: every file is read and checked first, so
one bad file changes nothing anywhere; a file that is not valid JSON, or not of Claude Code's
shape, is an error naming the spot. Files are written atomically (temp file + rename) and only
when they change; a settings file that uninstalling leaves empty is removed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from .. import wiring
from ..errors import INVALID_ARGUMENTS, StatewrightError
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

# -- planning ----------------------------------------------------------------------------------

def plan_claude_install(p: wiring.Plan, uninstall: bool
                        ) -> list[tuple[Path, dict[str, Any], bool, bool]]:
    """Read, check and merge every file first. Returns [(path, new content, changed,
    remove)]; `remove` when uninstalling leaves a settings file empty."""
    out = []
    current, existed = read_json_file(p.settings)
    current = {} if current is None else current
    problems = wiring.settings_problems(current)
    if problems:
        raise _bad(p.settings, problems)
    new = wiring.merge_hooks(current, None if uninstall else p)
    out.append((p.settings, new, new != current, uninstall and existed and new == {}))
    if p.servers is not None:
        cur, _existed = read_json_file(p.servers)
        cur = {} if cur is None else cur
        problems = wiring.servers_problems(cur, p.servers_key)
        if problems:
            raise _bad(p.servers, problems)
        new = wiring.merge_server(cur, p.servers_key, None if uninstall else p)
        remove = (uninstall and p.scope == "project" and new == {}) if _existed else False
        out.append((p.servers, new, new != cur, remove))
    return out


def install_claude_files(root: Path, scope: str = "local", hooks: str | None = None,
                         uninstall: bool = False) -> list[tuple[Path, str]]:
    """Install (or remove) the wiring; [(file, what happened)]. `init` calls this too."""
    if scope not in wiring.SCOPES:
        raise StatewrightError(INVALID_ARGUMENTS, f"--scope must be one of "
                               f"{', '.join(wiring.SCOPES)}, not {scope!r}")
    if hooks is None:
        hooks = "process" if scope == "project" else "mcp"
    if hooks not in wiring.HOOK_FORMS:
        raise StatewrightError(INVALID_ARGUMENTS, f"--hooks must be one of "
                               f"{', '.join(wiring.HOOK_FORMS)}, not {hooks!r}")
    hook_bin = cli_bin = ""
    if not uninstall and scope != "project":
        hook_bin, cli_bin = hook_program(), script_path(wiring.CLI_SCRIPT)
    p = wiring.plan(scope, hooks, root, hook_bin, cli_bin)
    steps = plan_claude_install(p, uninstall)
    report = []
    if scope == "local":
        excluded = git_exclude(p.settings, remove=uninstall)
        if excluded is not None:
            report.append(excluded)
    for path, content, changed, remove in steps:
        if remove:
            path.unlink()
            _remove_empty_dir(path.parent, root)
            report.append((path, "removed (it held only statewright's wiring)"))
        elif changed:
            write_json_file(path, content)
            report.append((path, "removed from" if uninstall else "installed in"))
        else:
            report.append((path, "not present in" if uninstall else "already up to date in"))
    return report


def git_exclude(path: Path, remove: bool = False) -> tuple[Path, str] | None:
    """Keep `path` (a file with this machine's paths) out of git: a line in the repository's
    `info/exclude`, which is itself never committed (the local scope writes no committed
    file, so not `.gitignore`); `remove`: take the line out again. (file, what happened) when
    the file changed, else None."""
    top = next((d for d in (path.parent, *path.parent.parents) if (d / ".git").exists()), None)
    if top is None:
        return None
    git = top / ".git"
    if git.is_file():  # a worktree or submodule: `gitdir: DIR`, its `commondir` if any
        text = git.read_text(encoding="utf-8", errors="replace").strip()
        if not text.startswith("gitdir:"):
            return None
        git = (top / text[len("gitdir:"):].strip()).resolve()
        common = git / "commondir"
        if common.is_file():
            git = (git / common.read_text(encoding="utf-8").strip()).resolve()
    exclude = git / "info" / "exclude"
    line = "/" + path.relative_to(top).as_posix()
    try:
        current = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    except (OSError, UnicodeDecodeError):
        return None
    lines = current.splitlines()
    if remove:
        if line not in lines:
            return None
        write_text_file(exclude, "".join(f"{ln}\n" for ln in lines if ln != line))
        return exclude, "no longer ignores"
    if line in lines:
        return None  # (already there: nothing to say)
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with open(exclude, "a", encoding="utf-8") as fh:
        fh.write(("" if not current or current.endswith("\n") else "\n") + line + "\n")
    return exclude, "now ignores it:"


def _remove_empty_dir(d: Path, root: Path) -> None:
    if d != root and d.name == ".claude":
        try:
            d.rmdir()
        except OSError:
            pass


@install_app.command(
    "claude", help="Install (or --uninstall) the statewright hooks and MCP proxy for Claude Code.")
def install_claude(
    scope: str = typer.Option(
        "local", "--scope",
        help="local: only uncommitted files (.claude/settings.local.json and Claude Code's "
        "per-user .claude.json); project: .claude/settings.json and .mcp.json, portable (no "
        "machine paths), for the team; user: ~/.claude/settings.json, every project."),
    hooks: str | None = typer.Option(
        None, "--hooks",
        help="mcp: per-call hooks answered by the running proxy (no process per call; default "
        "for local and user); process: the statewright-hook program (default for project)."),
    uninstall: bool = typer.Option(False, "--uninstall",
                                   help="Remove only statewright's hooks and server."),
    project: str | None = ProjectOpt,
) -> None:
    from ..config import find_project_root

    root = find_project_root(project)
    for path, what in install_claude_files(root, scope, hooks, uninstall):
        if what.endswith("ignores it:"):
            console.print(f"git ({path}) {what} .claude/settings.local.json holds this "
                          "machine's paths", highlight=False, soft_wrap=True)
            continue
        if what == "no longer ignores":
            console.print(f"git ({path}) {what} .claude/settings.local.json", highlight=False,
                          soft_wrap=True)
            continue
        if what.startswith("removed ("):
            console.print(f"{path}: {what}", highlight=False, soft_wrap=True)
            continue
        unchanged = what in ("not present in", "already up to date in")
        console.print(f"statewright {what} {path}" + (" (unchanged)" if unchanged else ""),
                      highlight=False, soft_wrap=True)
    if scope == "project" and not uninstall:
        console.print("Commit .claude/settings.json and .mcp.json: they name programs found on "
                      "PATH, so they work on every machine with statewright installed (and a "
                      "clone without statewright and without a store works as before). Claude "
                      "Code asks each user once to approve the project's MCP server.",
                      highlight=False, soft_wrap=True)


# the other hosts' commands (`install codex|gemini|copilot`) live in their own module
from . import install_hosts  # noqa: E402,F401
