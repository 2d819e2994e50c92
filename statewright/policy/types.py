"""Inputs and outputs of the pure enforcement layer (DESIGN.md section 4).

Every front end translates its own call shape into a `ToolCall`, hands it to
`statewright.runtime` (which calls `statewright.policy.gate`), and translates the `Decision`
back. Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call as the agent made it.

    `tool_name` is the name as the front end saw it (`Bash`, `Edit`, `mcp__github__create_issue`,
    `mcp__statewright__github__create_issue`, or a proxy-forwarded `github__create_issue` passed
    as `mcp__github__create_issue` by the proxy). Normalisation happens in `policy.tools`.
    """

    tool_name: str
    tool_input: dict[str, Any]
    source: str = "claude"  # "claude" (hook) | "proxy" | "cli" (statewright check)
    cwd: str | None = None  # the agent's working directory, when known (hook input `cwd`)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What happened after an allowed call ran (PostToolUse / proxy after forwarding)."""

    tool_name: str
    tool_input: dict[str, Any]
    output_bytes: int = 0  # size of the result the agent received
    is_error: bool = False
    cwd: str | None = None


@dataclass(frozen=True, slots=True)
class Counters:
    """Accounting for the current state of a run (reset on entering a state)."""

    iterations: int = 0
    files_edited: frozenset[str] = frozenset()  # project-relative, '/'-separated
    bytes_read: int = 0
    denied: int = 0


@dataclass(frozen=True, slots=True)
class GateContext:
    """The facts about the world the pure gate needs, gathered by the runtime.

    `read_text(path)` returns the current text of a project file or None if it does not exist
    (used for Write's "lines that differ"); injecting it keeps `gate` free of I/O.
    """

    project_root: str
    store_dir: str  # absolute path of the .statewright directory (or $STATEWRIGHT_HOME)
    protected_files: frozenset[str] = frozenset()  # absolute paths of workflow files in use
    shell_tools: dict[str, str] = field(default_factory=dict)  # MCP tool -> argument holding a command
    events: tuple[str, ...] = ()  # events the agent can fire now (for the deny reason)
    read_text: Callable[[str], str | None] | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    reason: str = ""  # for the agent: what was refused, why, what to do instead
    rule: str = ""  # which check decided: self_protection, allowed_tools, max_iterations, ...
    code: str = ""  # TOOL_DENIED on deny
    explanation: tuple[str, ...] = ()  # line-by-line trace for `statewright check`
    files: tuple[str, ...] = ()  # project-relative files this call would edit
    updated_input: dict[str, Any] | None = None  # rewritten tool_input (blocked_env removal)
    counts_iteration: bool = True  # statewright_* tools do not count

    @staticmethod
    def allow(**kw: Any) -> Decision:
        return Decision(True, **kw)

    @staticmethod
    def deny(reason: str, rule: str, **kw: Any) -> Decision:
        return Decision(False, reason=reason, rule=rule, code="TOOL_DENIED", **kw)
