"""Inputs and outputs of the pure enforcement layer (DESIGN.md section 4).

Every front end translates its own call shape into a `ToolCall`, hands it to
`statewright.runtime` (which calls `statewright.policy.gate`), and translates the `Decision`
back. Nothing here does I/O.

These are immutable records (`statewright.lean.Record`: `__slots__`, explicit `__init__`,
`==`, `hash`, `repr`, `replace`) rather than dataclasses: every hook process imports them, and
`dataclasses` costs more to import than the whole decision takes.
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING, Record, field_setters, set_field

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

#: shell lines longer than this are analysed every time rather than kept in the caches
CACHE_MAX_LINE = 4096
#: how much of a shell line's output a front end hands to `record` (`ToolResult.output`)
OUTPUT_TAIL = 4096

_EMPTY: frozenset = frozenset()
_NO_ARG = object()


def mutable_twin(cls: type[Record]) -> Any:
    """A class with the slots of record class `cls` in the same order (so the same layout: an
    instance's `__class__` may become `cls`) whose fields are assigned as plainly as an
    attribute of a mutable object (`object`'s own `__setattr__` and `__delattr__`: both, or
    Python would still route assignments through a method).

    The records built for every shell line and decision (`shell.records.new_command`, ...,
    `new_decision`) are filled as a twin and then made `cls`: half the cost of `cls(...)`,
    whose `__init__` stores each field through its slot descriptor's setter. The record is
    as immutable as any other once its class is `cls` (what `engine.run.Run.with_` does)."""
    return type("_" + cls.__name__ + "Twin", (Record,),
                {"__slots__": cls.__slots__, "__setattr__": object.__setattr__,
                 "__delattr__": object.__delattr__, "__module__": cls.__module__})


new_record = object.__new__  # (an empty instance of a twin, to be filled)


def line_memo(fn: Callable[..., Any], with_arg: bool = False) -> Callable[..., Any]:
    """`fn`, a pure function of a shell line's analysis (and, `with_arg`, of one more
    hashable argument), with its answers kept per line text: up to 256 lines of at most
    `CACHE_MAX_LINE` characters.

    The function is handed the analysis the caller holds (`shell.analyze` is a pure function
    of the text), so a line decided again costs a dictionary look-up, and a new line costs no
    second analysis nor the import statement a function-level `lru_cache` wrapper would run.
    (A closure rather than an object with `__call__`: it is called several times for every
    new line, and a plain function call is the cheaper one.)"""
    kept: dict[Any, Any] = {}

    if with_arg:
        def memo_arg(analysis: Any, arg: Any) -> Any:
            source = analysis.source
            if len(source) > CACHE_MAX_LINE:
                return fn(analysis, arg)
            key = (source, arg)
            out = kept.get(key, _NO_ARG)
            if out is _NO_ARG:
                out = fn(analysis, arg)
                if len(kept) >= 256:
                    kept.clear()
                kept[key] = out
            return out

        return memo_arg

    def memo(analysis: Any) -> Any:
        source = analysis.source
        if len(source) > CACHE_MAX_LINE:
            return fn(analysis)
        out = kept.get(source, _NO_ARG)
        if out is _NO_ARG:
            out = fn(analysis)
            if len(kept) >= 256:
                kept.clear()
            kept[source] = out
        return out

    return memo


def word_texts(analysis: Any) -> tuple[str, str, list[Any]]:
    """What several checks search in a shell analysis's words all at once, worked out once for
    the analysis last asked about: (the values of its words joined by newlines (no name they
    look for holds a newline), the patterns of the words that are not fixed text joined
    likewise, those words).

    The words that are not fixed text are the only ones whose pattern can hold a name their
    value does not: a fixed text's pattern is its value with `*`, `?`, `[` and `]` each made
    `[c]` (`shell.words`), and no name has those; and every glob or expansion is among them,
    the only words several checks look at one by one when the joined values hold nothing
    they look for."""
    last = _LAST_WORDS[0]
    if last[0] is analysis:
        return last[1]
    words = analysis.words
    odd = [w for w in words if not w.literal]
    out = ("\n".join([w.value for w in words]), "\n".join([w.pattern for w in odd]), odd)
    _LAST_WORDS[0] = (analysis, out)  # (one store: a thread never sees half of it)
    return out


_LAST_WORDS: list[tuple[Any, Any]] = [(None, None)]


class ToolCall(Record):
    """One tool call as the agent made it.

    `tool_name` is the name as the front end saw it (`Bash`, `Edit`, `mcp__github__create_issue`,
    `mcp__statewright__github__create_issue`, or a proxy-forwarded `github__create_issue` passed
    as `mcp__github__create_issue` by the proxy). Normalisation happens in `policy.tools`.
    """

    __slots__ = __match_args__ = _fields = ("tool_name", "tool_input", "source", "cwd",
                                            "call_id")
    tool_name: str
    tool_input: dict[str, Any]
    source: str
    cwd: str | None
    call_id: str | None

    def __init__(self, tool_name: str, tool_input: dict[str, Any], source: str = "claude",
                 cwd: str | None = None, call_id: str | None = None) -> None:
        set_field(self, "tool_name", tool_name)
        set_field(self, "tool_input", tool_input)
        set_field(self, "source", source)  # "claude" (hook) | "proxy" | "cli" (statewright check)
        set_field(self, "cwd", cwd)  # the agent's working directory, when known (hook input `cwd`)
        # the host's id of this call (Claude Code's `tool_use_id`), the same in its result: what
        # pairs a call's scan before it ran with its result (`runtime.effects`)
        set_field(self, "call_id", call_id)


class ToolResult(Record):
    """What happened after an allowed call ran (PostToolUse / proxy after forwarding)."""

    __slots__ = __match_args__ = _fields = ("tool_name", "tool_input", "output_bytes", "is_error",
                                            "cwd", "exit_code", "output", "call_id")
    tool_name: str
    tool_input: dict[str, Any]
    output_bytes: int
    is_error: bool
    cwd: str | None
    exit_code: int | None
    output: str
    call_id: str | None

    def __init__(self, tool_name: str, tool_input: dict[str, Any], output_bytes: int = 0,
                 is_error: bool = False, cwd: str | None = None,
                 exit_code: int | None = None, output: str = "",
                 call_id: str | None = None) -> None:
        set_field(self, "tool_name", tool_name)
        set_field(self, "tool_input", tool_input)
        set_field(self, "output_bytes", output_bytes)  # size of the result the agent received
        set_field(self, "is_error", is_error)  # the host / downstream reported a failure
        set_field(self, "cwd", cwd)
        # a shell line's exit status as the host reported it (0 for a plain success); None when
        # the result does not say (a background job, a tool that reports none)
        set_field(self, "exit_code", exit_code)
        # the end of what a shell line printed (`OUTPUT_TAIL` characters), where the front end
        # has it: read for the kernel's refusals, which the agent is then told about
        set_field(self, "output", output)
        set_field(self, "call_id", call_id)  # `ToolCall.call_id` of the call this is the result of


class Counters(Record):
    """Accounting for the current state of a run (reset on entering a state)."""

    __slots__ = __match_args__ = _fields = ("iterations", "files_edited", "bytes_read", "denied",
                                            "overrun")
    iterations: int
    files_edited: frozenset[str]
    bytes_read: int
    denied: int
    overrun: tuple[str, str] | None

    def __init__(self, iterations: int = 0, files_edited: frozenset[str] = _EMPTY,
                 bytes_read: int = 0, denied: int = 0,
                 overrun: tuple[str, str] | None = None) -> None:
        set_field(self, "iterations", iterations)
        set_field(self, "files_edited", files_edited)  # project-relative, '/'-separated
        set_field(self, "bytes_read", bytes_read)
        set_field(self, "denied", denied)
        # (rule, why): a limit of the state that a call's effect went over (counted after a
        # sandboxed call: `runtime.effects`); every further call is refused until a transition
        set_field(self, "overrun", overrun)


class GateContext(Record):
    """The facts about the world the pure gate needs, gathered by the runtime.

    `read_text(path)` returns the current text of a project file or None if it does not exist
    (used for Write's "lines that differ"); injecting it keeps `gate` free of I/O.
    """

    __slots__ = __match_args__ = _fields = ("project_root", "store_dir", "protected_files",
                                            "shell_tools", "events", "read_text",
                                            "server_roots")
    project_root: str
    store_dir: str
    protected_files: frozenset[str]
    shell_tools: dict[str, str]
    events: tuple[str, ...]
    read_text: Callable[[str], str | None] | None
    server_roots: dict[str, tuple[str, ...]]

    def __init__(self, project_root: str, store_dir: str, protected_files: frozenset[str] = _EMPTY,
                 shell_tools: dict[str, str] | None = None, events: tuple[str, ...] = (),
                 read_text: Callable[[str], str | None] | None = None,
                 server_roots: dict[str, tuple[str, ...]] | None = None) -> None:
        set_field(self, "project_root", project_root)
        # absolute path of .statewright (or $STATEWRIGHT_HOME)
        set_field(self, "store_dir", store_dir)
        # absolute paths of workflow files in use
        set_field(self, "protected_files", protected_files)
        # MCP tool -> argument holding a command
        set_field(self, "shell_tools", {} if shell_tools is None else shell_tools)
        set_field(self, "events", events)  # events the agent can fire now (for the deny reason)
        set_field(self, "read_text", read_text)
        # MCP server name -> the directories it resolves a relative path against (its working
        # directory and the directories on its command line: a filesystem server's roots)
        set_field(self, "server_roots", {} if server_roots is None else server_roots)


class Decision(Record):
    __match_args__ = _fields = ("allowed", "reason", "rule", "code", "explanation", "files",
                                "updated_input", "counts_iteration", "sandboxed")
    # (`explanation` is read through `_explanation`: see the property)
    __slots__ = ("_explanation", "allowed", "code", "counts_iteration", "files", "reason", "rule",
                 "sandboxed", "updated_input")
    allowed: bool
    reason: str
    rule: str
    code: str
    _explanation: tuple[str, ...] | list[Any]
    files: tuple[str, ...]
    updated_input: dict[str, Any] | None
    counts_iteration: bool
    sandboxed: bool

    def __init__(self, allowed: bool, reason: str = "", rule: str = "", code: str = "",
                 explanation: tuple[str, ...] = (), files: tuple[str, ...] = (),
                 updated_input: dict[str, Any] | None = None,
                 counts_iteration: bool = True, sandboxed: bool = False) -> None:
        # (one is built for every decision: each field is stored through its own slot
        # descriptor, as `lean.field_setters` gives them)
        _d_allowed(self, allowed)
        _d_reason(self, reason)  # for the agent: what was refused, why, what to do instead
        _d_rule(self, rule)  # which check decided: self_protection, allowed_tools, ...
        _d_code(self, code)  # TOOL_DENIED on deny
        _d_explanation(self, explanation)  # line-by-line trace for `statewright check`
        _d_files(self, files)  # project-relative files this call would edit
        _d_updated_input(self, updated_input)  # rewritten tool_input (blocked_env removal)
        _d_counts_iteration(self, counts_iteration)  # statewright_* tools do not count
        # the rewritten line runs under the kernel sandbox (`policy.confine`): what it changes
        # is counted by effect after the call
        _d_sandboxed(self, sandboxed)

    @property
    def explanation(self) -> tuple[str, ...]:
        """The line-by-line trace for `statewright check`. The gate hands an allowed shell
        line's trace over unfinished: a list whose items are lines or functions that give
        lines (`lines.command_problem`: check 5's lines of the line it allowed), finished
        here the first time it is read (`finish_trace`): no decision pays for text nobody
        reads, and the text is what it would have been."""
        e = self._explanation
        if type(e) is not tuple:
            e = finish_trace(e)
            _d_explanation(self, e)
        return e

    @staticmethod
    def allow(**kw: Any) -> Decision:
        return Decision(True, **kw)

    @staticmethod
    def deny(reason: str, rule: str, **kw: Any) -> Decision:
        return Decision(False, reason=reason, rule=rule, code="TOOL_DENIED", **kw)


(_d_allowed, _d_reason, _d_rule, _d_code, _d_explanation, _d_files, _d_updated_input,
 _d_counts_iteration, _d_sandboxed) = (
    getattr(Decision, "_" + f if f == "explanation" else f).__set__ for f in Decision._fields)


def finish_trace(items: Any) -> tuple[str, ...]:
    """A trace whose items are lines or functions that give lines, as lines."""
    out: list[str] = []
    for t in items:
        if type(t) is str:
            out.append(t)
        else:
            out += t()
    return tuple(out)
_DecisionTwin = mutable_twin(Decision)


def new_decision(allowed: bool, reason: str, rule: str, code: str,
                 explanation: tuple[str, ...] | list[Any], files: tuple[str, ...],
                 updated_input: dict[str, Any] | None, counts_iteration: bool,
                 sandboxed: bool = False) -> Decision:
    """`Decision(allowed, reason, ...)` with every field given, built as a twin
    (`mutable_twin`): one per decision."""
    d = new_record(_DecisionTwin)
    d.allowed = allowed
    d.reason = reason
    d.rule = rule
    d.code = code
    d._explanation = explanation
    d.files = files
    d.updated_input = updated_input
    d.counts_iteration = counts_iteration
    d.sandboxed = sandboxed
    d.__class__ = Decision
    return d


def program_name(name: str) -> str:
    """The program a command name runs, as statewright knows programs: a path by its last
    component (`/usr/bin/env`, `./env`, `/bin//sh/`: `env`, `env`, `sh`). A file the agent
    named like a program is judged as that program: whatever it really is, what it is
    told to do is at least as much (fail closed). `Command.program` holds it."""
    return name.rstrip("/").rsplit("/", 1)[-1] if "/" in name else name


# -- words: what the shell analysis makes of a command line's words, and what the rules of
# `policy.programs` read (here, below both) ------------------------------------------------------

class Word(Record):
    """One shell word after unquoting.

    `value` is the unquoted text with every dynamic part (expansions, substitutions) removed;
    `pattern` is an fnmatch pattern of what the word could expand to (dynamic parts become `*`,
    quoted glob characters are escaped); `literal` is true when the word is fixed text with no
    expansion, glob, brace expansion or leading tilde.
    """

    __slots__ = __match_args__ = _fields = ("text", "value", "pattern", "literal", "dynamic",
                                            "glob", "tilde")
    text: str
    value: str
    pattern: str
    literal: bool
    dynamic: bool
    glob: bool
    tilde: bool

    def __init__(self, text: str, value: str, pattern: str, literal: bool,
                 dynamic: bool = False, glob: bool = False, tilde: bool = False) -> None:
        # (a shell line makes a few dozen: each field is stored through its own slot
        # descriptor, `lean.field_setters`, as `policy.types.Decision` does)
        _w_text(self, text)
        _w_value(self, value)
        _w_pattern(self, pattern)
        _w_literal(self, literal)
        _w_dynamic(self, dynamic)  # contains $var, ${...}, $(...), `...`, $((...))
        _w_glob(self, glob)  # unquoted * ? [
        _w_tilde(self, tilde)  # leading unquoted ~


(_w_text, _w_value, _w_pattern, _w_literal, _w_dynamic, _w_glob, _w_tilde) = field_setters(Word)
_WordTwin = mutable_twin(Word)


def new_word(text: str, value: str, pattern: str, literal: bool, dynamic: bool = False,
             glob: bool = False, tilde: bool = False) -> Word:
    """`Word(...)`, built as a twin (`types.mutable_twin`: half the cost); the walk makes a
    few per line."""
    w: Any = new_record(_WordTwin)
    w.text = text
    w.value = value
    w.pattern = pattern
    w.literal = literal
    w.dynamic = dynamic
    w.glob = glob
    w.tilde = tilde
    w.__class__ = Word
    return w


def escape_pattern(s: str) -> str:
    if "*" not in s and "?" not in s and "[" not in s and "]" not in s:
        return s  # (the usual text: nothing to escape)
    return "".join("[" + c + "]" if c in "*?[]" else c for c in s)


def literal_word(s: str) -> Word:
    """The word of fixed text `s` (as if it were single-quoted)."""
    return new_word(s, s, escape_pattern(s), True)
