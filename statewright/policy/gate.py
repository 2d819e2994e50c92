"""The one decision function: `gate(state, counters, call, ctx) -> Decision` (DESIGN section 4).

Checks run in the order of the design; the first that refuses decides. Pure: no I/O except
what `ctx.read_text` provides and path resolution (`os.path.realpath`, so a symlink into the
store is seen for what it is). Any exception inside the gate becomes a deny (fail closed).
"""

from __future__ import annotations

import os

from . import edits as _edits
from . import protect
from ._lazy import CACHE_MAX_LINE as _CACHE_MAX_LINE
from ._lazy import lru_cache
from .paths import relative_to_root
from .tools import is_statewright_tool, normalize_tool_name, tool_allowed
from .types import Counters, Decision, GateContext, ToolCall

TYPE_CHECKING = False  # (not `typing.TYPE_CHECKING`: `typing` costs ~10 ms to import)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..definition.compiled import State

# `.shell` (the tree-sitter analysis) is imported only when a shell line is decided.

#: Host tools whose path arguments are read or written
_HOST_PATH_TOOLS = {"Read": False, "Grep": False, "Glob": False, "LS": False,
                    "Edit": True, "Write": True, "MultiEdit": True, "NotebookEdit": True,
                    "NotebookRead": False}
_SAFE_DEVICES = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1",
                 "/dev/fd/2"}
_SENSITIVE_PREFIXES = (".git/", ".claude/")


def _shell_arg(name: str, raw: str, ctx: GateContext) -> str | None:
    if name == "Bash":
        return "command"
    st = ctx.shell_tools
    if not st:
        return None
    return st.get(raw) or st.get(name)


def _instead(state: State, ctx: GateContext, shell: bool = False) -> str:
    bits: list[str] = []
    if state.allowed_tools is not None:
        tools = ", ".join(state.allowed_tools) or "none besides statewright's own"
        bits.append(f"Tools allowed in state '{state.name}': {tools}.")
    if state.disallowed_tools:
        bits.append(f"Never allowed here: {', '.join(state.disallowed_tools)}.")
    if shell and state.allowed_commands is not None:
        cmds = ", ".join(f"`{c}`" for c in state.allowed_commands) or "none"
        bits.append(f"Allowed commands (each command of a line must start with one): {cmds}.")
    if ctx.events:
        bits.append("To move on, fire one of these events with statewright_transition: "
                    + ", ".join(ctx.events) + ".")
    else:
        bits.append("Call statewright_get_state to see what this state allows.")
    return " ".join(bits)


def _deny(rule: str, what: str, why: str, state: State, ctx: GateContext, trace: list[str],
          shell: bool = False, files: tuple[str, ...] = ()) -> Decision:
    reason = f"statewright refused {what} in state '{state.name}': {why}. " + _instead(
        state, ctx, shell)
    trace.append(f"{rule}: deny")
    return Decision.deny(_printable(reason), rule,
                         explanation=tuple(_printable(t) for t in trace), files=files)


def _printable(text: str) -> str:
    """Text every front end can encode: a lone surrogate from the tool input (valid JSON,
    not valid UTF-8) would make writing the refusal fail, and a refusal that is never
    printed is an allow."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _file_key(path: str, ctx: GateContext, cwd: str | None, shell: bool = False) -> str:
    full = protect.resolved(path, ctx.project_root, cwd, shell=shell)
    rel = relative_to_root(full, ctx.project_root)
    if rel is not None:
        return rel
    return os.path.normpath(os.path.join(cwd or ctx.project_root,
                                         path if shell else os.path.expanduser(path)))


def gate(state: State, counters: Counters, call: ToolCall, ctx: GateContext) -> Decision:
    """Decide one tool call. Never raises: an internal failure is a deny with its cause."""
    protect._MEMO["paths"] = {}
    try:
        return _gate(state, counters, call, ctx)
    except Exception as exc:  # fail closed on anything unexpected
        return Decision.deny(
            _printable(f"statewright could not decide this call ({type(exc).__name__}: {exc}); "
                       "it is refused to be safe."), "internal_error",
            explanation=(_printable(f"internal error: {type(exc).__name__}: {exc}"),))
    finally:
        protect._MEMO.pop("paths", None)


def _tool_allowed_in(state: State, name: str) -> bool:
    """`tool_allowed(name, state.allowed_tools, state.disallowed_tools)`, remembered per State
    object (an immutable record; one whose tool lists are not tuples of text is never kept)."""
    entry = _STATE_TOOLS.get(id(state))
    if entry is not None and entry[0] is state:
        verdicts = entry[1]
        v = verdicts.get(name)
        if v is None:
            if len(verdicts) >= 1024:
                verdicts.clear()
            v = verdicts[name] = tool_allowed(name, state.allowed_tools, state.disallowed_tools)
        return v
    at, dt = state.allowed_tools, state.disallowed_tools
    v = tool_allowed(name, at, dt)
    if (at is None or (type(at) is tuple and all(type(e) is str for e in at))) and \
            type(dt) is tuple and all(type(e) is str for e in dt):
        if len(_STATE_TOOLS) >= 256:
            _STATE_TOOLS.clear()
        _STATE_TOOLS[id(state)] = (state, {name: v})  # (the State kept: its id is not reused)
    return v


_STATE_TOOLS: dict[int, tuple[Any, dict[str, bool]]] = {}


@lru_cache(maxsize=2048)
def _tool_facts(raw: str) -> tuple[str, str, bool, bool, bool, bool]:
    """(normalised name, first trace line, statewright's own tool, may write files, edits
    files as counted by checks 7-8, moves/deletes what it names) for a tool name as reported.

    An MCP tool may write unless its name reads as a read-only one (`read_*`, `list_*`,
    `get_*`, `search_*`, `git_status`, ...): an unknown MCP tool is taken as a writer, so it
    may not name a workflow in use or statewright's configuration."""
    name = normalize_tool_name(raw)
    first = f"tool: {raw} (as {name})" if name != raw else "tool: " + raw
    mcp = name.startswith("mcp__")
    part = _edits.mcp_tool_part(name) if mcp else name
    counted = name in _edits.HOST_EDIT_TOOLS or (mcp and _edits.is_mcp_edit_tool(part))
    write = counted or (mcp and not _edits.is_mcp_read_tool(part))
    tree = mcp and _edits.is_mcp_tree_tool(part)
    return name, first, bool(name) and is_statewright_tool(name), write, counted, tree


def _gate(state: State, counters: Counters, call: ToolCall, ctx: GateContext) -> Decision:
    raw = call.tool_name if type(call.tool_name) is str else ""
    name, first, own, may_write, write, tree = _tool_facts(raw)
    args: dict[str, Any] = call.tool_input if isinstance(call.tool_input, dict) else {}
    trace: list[str] = [first]
    what = "`" + name + "`"
    if not name:
        return _deny("invalid", "a call", "the tool name is missing or not text", state, ctx,
                     trace)
    if own:
        trace.append("statewright's own tool: always allowed, not counted")
        return Decision.allow(explanation=tuple(trace), counts_iteration=False)
    if not isinstance(call.tool_input, dict):
        return _deny("invalid", what, "the tool input is not a JSON object", state, ctx, trace)

    cwd = call.cwd if isinstance(call.cwd, str) and call.cwd else None
    shell_key = _shell_arg(name, raw, ctx)
    command: str | None = None
    analysis = None
    if shell_key is not None:
        command = args.get(shell_key)
        if not isinstance(command, str):
            return _deny("invalid", what, f"the `{shell_key}` argument is not text", state, ctx,
                         trace, shell=True)
        from .shell import analyze, has_surrogate

        if has_surrogate(command):
            # the front end would run a re-encoded text, and could not print a rewritten input
            return _deny("invalid", what, f"the `{shell_key}` argument is not valid Unicode "
                         "(it holds a lone surrogate)", state, ctx, trace, shell=True)
        analysis = analyze(command)
        what = f"the command `{command[:200]}`"

    # 1. self-protection --------------------------------------------------------------------
    problems: list[str] = []
    if analysis is not None:
        problems += protect.shell_violations(analysis, ctx, cwd)
    else:
        paths = protect.tool_paths(args)
        if name == "Glob" or name == "Grep" or name.startswith("mcp__"):
            # file-name patterns (MCP search tools such as `search_files` take one too)
            for k in ("pattern", "glob"):
                v = args.get(k)
                if v is None:
                    continue
                if not isinstance(v, str):
                    problems.append(f"the `{k}` argument is not text")
                    continue
                if name == "Glob" or name == "Grep":
                    paths.append(v)
                why = (protect.glob_violation(v, ctx) if name != "Grep" or k == "glob"
                       else None)
                if why:
                    problems.append(why)
        for p in paths:
            why = protect.path_violation(p, ctx, cwd, write=may_write, tree=tree)
            if why:
                problems.append(why)
    if problems:
        trace += [f"self_protection: {p}" for p in problems]
        return _deny("self_protection", what, "; ".join(problems[:3]), state, ctx, trace,
                     shell=analysis is not None)
    trace.append("self_protection: ok")
    if state.final:
        trace.append("final state: nothing else is enforced")
        return Decision.allow(explanation=tuple(trace))
    edited: list[str] = []  # project-relative files a (non-shell) edit tool writes
    if write and analysis is None:
        # the file-writing tools obey the rule of shell output redirects: inside the project,
        # not into git metadata or Claude settings (a planted `.git/hooks/pre-commit`,
        # `.git/config` `core.fsmonitor`, `~/.gitconfig` or `~/.bashrc` would make an allowed
        # command run anything)
        root = ctx.project_root
        for p in _edits.edited_paths(name, args):
            full = protect.resolved(p, root, cwd)
            rel = relative_to_root(full, root)
            why = _write_target_why(p, full, rel, ctx)
            if rel is not None and rel not in edited:
                edited.append(rel)
            if why:
                trace.append(f"self_protection: {why}")
                return _deny("self_protection", what, why, state, ctx, trace)

    # 2. allowed_tools / disallowed_tools ----------------------------------------------------
    if not _tool_allowed_in(state, name):
        in_deny = not tool_allowed(name, None, state.disallowed_tools)
        why = (f"`{name}` is in this state's disallowed_tools" if in_deny
               else f"`{name}` is not in this state's allowed_tools")
        trace.append(f"allowed_tools: {why}")
        return _deny("allowed_tools", f"the tool `{name}`", why, state, ctx, trace)
    trace.append("allowed_tools: ok")

    # 3. max_iterations ----------------------------------------------------------------------
    if state.max_iterations is not None and counters.iterations >= state.max_iterations:
        why = (f"the state's limit of {state.max_iterations} tool calls is used up; "
               "you must transition now")
        trace.append(f"max_iterations: {counters.iterations}/{state.max_iterations}")
        return _deny("max_iterations", what, why, state, ctx, trace)
    # 4. context_budget_bytes ----------------------------------------------------------------
    if state.context_budget_bytes is not None and \
            counters.bytes_read >= state.context_budget_bytes:
        why = (f"the state's context budget of {state.context_budget_bytes} bytes is used up "
               f"({counters.bytes_read} read); you must transition now")
        trace.append(f"context_budget_bytes: {counters.bytes_read}/{state.context_budget_bytes}")
        return _deny("context_budget_bytes", what, why, state, ctx, trace)

    files: list[str] = []
    # 5. allowed_commands --------------------------------------------------------------------
    if analysis is not None:
        from .shell import check_commands, check_env, rewrite_for_env

        cwds = _walk_cwds(analysis, ctx, cwd)
        for r in analysis.redirects:
            if r.output and r.target is not None and r.target.literal and \
                    r.target.value not in _SAFE_DEVICES:
                for d in cwds[0]:
                    f = _file_key(r.target.value, ctx, d, shell=True)
                    if f not in files:
                        files.append(f)
        if state.allowed_commands is not None:
            if analysis.changes_dir or len(command) > _CACHE_MAX_LINE:
                v = check_commands(analysis, state.allowed_commands,
                                   cd_check=_cd_tracker(ctx, cwd))
            else:  # no `cd` to follow on disk: the verdict depends on the text alone
                v = _commands_by_line(command, tuple(state.allowed_commands))
            trace += [f"allowed_commands: {t}" for t in v.trace]
            redirect_problems = _redirect_problems(analysis, ctx, cwds[0])
            trace += [f"allowed_commands: redirect {p} -> deny" for p in redirect_problems]
            if not v.allowed or redirect_problems:
                why = "; ".join(x for x in [v.reason, *redirect_problems] if x)
                return _deny("allowed_commands", what, why, state, ctx, trace, shell=True,
                             files=tuple(files))
        else:
            # no command rules here, but output redirects obey the same write scope as the
            # file-writing tools (inside the project, not into .git/ or Claude settings)
            redirect_problems = _redirect_problems(analysis, ctx, cwds[0])
            if redirect_problems:
                trace += [f"self_protection: redirect {p}" for p in redirect_problems]
                return _deny("self_protection", what, "; ".join(redirect_problems[:3]), state,
                             ctx, trace, shell=True, files=tuple(files))
        # 6. blocked_env ---------------------------------------------------------------------
        if state.blocked_env:
            v = (_env_by_line(command, tuple(state.blocked_env)) if len(command) <= _CACHE_MAX_LINE
                 else check_env(analysis, state.blocked_env))
            trace += [f"blocked_env: {t}" for t in v.trace]
            if not v.allowed:
                return _deny("blocked_env", what, v.reason, state, ctx, trace, shell=True,
                             files=tuple(files))
        elif not analysis.ok and state.allowed_commands is None:
            trace.append("shell: " + "; ".join(analysis.problems) +
                         " (no command rules in this state)")
    # 7. max_edit_lines ----------------------------------------------------------------------
    elif write:
        files = edited  # (each is inside the project, or the call was refused above)
    lines = None
    if write and analysis is None:
        lines = _edits.edit_lines(name, args, ctx.read_text, base=cwd or ctx.project_root)
    if lines is not None:
        trace.append(f"max_edit_lines: this edit changes {lines} line(s) (limit "
                     f"{state.max_edit_lines})" if state.max_edit_lines else
                     f"max_edit_lines: this edit changes {lines} line(s)")
        if state.max_edit_lines is not None and lines > state.max_edit_lines:
            why = (f"this edit changes {lines} lines, more than the {state.max_edit_lines} "
                   "allowed per edit in this state; make smaller edits")
            return _deny("max_edit_lines", what, why, state, ctx, trace, files=tuple(files))
    # 8. max_files_per_state -----------------------------------------------------------------
    if state.max_files_per_state is not None and files:
        new = [f for f in files if f not in counters.files_edited]
        total = len(counters.files_edited) + len(new)
        trace.append(f"max_files_per_state: {total} file(s) would be edited "
                     f"(limit {state.max_files_per_state})")
        if new and total > state.max_files_per_state:
            why = (f"this state may edit at most {state.max_files_per_state} files and "
                   f"{len(counters.files_edited)} are already edited "
                   f"({', '.join(sorted(counters.files_edited)) or 'none'}); "
                   f"{', '.join(new)} would be new. Keep editing those files, or transition")
            return _deny("max_files_per_state", what, why, state, ctx, trace,
                         files=tuple(files))

    updated = None
    if analysis is not None and command is not None and (state.blocked_env or
                                                          state.env_overrides):
        from .shell import rewrite_for_env

        updated = dict(args)
        updated[shell_key] = rewrite_for_env(command, state.blocked_env, state.env_overrides)
        trace.append("rewritten to run with blocked variables unset"
                     + (" and env_overrides exported" if state.env_overrides else ""))
    trace.append("allow")
    return Decision(True, "", "", "", tuple(trace), tuple(files), updated)


@lru_cache(maxsize=256)
def _commands_by_line(command: str, allowed: tuple[str, ...]) -> Any:
    from .shell import analyze, check_commands

    return check_commands(analyze(command), allowed)


@lru_cache(maxsize=256)
def _env_by_line(command: str, blocked: tuple[str, ...]) -> Any:
    from .shell import analyze, check_env

    return check_env(analyze(command), blocked)


def _sensitive(rel: str, full: str, ctx: GateContext) -> str | None:
    if rel == ".git" or rel.startswith(_SENSITIVE_PREFIXES):
        return f"`{rel}` is a sensitive location (git metadata / Claude settings)"
    fx = protect.ctx_facts(ctx)
    if full in fx.protected:
        return f"`{rel}` is a file statewright is enforcing"
    if full == fx.real_store or full.startswith(fx.real_store_prefix):
        return f"`{rel}` is inside statewright's store"
    return None


def _holds_protected(full: str, ctx: GateContext) -> str | None:
    """A written target that is a directory holding the store or a protected file (`pytest
    --basetemp=.` empties its directory first)."""
    pre = full.rstrip(os.sep) + os.sep
    fx = protect.ctx_facts(ctx)
    if fx.real_store.startswith(pre) or pre in fx.holders:
        return f"`{full}` holds statewright's store or a file statewright is enforcing"
    return None


def _write_target_problem(p: str, ctx: GateContext, cwd: str | None) -> str | None:
    full = protect.resolved(p, ctx.project_root, cwd)
    return _write_target_why(p, full, relative_to_root(full, ctx.project_root), ctx)


def _write_target_why(p: str, full: str, rel: str | None, ctx: GateContext) -> str | None:
    if rel is None:
        return f"`{p}` is outside the project; edit tools may only write inside it"
    why = _sensitive(rel, full, ctx)
    return f"`{p}`: {why}" if why else None


def _redirect_problems(analysis: Any, ctx: GateContext, cwds: list[str]) -> list[str]:
    out: list[str] = []
    for r in analysis.redirects:
        if not r.output or r.target is None:
            continue
        t = r.target
        if not t.literal:
            out.append(f"`{r.op} {t.text}`: the target is not a literal path")
            continue
        if t.value in _SAFE_DEVICES:
            continue
        for d in cwds:
            full = protect.resolved(t.value, ctx.project_root, d, shell=True)
            rel = relative_to_root(full, ctx.project_root)
            if rel is None:
                out.append(f"`{r.op} {t.value}` writes outside the project")
                break
            why = _sensitive(rel, full, ctx) or _holds_protected(full, ctx)
            if why:
                out.append(f"`{r.op} {t.value}`: {why}")
                break
    return list(dict.fromkeys(out))


def _walk_cwds(analysis: Any, ctx: GateContext, cwd: str | None) -> tuple[list[str], bool]:
    """Every working directory a relative path in the line may be resolved against."""
    start = cwd or ctx.project_root
    cwds = [start]
    cur = start
    for c in analysis.commands:
        if c.name_literal and c.name == "cd" and len(c.args) == 1 and c.args[0].literal:
            cur = os.path.normpath(os.path.join(cur, c.args[0].value))
            cwds.append(cur)
    return list(dict.fromkeys(cwds)), True


def _cd_tracker(ctx: GateContext, cwd: str | None) -> Any:
    """A `cd` checker that follows the directory changes of the line in order."""
    cur = [cwd or ctx.project_root]

    def check(c: Any) -> str | None:
        why = _cd_check(c, ctx, cur[0])
        if why is None:
            cur[0] = os.path.normpath(os.path.join(cur[0], c.args[0].value))
        return why

    return check


def _cd_check(c: Any, ctx: GateContext, cwd: str | None) -> str | None:
    args = [a for a in c.args]
    if len(args) != 1 or not args[0].literal or args[0].value in ("-", ""):
        return "`cd` needs one literal directory inside the project"
    target = args[0].value
    full = protect.resolved(target, ctx.project_root, cwd, shell=True)
    rel = relative_to_root(full, ctx.project_root)
    if rel is None:
        return f"`cd {target}` leaves the project"
    why = _sensitive(rel, full, ctx)
    return f"`cd {target}`: {why}" if why else None
