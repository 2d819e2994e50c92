"""The proxy's own tools (DESIGN.md section 5): names, descriptions and input schemas written
for the agent that reads them, plus strict argument checking.

The descriptions teach the loop an agent should follow: read the state, work with the allowed
tools, fire an event to move on, and after a refusal read the reason (it names what is allowed
and which events exist) instead of retrying the same call.
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

INSTRUCTIONS = (
    "statewright keeps this session on a declared workflow. Call statewright_get_state to see "
    "the current state, its instructions, the tools it allows and the events that move it on; "
    "fire events with statewright_transition. Tools of other MCP servers appear here as "
    "<server>__<tool> and only while the current state allows them. A refused call explains "
    "why and what is allowed instead."
)

STATE_ANSWER_HELP = (
    "The answer is JSON (also in structuredContent): `state` and `status` of the run, "
    "`instructions` for this state, `allowed_tools` (null = any tool, [] = only statewright "
    "tools), `allowed_commands` and `blocked_env` for shell use, `counters` (tool calls, files "
    "edited, result bytes used so far against this state's limits), `transitions` (each "
    "`{event, target, guards, requires_approval, passes}`: the events you can fire now and "
    "whether their guards currently pass), `context` (the run's data, which guards read), "
    "`pending_approval`, `interrupt` (set while an interrupt handler runs; fire the event that "
    "leads to `$return` to go back), `fork`, and `downstream` (the forwarded MCP servers and "
    "whether they are up)."
)

ERROR_HELP = (
    "On failure the result has isError=true and JSON `{error: {code, message}, ...state}`: "
    "the message says what to do, and the state fields let you recover without another call."
)

# Optional arguments are plain optional properties with one `type` each: a `["x", "null"]`
# type array is legal JSON Schema but does not survive clients that map tool schemas onto a
# single-type dialect (the Inspector's `--strict` flags it). An explicit `null` is still
# accepted for them and means "absent" (`drop_nulls`), as it always did.
_OBJECT = {"type": "object", "additionalProperties": True}

TOOL_SPECS: dict[str, dict[str, Any]] = {
    "statewright_get_state": {
        "title": "Where am I in the workflow?",
        "description": (
            "Show the current workflow run of this session: its state, what this state allows, "
            "the limits used so far, and the events that move it on. Call this first, and again "
            "whenever a tool call is refused or the tool list changes. " + STATE_ANSWER_HELP
            + " When the session's run has ended, the answer is that run with `status` "
            "completed or failed, `is_final` true and no transitions: nothing is enforced any "
            "more, and a new run may be started. With no run at all the result is an error "
            "NO_ACTIVE_RUN; then use statewright_list_workflows and statewright_load_workflow, "
            "or just work: nothing is enforced."
        ),
        "schema": {"type": "object", "properties": {}, "additionalProperties": False},
    },
    "statewright_list_workflows": {
        "title": "Which workflows exist?",
        "description": (
            "List the workflows this project can run (name, description, number of states, "
            "where it was found). Start one with statewright_load_workflow."
        ),
        "schema": {"type": "object", "properties": {}, "additionalProperties": False},
    },
    "statewright_load_workflow": {
        "title": "Start (or resume) a workflow",
        "description": (
            "Start a run of the named workflow for this session, or with resume=true pick up the "
            "newest paused run of it. With branch, join a parallel fork branch of the running "
            "workflow as a second agent. From then on every tool call is checked against the "
            "current state's rules, and the tool list shows only what the state allows. "
            + STATE_ANSWER_HELP + " " + ERROR_HELP
        ),
        "schema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1,
                         "description": "Workflow id, as listed by statewright_list_workflows."},
                "resume": {"type": "boolean", "default": False,
                           "description": ("Resume the newest paused run of this workflow "
                                           "instead of starting fresh.")},
                "branch": {"type": "string",
                           "description": "Fork branch to bind to (parallel forks only)."},
                "input": {**_OBJECT,
                          "description": ("Initial context data merged into the workflow's "
                                          "context (guards read it).")},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
    },
    "statewright_transition": {
        "title": "Fire an event to move the run on",
        "description": (
            "Fire an event from the current state (see `transitions` in statewright_get_state). "
            "Pass the facts the guards check in `data`: it is merged into the run's context "
            "after the transition is accepted (guards see the context before the transition, so "
            "put facts you want a guard to test into an earlier transition or the workflow "
            "input). Keys starting with '_' are reserved and dropped. Answers the new state. "
            "Refusals: INVALID_TRANSITION (no such event here: the answer lists the valid "
            "ones), GUARD_REJECTED (each failed guard and the value it saw), PENDING_APPROVAL "
            "(a human must approve with `statewright approve` first: wait, do not retry in a "
            "loop), FINAL_STATE, STALE_VERSION (someone else moved the run: re-read the state). "
            + ERROR_HELP
        ),
        "schema": {
            "type": "object",
            "properties": {
                "event": {"type": "string", "minLength": 1,
                          "description": ("Event name, e.g. TESTS_PASS; one of the "
                                          "`transitions[].event` values.")},
                "data": {**_OBJECT,
                         "description": ("Facts to merge into the run context, "
                                         "e.g. {\"tests_passed\": true}.")},
                "expected_version": {"type": "integer", "minimum": 1,
                                     "description": ("Only fire if the run's `version` is "
                                                     "still this (optimistic concurrency).")},
            },
            "required": ["event"],
            "additionalProperties": False,
        },
    },
    "statewright_pause": {
        "title": "Pause the workflow (only if the workflow allows it)",
        "description": (
            "Pause this session's run: its state and context are kept and enforcement stops "
            "until it is resumed (statewright_load_workflow with resume=true, or `statewright "
            "resume`). Because pausing lifts every rule, the agent may pause only when the "
            "workflow opts in with meta.allow_agent_pause: true (or meta.debug: true); otherwise "
            "the call is refused with TOOL_DENIED and only a human can pause, with `statewright "
            "pause` in a terminal. Do not use it to get around a refusal: fire an event instead. "
            + ERROR_HELP
        ),
        "schema": {"type": "object", "properties": {}, "additionalProperties": False},
    },
    "statewright_resume": {
        "title": "Resume a paused workflow run",
        "description": (
            "Resume a paused run, so that its rules apply to this session again: without a "
            "name, this session's own paused run; with a workflow name, that workflow's newest "
            "paused run (or a fresh run when none is paused). Iteration counters restart, the "
            "context is kept. " + ERROR_HELP
        ),
        "schema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1,
                         "description": "Workflow id; omit for this session's paused run."},
            },
            "additionalProperties": False,
        },
    },
    "statewright_fork": {
        "title": "See or take a branch of a parallel fork",
        "description": (
            "Without a branch: the fork this run waits on, each branch's state and who works "
            "it. With a branch: bind the caller to it -- from then on the caller's calls obey "
            "that branch's rules until the branch ends (a sub-agent works one branch; a branch "
            "another agent holds cannot be taken). Fire the branch's events with "
            "statewright_transition; the parent's calls keep the parent's rules, and the join "
            "fires when the branches are done. " + ERROR_HELP
        ),
        "schema": {
            "type": "object",
            "properties": {
                "branch": {"type": "string", "minLength": 1,
                           "description": "Branch name; omit to list the branches."},
            },
            "additionalProperties": False,
        },
    },
    "statewright_force_state": {
        "title": "Jump to a state (debug workflows only)",
        "description": (
            "Move the run to any state of its workflow, merging `context` into the run's "
            "context. Offered only while the workflow has meta.debug=true; it is recorded in the "
            "run's history. " + ERROR_HELP
        ),
        "schema": {
            "type": "object",
            "properties": {
                "state": {"type": "string", "minLength": 1, "description": "Target state name."},
                "context": {**_OBJECT, "description": "Data merged into the run context."},
            },
            "required": ["state"],
            "additionalProperties": False,
        },
    },
}

FORCE_STATE = "statewright_force_state"
OWN_TOOLS = frozenset(TOOL_SPECS)

READ_ONLY_TOOLS = frozenset({"statewright_get_state", "statewright_list_workflows"})


def tool_dict(name: str) -> dict[str, Any]:
    """One of our tools as it goes on the wire (`tools/list`); the SDK's `Tool` is built from
    this, so the stdio early lane (no SDK loaded yet) lists exactly the same."""
    spec = TOOL_SPECS[name]
    return {"name": name, "title": spec["title"], "description": spec["description"],
            "inputSchema": spec["schema"],
            "annotations": {"readOnlyHint": name in READ_ONLY_TOOLS, "destructiveHint": False,
                            "openWorldHint": False}}


def listed_names(debug: bool) -> list[str]:
    """The statewright tools to list: force_state only for a debug workflow."""
    return [n for n in TOOL_SPECS if debug or n != FORCE_STATE]


def debug_listed(rt: Any, session: str) -> bool:
    """Whether force_state is listed for `session` (`debug_run` of its effective run)."""
    eff = rt.effective_run(session)
    return eff is not None and debug_run(*eff)


def debug_run(run: Any, wf: Any) -> bool:
    """A running run of a debug workflow: the only one for which force_state is listed."""
    return bool(wf.debug and run.status == "running")


_TOOLS: dict[str, Any] = {}


def own_tools(debug: bool) -> list[Any]:
    """The statewright tools to list, as the SDK's `Tool` objects."""
    if not _TOOLS:
        import mcp_types as types

        for name in TOOL_SPECS:
            _TOOLS[name] = types.Tool.model_validate(tool_dict(name))
    return [_TOOLS[n] for n in listed_names(debug)]


def server_version() -> str:
    """statewright's version as the proxy announces it."""
    from .. import __version__

    return __version__


#: optional arguments of our tools for which an explicit `null` means "not given"
NULL_MEANS_ABSENT = {
    "statewright_load_workflow": frozenset({"branch", "input"}),
    "statewright_transition": frozenset({"data", "expected_version"}),
    "statewright_force_state": frozenset({"context"}),
    "statewright_resume": frozenset({"name"}),
    "statewright_fork": frozenset({"branch"}),
}


def drop_nulls(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """`arguments` without the `null` values the tool takes as "not given"."""
    keys = NULL_MEANS_ABSENT.get(name)
    if not keys or not any(arguments.get(k, 0) is None for k in keys):
        return arguments
    return {k: v for k, v in arguments.items() if not (v is None and k in keys)}


_validators: dict[int, Any] = {}


def check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Problems with `arguments` against a JSON Schema, each with its JSON Pointer; [] if fine.
    Validators are cached per schema object (the hot path validates every forwarded call)."""
    key = id(schema)
    entry = _validators.get(key)
    if entry is None or entry[0] is not schema:
        import jsonschema

        from .argcheck import plain_check

        try:
            cls = jsonschema.validators.validator_for(
                schema, default=jsonschema.Draft202012Validator)
            cls.check_schema(schema)
            validator = cls(schema)
        except Exception:
            validator = None
        entry = (schema, validator, plain_check(schema) if validator is not None else None)
        if len(_validators) > 2048:
            _validators.clear()
        _validators[key] = entry
    validator, plain = entry[1], entry[2]
    if validator is None or (plain is not None and plain(arguments)):
        return []  # (`plain` says yes only to arguments that are certainly valid)
    if validator.is_valid(arguments):
        return []
    out = []
    for err in validator.iter_errors(arguments):
        ptr = "".join(f"/{str(p).replace('~', '~0').replace('/', '~1')}" for p in err.absolute_path)
        out.append(f"{ptr or '/'}: {err.message}")
        if len(out) >= 10:
            break
    return out


def name_filter(state: Any) -> Any:
    """A predicate over workflow tool names (`mcp__server__tool`) answering "does this state's
    `allowed_tools`/`disallowed_tools` let this name through?" -- the policy's own matcher."""
    from ..policy.tools import normalize_tool_name, tool_allowed

    allowed, disallowed = state.allowed_tools, state.disallowed_tools
    return lambda name: tool_allowed(normalize_tool_name(name), allowed, disallowed)
