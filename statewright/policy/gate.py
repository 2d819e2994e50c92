"""The one decision function: `gate(state, counters, call, ctx) -> Decision` (DESIGN section 4).

Checks run in the order of the design (`_CHECKS`); the first that refuses decides. Pure: no I/O
except what `ctx.read_text` provides and path resolution (`os.path.realpath`, so a symlink into
the store is seen for what it is). Total on its input (a malformed call is refused as
`invalid`); a failure inside propagates to the runtime, which decides it (`fail_open`).
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING
from ..names import CODE_TOOLS
from . import edits as _edits
from . import protect
from .paths import (
    PathResolver,
    TooDeep,
    _real_root,
    has_surrogate,
    relative_to_real,
    tool_paths,
    unusable_path,
)
from .protect.scope import write_target_problem
from .protect.store import decision_facts
from .refusals import instead as _instead
from .refusals import printable as _printable
from .tools import FILE_READERS, tool_allowed, tool_facts
from .types import Counters, Decision, GateContext, ToolCall, finish_trace, new_decision

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

    from ..definition.compiled import State
    from .shell import ShellAnalysis

    _Check = Callable[["_Call", State, Counters, GateContext], Decision | None]

# `.shell` (the tree-sitter analysis) and the modules of the checks of a shell line are
# imported only when a shell line is decided, once (`_ShellParts`): an import statement inside
# a function would cost a microsecond or two on every call.


class _ShellParts:
    """The modules only a shell line needs (`load`, the first time one is decided)."""

    loaded = False
    shell: Any
    channels: Any
    line: Any  # protect.line
    lines: Any
    confine: Any

    def load(self) -> None:
        from . import channels, confine, lines, shell
        from .protect import line

        self.shell, self.channels, self.line, self.lines = shell, channels, line, lines
        self.confine = confine
        self.loaded = True


_sh = _ShellParts()


def gate(state: State, counters: Counters, call: ToolCall, ctx: GateContext) -> Decision:
    """Decide one tool call. Total on its input: a malformed call is refused as `invalid`.

    A failure inside the decision (a bug, an unreadable file system) propagates: the runtime
    turns it into a refusal, or an allow under `fail_open`, in one place for every front end
    (`runtime.enforcement.failure_decision`)."""
    return _gate(state, counters, call, ctx)


def _gate(state: State, counters: Counters, call: ToolCall, ctx: GateContext) -> Decision:
    raw = call.tool_name if type(call.tool_name) is str else ""
    name, first, own, may_write, write, tree = tool_facts(raw)
    trace: list[str] = [first]
    if not name:
        return _deny("invalid", "a call", "the tool name is missing or not text", state, ctx,
                     trace)
    if own:
        trace.append("statewright's own tool: always allowed, not counted")
        return Decision.allow(explanation=tuple(trace), counts_iteration=False)
    if not isinstance(call.tool_input, dict):
        return _deny("invalid", "`" + name + "`", "the tool input is not a JSON object", state,
                     ctx, trace)
    cwd = call.cwd if isinstance(call.cwd, str) and call.cwd else None
    if cwd is not None:
        malformed = _malformed(cwd)
        if malformed is not None:
            return _deny("invalid", "`" + name + "`", malformed, state, ctx, trace)
    memo = _memo_of(state)
    decision_facts(ctx)  # (the facts the checks read follow the environment as it is now)
    c = _Call(raw, name, call.tool_input, cwd, trace, may_write, write, tree, ctx, memo)
    kind = "edit" if write else "other"  # which checks can apply (`_CHECKS`)
    key = "command" if name == "Bash" else _shell_arg(name, raw, ctx) if ctx.shell_tools \
        else None
    if key is not None:
        refused = _read_shell_line(c, key, state, ctx)
        if refused is not None:
            return refused
        kind = "shell"
    for check in memo.checks[kind]:
        decided = check(c, state, counters, ctx)
        if decided is not None:
            return decided
    return _allow(c, state, ctx)


class _Call(PathResolver):
    """One call being decided: what the checks need to know about it, and what they found.

    It is also the decision's `PathResolver` (`c.resolve`): one object per decision rather
    than two, each path resolved once and only for this decision."""

    __slots__ = ("analysis", "args", "command", "cwd", "files", "fulls", "kernel", "may_write",
                 "memo", "name", "raw", "shell_key", "trace", "tree", "write")

    def __init__(self, raw: str, name: str, args: dict[str, Any], cwd: str | None,
                 trace: list[str], may_write: bool, write: bool, tree: bool,
                 ctx: GateContext, memo: _StateMemo) -> None:
        # (`PathResolver.__init__`, inlined: one is built for every decision)
        self.root = root = ctx.project_root
        self.real_root = _real_root(root)
        self._seen = {}
        self.memo = memo  # what the gate remembers about the state (`_memo_of`)
        # every resolution of each path argument, as self-protection found them
        # (`PathResolver.every` with the call's cwd and server roots), for the later checks
        self.fulls: dict[str, list[str]] = {}
        self.raw = raw
        self.name = name
        self.args = args
        self.cwd = cwd
        # the explanation, one line per step (or a function giving lines: `Decision`)
        self.trace: list[Any] = trace
        self.may_write = may_write  # may change, move or delete the files it names
        self.write = write  # edits files as counted by checks 7-8
        self.tree = tree  # moves or deletes what it names
        self.shell_key: str | None = None  # the argument holding a shell line
        self.command: str | None = None  # that line
        self.analysis: ShellAnalysis | None = None  # and its analysis
        # the line will run under the kernel sandbox, which binds what text rules approximate
        self.kernel = False
        self.files: list[str] = []  # project-relative files the call would edit

    @property
    def what(self) -> str:  # what a refusal calls it
        c = self.command
        return f"the command `{c[:200]}`" if c is not None else "`" + self.name + "`"


def _malformed(cwd: str | None) -> str | None:
    """Why a call is malformed before any check looks at it: a working directory no system call
    could take. (Input nested too deeply is found where its paths are walked.) The gate is
    total: malformed input is refused, never left to raise, since an exception would be
    decided by `fail_open` and the agent shapes its input."""
    if cwd is not None:
        why = unusable_path(cwd)
        if why:
            return "the working directory " + why
    return None


def _read_shell_line(c: _Call, key: str, state: State, ctx: GateContext) -> Decision | None:
    """For Bash and the shell-like tools: the line in argument `key`, analysed (refused if it
    is not text)."""
    c.shell_key = key
    command = c.args.get(key)
    if not isinstance(command, str):
        return _deny("invalid", c.what, f"the `{key}` argument is not text", state, ctx,
                     c.trace, shell=True)
    if not _sh.loaded:
        _sh.load()
    if has_surrogate(command):
        # the front end would run a re-encoded text, and could not print a rewritten input
        return _deny("invalid", c.what, f"the `{key}` argument is not valid Unicode "
                     "(it holds a lone surrogate)", state, ctx, c.trace, shell=True)
    if "\0" in command:
        # a shell reads its line as a C string: it would run less than what was decided
        return _deny("invalid", c.what, f"the `{key}` argument holds a NUL byte", state, ctx,
                     c.trace, shell=True)
    c.command = command
    c.analysis = analysis = _sh.shell.analyze(command)
    c.kernel = c.name == "Bash" and _sh.confine.binds(analysis, state, ctx)
    return None


# -- 1. self-protection ------------------------------------------------------------------------

def _self_protection(c: _Call, state: State, counters: Counters, ctx: GateContext
                     ) -> Decision | None:
    if c.analysis is not None:
        problems = _sh.line.shell_violations(c.analysis, ctx, c.resolve, c.cwd, c.kernel)
    else:
        problems = _argument_problems(c, ctx)
    if problems:
        c.trace += [f"self_protection: {p}" for p in problems]
        return _deny("self_protection", c.what, "; ".join(problems[:3]), state, ctx, c.trace,
                     shell=c.analysis is not None)
    c.trace.append("self_protection: ok")
    return None


def _argument_problems(c: _Call, ctx: GateContext) -> list[str]:
    """Self-protection for the path arguments (and file-name patterns) of a tool call."""
    problems: list[str] = []
    name, args = c.name, c.args
    try:
        paths = tool_paths(args)
    except TooDeep as exc:  # (malformed: no check could vouch for the paths inside)
        return [str(exc)]
    if name == "Glob" or name == "Grep" or name.startswith("mcp__"):
        # file-name patterns (MCP search tools such as `search_files` take one too)
        for k in ("pattern", "glob"):
            v = args.get(k)
            if v is None:
                continue
            if not isinstance(v, str):
                problems.append(f"the `{k}` argument is not text")
                continue
            if name == "Glob" or (name == "Grep" and k == "glob"):  # (Grep's pattern: no path)
                paths.append(v)
            why = protect.glob_violation(v, ctx) if name != "Grep" or k == "glob" else None
            if why:
                problems.append(why)
    problems += protect.globs_among_paths(args.get("paths"), ctx) if name == "Read" else []
    roots = _server_roots(name, ctx)
    seen = c.fulls
    for p in paths:
        if "\0" in p or not p.isascii():  # (`unusable_path` never holds for other text)
            unusable = unusable_path(p)
            if unusable:
                problems.append("a path argument " + unusable)
                continue
        fulls = seen.get(p)
        if fulls is None:
            fulls = seen[p] = c.every(p, c.cwd, roots)
        why = protect.path_violation(p, ctx, c.resolve, c.cwd, write=c.may_write, tree=c.tree,
                                     fulls=fulls)
        if why:
            problems.append(why)
    return problems


def _server_roots(name: str, ctx: GateContext) -> tuple[str, ...]:
    """The directories the MCP server behind tool `name` resolves relative paths against."""
    if not name.startswith("mcp__") or not ctx.server_roots:
        return ()
    return ctx.server_roots.get(name[5:].split("__", 1)[0], ())


def _final_state(c: _Call, state: State, counters: Counters, ctx: GateContext
                 ) -> Decision | None:
    if not state.final:
        return None
    c.trace.append("final state: nothing else is enforced")
    return Decision.allow(explanation=tuple(c.trace))


def _write_scope(c: _Call, state: State, counters: Counters, ctx: GateContext
                 ) -> Decision | None:
    """The file-writing tools obey the rule of shell output redirects: inside the project,
    not into git metadata or Claude settings (a planted `.git/hooks/pre-commit`, `.git/config`
    `core.fsmonitor`, `~/.gitconfig` or `~/.bashrc` would make an allowed command run
    anything). The files they write are what checks 7-8 count."""
    if not c.write or c.analysis is not None:
        return None
    root = c.real_root
    roots = _server_roots(c.name, ctx)
    for p in _edits.edited_paths(c.name, c.args):
        fulls = c.fulls.get(p) if isinstance(p, str) else None
        if fulls is None:
            fulls = c.every(p, c.cwd, roots) if isinstance(p, str) else [c.resolve(p, c.cwd)]
        for i, full in enumerate(fulls):
            rel = relative_to_real(full, root)
            why = write_target_problem(p, full, rel, ctx)
            if i == 0 and rel is not None and rel not in c.files:
                c.files += [f for f in c.files_named(p, rel, c.cwd) if f not in c.files]
            if why is None and i == 0 and full.endswith(".json"):
                from .protect.worktree import shadowing_write

                why = shadowing_write(full, c.args.get("content"), ctx)
            if why:
                c.trace.append(f"self_protection: {why}")
                return _deny("self_protection", c.what, why, state, ctx, c.trace)
    return None


def _read_only(c: _Call, state: State, counters: Counters, ctx: GateContext
               ) -> Decision | None:
    """The state's `read_only` globs, for what the call writes (`protect.readonly`)."""
    from .protect import readonly

    why = readonly.call_problem(c, state.read_only, ctx)
    c.trace.append(f"read_only: {why or 'ok'}")
    return None if why is None else _deny("read_only", c.what, why, state, ctx, c.trace,
                                          shell=c.analysis is not None)


# -- other tools and channels (escape class 6) ---------------------------------------------------

def _channels(c: _Call, state: State, counters: Counters, ctx: GateContext) -> Decision | None:
    """Host tools running unanalysable code; process environments read by file tools; work
    left running after the call; a pinned env_overrides value dropped (`policy.channels`)."""
    if c.analysis is None and c.name not in CODE_TOOLS and not (
            state.blocked_env and (c.name in FILE_READERS or c.name.startswith("mcp__"))
            and _may_reach_proc(c)):
        # (the usual Read or Edit: nothing here applies, nothing to import; only a file tool
        # that reads, or an MCP tool, can read a process environment)
        return None
    if _sh.loaded:
        channels = _sh.channels
    else:
        from . import channels

    why = channels.code_tool_problem(c.name, state)
    rule = "allowed_tools"
    if why is None and c.analysis is None and state.blocked_env:
        roots = _server_roots(c.name, ctx)
        why = channels.environ_read_problem(c.name, c.args,
                                            lambda p: c.every(p, c.cwd, roots))
        rule = "blocked_env"
    if why is None and c.analysis is not None:
        why = channels.background_problem(c.analysis, c.args, c.kernel)
        rule = "allowed_commands"
        if why is None:
            why = channels.pinned_problem(c.analysis, state)
            rule = "blocked_env"
    if why is None:
        return None
    c.trace.append(f"{rule}: {why}")
    return _deny(rule, c.what, why, state, ctx, c.trace, shell=c.analysis is not None)


def _may_reach_proc(c: _Call) -> bool:
    """Whether a file tool's call could name `/proc`, `/dev` or `/` (searched): by its text,
    or by a path self-protection resolved there (a link made earlier; each of a list's)."""
    for v in c.args.values():
        if isinstance(v, str) and ("proc" in v or "/dev" in v or "environ" in v):
            return True
    for f in c._seen.values():  # (a loop, not `any`: cheaper for the usual one path)
        if f.startswith(("/proc", "/dev")) or f == "/":
            return True
    # a search (Grep, Glob, LS) without a path searches the working directory, which may be /
    return FILE_READERS.get(c.name, False) and not isinstance(c.args.get("path"), str)


# -- 2-4. allowed_tools, max_iterations, context_budget_bytes -----------------------------------

def _allowed_tools(c: _Call, state: State, counters: Counters, ctx: GateContext
                   ) -> Decision | None:
    name = c.name
    if _tool_allowed_in(c.memo, state, name):
        c.trace.append("allowed_tools: ok")
        return None
    in_deny = not tool_allowed(name, None, state.disallowed_tools)
    why = (f"`{name}` is in this state's disallowed_tools" if in_deny
           else f"`{name}` is not in this state's allowed_tools")
    c.trace.append(f"allowed_tools: {why}")
    return _deny("allowed_tools", f"the tool `{name}`", why, state, ctx, c.trace)


def _max_iterations(c: _Call, state: State, counters: Counters, ctx: GateContext
                    ) -> Decision | None:
    if state.max_iterations is None or counters.iterations < state.max_iterations:
        return None
    why = (f"the state's limit of {state.max_iterations} tool calls is used up; "
           "you must transition now")
    c.trace.append(f"max_iterations: {counters.iterations}/{state.max_iterations}")
    return _deny("max_iterations", c.what, why, state, ctx, c.trace)


def _context_budget(c: _Call, state: State, counters: Counters, ctx: GateContext
                    ) -> Decision | None:
    budget = state.context_budget_bytes
    if budget is None or counters.bytes_read < budget:
        return None
    why = (f"the state's context budget of {budget} bytes is used up "
           f"({counters.bytes_read} read); you must transition now")
    c.trace.append(f"context_budget_bytes: {counters.bytes_read}/{budget}")
    return _deny("context_budget_bytes", c.what, why, state, ctx, c.trace)


def _effect_overrun(c: _Call, state: State, counters: Counters, ctx: GateContext
                    ) -> Decision | None:
    """A limit a sandboxed call's effect went over (`runtime.effects`): refused until a move."""
    if counters.overrun is not None:  # (its reason says what is refused until when)
        c.trace.append(f"{counters.overrun[0]}: went over by effect")
        return _deny(counters.overrun[0], c.what, counters.overrun[1], state, ctx, c.trace)
    return None


# -- 5. allowed_commands, 6. blocked_env (`policy.lines`) -------------------------------------

def _allowed_commands(c: _Call, state: State, counters: Counters, ctx: GateContext
                      ) -> Decision | None:
    if c.analysis is None or c.command is None:
        return None
    refused = _sh.lines.command_problem(c, state, ctx)
    if refused is None:
        return None
    return _deny(refused[0], c.what, refused[1], state, ctx, c.trace, shell=True,
                 files=tuple(c.files))


def _blocked_env(c: _Call, state: State, counters: Counters, ctx: GateContext
                 ) -> Decision | None:
    if c.analysis is None or c.command is None:
        return None
    why = _sh.lines.env_problem(c, state)
    if why is None:
        return None
    return _deny("blocked_env", c.what, why, state, ctx, c.trace, shell=True,
                 files=tuple(c.files))


# -- 7-8. max_edit_lines, max_files_per_state --------------------------------------------------

def _max_edit_lines(c: _Call, state: State, counters: Counters, ctx: GateContext
                    ) -> Decision | None:
    if not c.write or c.analysis is not None:
        return None
    lines = _edits.edit_lines(c.name, c.args, ctx.read_text, base=c.cwd or ctx.project_root)
    if lines is None:
        return None
    limit = state.max_edit_lines
    c.trace.append(f"max_edit_lines: this edit changes {lines} line(s) (limit {limit})" if limit
                   else f"max_edit_lines: this edit changes {lines} line(s)")
    if limit is not None and lines > limit:
        why = (f"this edit changes {lines} lines, more than the {limit} allowed per edit in "
               "this state; make smaller edits")
        return _deny("max_edit_lines", c.what, why, state, ctx, c.trace, files=tuple(c.files))
    return None


def _max_files_per_state(c: _Call, state: State, counters: Counters, ctx: GateContext
                         ) -> Decision | None:
    limit = state.max_files_per_state
    if limit is None or not c.files:
        return None
    edited = counters.files_edited
    new = []
    for f in c.files:  # (a loop, not a comprehension: cheaper for the usual one file)
        if f not in edited:
            new.append(f)
    total = len(edited) + len(new)
    # (the line when the explanation is read: `types.finish_trace`)
    c.trace.append(lambda: [f"max_files_per_state: {total} file(s) would be edited "
                            f"(limit {limit})"])
    if new and total > limit:
        why = (f"this state may edit at most {limit} files and {len(edited)} are already "
               f"edited ({', '.join(sorted(edited)) or 'none'}); {', '.join(new)} would be "
               "new. Keep editing those files, or transition")
        return _deny("max_files_per_state", c.what, why, state, ctx, c.trace,
                     files=tuple(c.files))
    return None


#: the kinds of call: a shell line, an edit counted by checks 7-8, any other call
_EVERY_KIND = ("shell", "edit", "other")

#: the checks after the call has been read, in DESIGN's order (the first refusal decides;
#: a final state allows whatever self-protection allows), each with the kinds of call it can
#: apply to and the State field without which it has nothing to check (`_applies`). A check
#: left out for a state and a kind of call (`_StateMemo.checks`) is one that would return None
#: at once.
_CHECKS: tuple[tuple[_Check, tuple[str, ...], str | None], ...] = (
    (_self_protection, _EVERY_KIND, None),
    (_final_state, _EVERY_KIND, "final"),
    (_write_scope, ("edit",), None),
    (_read_only, _EVERY_KIND, "read_only"),
    (_allowed_tools, _EVERY_KIND, None),
    (_channels, _EVERY_KIND, None),
    (_max_iterations, _EVERY_KIND, "max_iterations"),
    (_context_budget, _EVERY_KIND, "context_budget_bytes"),
    (_effect_overrun, _EVERY_KIND, None),
    (_allowed_commands, ("shell",), None),
    (_blocked_env, ("shell",), None),
    (_max_edit_lines, ("edit",), None),
    (_max_files_per_state, ("shell", "edit"), "max_files_per_state"),
)


def _allow(c: _Call, state: State, ctx: GateContext) -> Decision:
    """Allowed. A shell line in a state with `blocked_env` or `env_overrides` is rewritten to
    run with the blocked variables unset and the overrides exported; a Bash line the analysis
    cannot prove plain runs under the kernel sandbox (`confine`)."""
    updated = None
    sandboxed = False
    if c.analysis is not None and c.command is not None and c.shell_key is not None:
        line = c.command
        items = _sh.channels.export_items(c.analysis, state.allowed_commands is not None)
        if state.blocked_env or state.env_overrides or items:
            head, note = _rewriting_in(c.memo, state, items)
            line = head + line if head is not None else \
                _sh.shell.rewrite_for_env(line, state.blocked_env,
                                          {**dict(items), **state.env_overrides})
            c.trace.append(note)
        if c.name == "Bash":
            try:
                line, sandboxed, note = _sh.confine.sandbox_line(c.analysis, line, state, ctx)
            except _sh.confine.Unconfinable as exc:
                return _deny("sandbox", c.what, str(exc), state, ctx, c.trace, shell=True)
            if note:
                c.trace.append(note)
        if line is not c.command:
            updated = dict(c.args)
            updated[c.shell_key] = line
    c.trace.append("allow")
    # (the trace as it is: `Decision.explanation` finishes it when it is read)
    return new_decision(True, "", "", "", c.trace, tuple(c.files), updated, True, sandboxed)


def _rewriting_in(memo: _StateMemo, state: State, items: tuple[tuple[str, str], ...]
                  ) -> tuple[str | None, str]:
    """`channels.rewriting(state, items)`, kept per State object (`memo`) and `items` object
    (one of a few: `channels.export_items`) while the state has no `env_overrides` (a dict:
    its value is what `channels.rewriting` keeps) and its `blocked_env` is a tuple."""
    if state.env_overrides or type(state.blocked_env) is not tuple:
        return _sh.channels.rewriting(state, items)
    kept = memo.rewrites.get(id(items))
    if kept is None or kept[0] is not items:
        kept = memo.rewrites[id(items)] = (items, _sh.channels.rewriting(state, items))
    return kept[1]


# -- helpers -----------------------------------------------------------------------------------

def _shell_arg(name: str, raw: str, ctx: GateContext) -> str | None:
    if name == "Bash":
        return "command"
    st = ctx.shell_tools
    if not st:
        return None
    return st.get(raw) or st.get(name)


def _deny(rule: str, what: str, why: str, state: State, ctx: GateContext, trace: list[str],
          shell: bool = False, files: tuple[str, ...] = ()) -> Decision:
    reason = f"statewright refused {what} in state '{state.name}': {why}. " + _instead(
        state, ctx, shell)
    trace.append(f"{rule}: deny")
    return Decision.deny(_printable(reason), rule,
                         explanation=tuple(_printable(t) for t in finish_trace(trace)),
                         files=files)


class _StateMemo:
    """What the gate remembers about one State object, an immutable record (the object is
    kept, so its id is not reused while it is remembered): the checks that can apply to each
    kind of call, `tool_allowed` per tool name (None: the tool lists are not tuples of
    text, and their verdicts are never kept), and how an allowed line is rewritten."""

    __slots__ = ("checks", "rewrites", "state", "tools")

    def __init__(self, state: State) -> None:
        self.state = state
        # `_rewriting_in`: id of an `export_items` tuple -> (that tuple, its `channels.rewriting`)
        self.rewrites: dict[int, tuple[Any, tuple[str | None, str]]] = {}
        self.checks = {kind: tuple(check for check, kinds, field in _CHECKS if kind in kinds
                                   and (field is None or _applies(field, getattr(state, field))))
                       for kind in _EVERY_KIND}
        at, dt = state.allowed_tools, state.disallowed_tools
        texts = (at is None or (type(at) is tuple and all(type(e) is str for e in at))) and \
            type(dt) is tuple and all(type(e) is str for e in dt)
        self.tools: dict[str, bool] | None = {} if texts else None


def _applies(field: str, value: object) -> bool:
    """Whether a check that needs State `field` can do anything: exactly the condition on which
    that check returns at once (`_final_state`: a false `final`, `_read_only`: no globs)."""
    return bool(value) if field in ("final", "read_only") else value is not None


def _memo_of(state: State) -> _StateMemo:
    memo = _STATES.get(id(state))
    if memo is None or memo.state is not state:
        if len(_STATES) >= 256:
            _STATES.clear()
        memo = _STATES[id(state)] = _StateMemo(state)
    return memo


_STATES: dict[int, _StateMemo] = {}


def _tool_allowed_in(memo: _StateMemo, state: State, name: str) -> bool:
    """`tool_allowed(name, state.allowed_tools, state.disallowed_tools)`, remembered per State
    object (`memo`: its `_StateMemo`)."""
    verdicts = memo.tools
    if verdicts is None:
        return tool_allowed(name, state.allowed_tools, state.disallowed_tools)
    v = verdicts.get(name)
    if v is None:
        if len(verdicts) >= 1024:
            verdicts.clear()
        v = verdicts[name] = tool_allowed(name, state.allowed_tools, state.disallowed_tools)
    return v
