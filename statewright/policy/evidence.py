"""Evidence (DESIGN.md section 3): what statewright itself observed a call do, kept in the run's
context under `_observed`, so that guards can rely on it instead of on what the agent says.

    _observed.commands.<allowed entry> = {ok, exit_code, at}   the last line that entry matched
    _observed.last_tool = {name, ok}
    _observed.files_changed = [project-relative paths changed in this state]

Only `observe` writes it, from the host's or the proxy's report of a call's result; agent data,
`load_workflow` input and `force_state` context never carry a `_` key (`engine.strip_reserved`).

A test runner's pass is credited only when the line is a run of the suite: not one that
selects or deselects tests, only collects them or prints a version (`policy.programs.runs`),
and not one after the agent changed, in this state, the configuration that decides what runs
(`not_evidence_of_a_pass`; the runtime compares). A failure is credited either way. A command
is credited only when the line's exit status is that command's own: the last
top-level command, not after `||`, not followed by `;`, `&` or a later pipeline stage, not
negated, and no function defined in the line (a function named like a program, or bash's
`command_not_found_handle`, would answer for it). The shell analysis decides which command that
is (`ShellAnalysis.status_command`). Pure; the shell analysis loads only for shell lines.
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING
from ..names import OBSERVED

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

def _own_line(command: str) -> str:
    """The line itself: a line the host ran under the kernel sandbox comes back in the
    launcher's text (`sandbox.launcher.wrap`, or `fresh` for Gemini CLI); what it is evidence
    of is the line inside (`unwrap` reads either, and nothing that reads differently)."""
    from ..sandbox.launcher import unwrap

    return unwrap(command) or command


def credited_entries(command: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """The `allowed_commands` entries whose exit status the line's exit status is (empty when
    the line's status could come from anything else)."""
    if not allowed or not isinstance(command, str) or not command.strip():
        return ()
    from .shell import analyze, matching_prefixes

    a = analyze(_own_line(command))
    if a.problems or a.functions or a.status_command < 0:
        return ()
    c = a.commands[a.status_command]
    if c.parent is not None or c.function_call or c.kind != "simple":
        return ()
    return matching_prefixes(c.argv, allowed)


def not_evidence_of_a_pass(command: str) -> tuple[str | None, tuple[str, ...]]:
    """(why the line's status command is not a run of the whole suite, or None; the globs of
    the configuration that decides what it runs), when it is a test runner's
    (`policy.programs.runs`). A pass of such a line is not credited, nor a pass after the agent
    changed that configuration in this state (the runtime compares); a failure still is."""
    from .programs.runs import config_of, not_a_full_run
    from .shell import analyze

    a = analyze(_own_line(command))
    if a.problems or a.status_command < 0:
        return None, ()
    argv = [w.value for w in a.commands[a.status_command].argv]
    return not_a_full_run(argv), config_of(argv)


def observe(context: dict[str, Any], *, tool: str, is_error: bool, exit_code: int | None,
            entries: tuple[str, ...], files: list[str] | tuple[str, ...],
            at: float) -> dict[str, Any]:
    """The context with this result's evidence recorded (a new dict; `context` is unchanged).

    A command entry is recorded only when the result tells the exit status: a failure (`ok`
    false, its code when known), or an exit code the host reported. A call that finished
    without saying how the command ended (a background job) leaves the entries as they were."""
    old = context.get(OBSERVED)
    obs: dict[str, Any] = dict(old) if isinstance(old, dict) else {}
    ok = not is_error and exit_code in (None, 0)
    obs["last_tool"] = {"name": tool, "ok": ok}
    if entries and (is_error or exit_code is not None):
        commands = dict(obs.get("commands") or {})
        for e in entries:
            commands[e] = {"ok": not is_error and exit_code == 0, "exit_code": exit_code,
                           "at": at}
        obs["commands"] = commands
    if files:
        seen = obs.get("files_changed")
        obs["files_changed"] = sorted(set(seen if isinstance(seen, list) else ()).union(files))
    elif "files_changed" not in obs:
        obs["files_changed"] = []
    return {**context, OBSERVED: obs}


#: where a downstream shell tool reports a line's exit status in its structured result
EXIT_CODE_KEYS = ("exitCode", "exit_code", "returncode", "returnCode")


def exit_code_of_result(result: dict[str, Any]) -> int | None:
    """The exit status a forwarded result reports in `structuredContent` (an integer under one
    of `EXIT_CODE_KEYS`), else None: a result that only says it did not fail is no evidence
    that a command exited 0 (DESIGN section 3)."""
    sc = result.get("structuredContent")
    if isinstance(sc, dict):
        for k in EXIT_CODE_KEYS:
            v = sc.get(k)
            if isinstance(v, int) and not isinstance(v, bool):
                return v
    return None
