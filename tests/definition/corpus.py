"""Shared document corpora for the definition tests."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference"
REPO = HERE.parent.parent
EXAMPLES = REPO / "workflows"


def base() -> dict[str, Any]:
    """A small valid workflow that invalid cases are derived from."""
    return {
        "id": "base",
        "initial": "work",
        "guards": {"ok": {"field": "result", "op": "eq", "value": "pass"}},
        "states": {
            "work": {"allowed_tools": ["Read", "Edit"], "on": {"DONE": "done", "CHECK": {"target": "done", "guard": "ok"}}},
            "done": {"type": "final"},
        },
    }


def mutate(**changes: Any) -> dict[str, Any]:
    """base() with JSON-Pointer-addressed changes (`None` key value `...` deletes)."""
    doc = base()
    for ptr, value in changes.items():
        parts = ptr.strip("/").split("/")
        node = doc
        for p in parts[:-1]:
            node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
        if value is ...:
            del node[parts[-1]]
        else:
            node[parts[-1]] = copy.deepcopy(value)
    return doc


def reference_docs() -> dict[str, Any]:
    return {p.name: json.loads(p.read_text()) for p in sorted(REFERENCE.glob("*.json"))}


def example_docs() -> dict[str, Any]:
    return {p.name: json.loads(p.read_text()) for p in sorted(EXAMPLES.glob("*.json"))}


def wf(states: dict[str, Any], initial: str = "a", **top: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": "t", "initial": initial, "states": states}
    doc.update(top)
    return doc


F = {"type": "final"}

# (case id, document, expected pointer, expected code). Structural cases are ones the JSON Schema
# (and the pydantic model) must reject; semantic cases pass both and fail a rule of DESIGN 2.
STRUCTURAL: list[tuple[str, Any, str, str]] = [
    ("not-an-object", [1, 2], "", "wrong-type"),
    ("number-document", 42, "", "wrong-type"),
    ("missing-id", mutate(**{"id": ...}), "", "missing-field"),
    ("missing-initial", mutate(**{"initial": ...}), "", "missing-field"),
    ("missing-states", mutate(**{"states": ...}), "", "missing-field"),
    ("bad-id-pattern", mutate(id="-bad id"), "/id", "bad-format"),
    ("id-not-string", mutate(id=5), "/id", "wrong-type"),
    ("empty-initial", mutate(initial=""), "/initial", "empty"),
    ("empty-states", mutate(states={}), "/states", "empty"),
    ("unknown-top-field", mutate(descripton="x"), "/descripton", "unknown-field"),
    ("unknown-state-field", mutate(**{"states/work/allowd_tools": ["Read"]}), "/states/work/allowd_tools", "unknown-field"),
    ("state-not-object", mutate(**{"states/work": "x"}), "/states/work", "wrong-type"),
    ("state-type-not-final", mutate(**{"states/done/type": "terminal"}), "/states/done/type", "invalid-value"),
    ("allowed-tools-not-list", mutate(**{"states/work/allowed_tools": "Read"}), "/states/work/allowed_tools", "wrong-type"),
    ("allowed-tools-item-not-string", mutate(**{"states/work/allowed_tools": ["Read", 3]}), "/states/work/allowed_tools/1", "wrong-type"),
    ("allowed-tools-null", mutate(**{"states/work/allowed_tools": None}), "/states/work/allowed_tools", "wrong-type"),
    ("max-iterations-zero", mutate(**{"states/work/max_iterations": 0}), "/states/work/max_iterations", "too-small"),
    ("max-iterations-string", mutate(**{"states/work/max_iterations": "5"}), "/states/work/max_iterations", "wrong-type"),
    ("max-iterations-bool", mutate(**{"states/work/max_iterations": True}), "/states/work/max_iterations", "wrong-type"),
    ("max-iterations-fraction", mutate(**{"states/work/max_iterations": 2.5}), "/states/work/max_iterations", "wrong-type"),
    ("max-edit-lines-negative", mutate(**{"states/work/max_edit_lines": -3}), "/states/work/max_edit_lines", "too-small"),
    ("max-files-zero", mutate(**{"states/work/max_files_per_state": 0}), "/states/work/max_files_per_state", "too-small"),
    ("context-budget-zero", mutate(**{"states/work/context_budget_bytes": 0}), "/states/work/context_budget_bytes", "too-small"),
    ("instructions-not-string", mutate(**{"states/work/instructions": ["a"]}), "/states/work/instructions", "wrong-type"),
    ("allowed-commands-empty-item", mutate(**{"states/work/allowed_commands": [""]}), "/states/work/allowed_commands/0", "empty"),
    ("blocked-env-bad-name", mutate(**{"states/work/blocked_env": ["$AWS_KEY"]}), "/states/work/blocked_env/0", "bad-format"),
    ("deny-env-not-list", mutate(**{"states/work/deny_env": "AWS"}), "/states/work/deny_env", "wrong-type"),
    ("env-overrides-non-string", mutate(**{"states/work/env_overrides": {"PORT": 8080}}), "/states/work/env_overrides/PORT", "wrong-type"),
    ("env-bad-key", mutate(**{"states/work/env": {"BAD-NAME": "x"}}), "/states/work/env/BAD-NAME", "bad-name"),
    ("read-only-not-list", mutate(**{"states/work/read_only": "tests/**"}), "/states/work/read_only", "wrong-type"),
    ("read-only-empty-item", mutate(**{"states/work/read_only": ["tests/**", ""]}), "/states/work/read_only/1", "empty"),
    ("read-only-item-not-string", mutate(**{"states/work/read_only": [7]}), "/states/work/read_only/0", "wrong-type"),
    ("read-only-null", mutate(**{"states/work/read_only": None}), "/states/work/read_only", "wrong-type"),
    ("sandbox-bad-value", mutate(**{"states/work/sandbox": "on"}), "/states/work/sandbox", "invalid-value"),
    ("sandbox-bool", mutate(**{"states/work/sandbox": True}), "/states/work/sandbox", "invalid-value"),
    ("network-not-bool", mutate(**{"states/work/network": "false"}), "/states/work/network", "wrong-type"),
    ("network-number", mutate(**{"states/work/network": 0}), "/states/work/network", "wrong-type"),
    ("unix-sockets-not-bool", mutate(**{"states/work/unix_sockets": "yes"}), "/states/work/unix_sockets", "wrong-type"),
    ("on-not-object", mutate(**{"states/work/on": ["DONE"]}), "/states/work/on", "wrong-type"),
    ("bad-event-name", mutate(**{"states/work/on/do-it": "done"}), "/states/work/on/do-it", "bad-name"),
    ("reserved-event-name", mutate(**{"states/work/on/BRANCH_DONE:x": "done"}), "/states/work/on/BRANCH_DONE:x", "bad-name"),
    ("state-name-dollar", mutate(**{"states/$return": {"type": "final"}}), "/states/$return", "bad-name"),
    ("transition-number", mutate(**{"states/work/on/DONE": 5}), "/states/work/on/DONE", "wrong-type"),
    ("transition-empty-target", mutate(**{"states/work/on/DONE": ""}), "/states/work/on/DONE", "empty"),
    ("guarded-missing-target", mutate(**{"states/work/on/CHECK": {"guard": "ok"}}), "/states/work/on/CHECK", "missing-field"),
    ("guarded-unknown-field", mutate(**{"states/work/on/CHECK": {"target": "done", "gaurd": "ok"}}), "/states/work/on/CHECK/gaurd", "unknown-field"),
    ("guarded-approval-not-bool", mutate(**{"states/work/on/CHECK": {"target": "done", "requires_approval": "yes"}}), "/states/work/on/CHECK/requires_approval", "wrong-type"),
    ("guarded-guards-not-list", mutate(**{"states/work/on/CHECK": {"target": "done", "guards": "ok"}}), "/states/work/on/CHECK/guards", "wrong-type"),
    ("branched-empty", mutate(**{"states/work/on/CHECK": []}), "/states/work/on/CHECK", "empty"),
    ("branched-entry-approval", mutate(**{"states/work/on/CHECK": [{"target": "done", "requires_approval": True}]}), "/states/work/on/CHECK/0/requires_approval", "unknown-field"),
    ("branched-entry-string", mutate(**{"states/work/on/CHECK": ["done"]}), "/states/work/on/CHECK/0", "wrong-type"),
    ("invoke-missing-on-complete", mutate(**{"states/work/on/CHECK": {"invoke": "child"}}), "/states/work/on/CHECK", "missing-field"),
    ("invoke-input-not-object", mutate(**{"states/work/on/CHECK": {"invoke": "child", "on_complete": "done", "input": [1]}}), "/states/work/on/CHECK/input", "wrong-type"),
    ("invoke-bad-id", mutate(**{"states/work/on/CHECK": {"invoke": "no spaces", "on_complete": "done"}}), "/states/work/on/CHECK/invoke", "bad-format"),
    ("fork-missing-branches", mutate(**{"states/work/on/CHECK": {"fork": {"on_complete": "done"}}}), "/states/work/on/CHECK/fork", "missing-field"),
    ("fork-bad-join", mutate(**{"states/work/on/CHECK": {"fork": {"branches": {"b": {"initial": "done", "terminal": "done"}}, "join": "some", "on_complete": "done"}}}), "/states/work/on/CHECK/fork/join", "invalid-value"),
    ("fork-branch-missing-terminal", mutate(**{"states/work/on/CHECK": {"fork": {"branches": {"b": {"initial": "done"}}, "on_complete": "done"}}}), "/states/work/on/CHECK/fork/branches/b", "missing-field"),
    ("fork-empty-branches", mutate(**{"states/work/on/CHECK": {"fork": {"branches": {}, "on_complete": "done"}}}), "/states/work/on/CHECK/fork/branches", "empty"),
    ("fork-bad-branch-name", mutate(**{"states/work/on/CHECK": {"fork": {"branches": {"a/b": {"initial": "done", "terminal": "done"}}, "on_complete": "done"}}}), "/states/work/on/CHECK/fork/branches/a~1b", "bad-name"),
    ("fork-extra-key", mutate(**{"states/work/on/CHECK": {"fork": {"branches": {"b": {"initial": "done", "terminal": "done"}}, "on_complete": "done"}, "target": "done"}}), "/states/work/on/CHECK/target", "unknown-field"),
    ("guard-bad-op", mutate(**{"guards/ok/op": "equals"}), "/guards/ok/op", "invalid-value"),
    ("guard-missing-field", mutate(**{"guards/ok/field": ...}), "/guards/ok", "missing-field"),
    ("guard-empty-path-part", mutate(**{"guards/ok/field": "review..score"}), "/guards/ok/field", "bad-format"),
    ("guard-unknown-key", mutate(**{"guards/ok/values": [1]}), "/guards/ok/values", "unknown-field"),
    ("interrupt-missing-trigger", mutate(interrupts={"i": {"target": "work"}}), "/interrupts/i", "missing-field"),
    ("interrupt-empty-pattern", mutate(interrupts={"i": {"trigger": {"file_pattern": ""}, "target": "work"}}), "/interrupts/i/trigger/file_pattern", "empty"),
    ("interrupt-trigger-extra", mutate(interrupts={"i": {"trigger": {"file_pattern": "*.py", "tool": "Edit"}, "target": "work"}}), "/interrupts/i/trigger/tool", "unknown-field"),
    ("meta-bad-danger", mutate(meta={"danger_level": "extreme"}), "/meta/danger_level", "invalid-value"),
    ("meta-bad-approval-mode", mutate(meta={"approval_mode": "slack"}), "/meta/approval_mode", "invalid-value"),
    ("meta-debug-not-bool", mutate(meta={"debug": "true"}), "/meta/debug", "wrong-type"),
    ("meta-steps-negative", mutate(meta={"estimated_steps": -1}), "/meta/estimated_steps", "too-small"),
    ("context-not-object", mutate(context=[1]), "/context", "wrong-type"),
    ("schema-not-string", mutate(**{"$schema": 1}), "/$schema", "wrong-type"),
]

SEMANTIC: list[tuple[str, Any, str, str]] = [
    ("initial-missing", mutate(initial="nowhere"), "/initial", "unknown-state"),
    ("no-final-state", wf({"a": {"on": {"GO": "b"}}, "b": {"on": {"BACK": "a"}}}), "/states", "no-final-state"),
    ("unknown-simple-target", mutate(**{"states/work/on/DONE": "dnoe"}), "/states/work/on/DONE", "unknown-state"),
    ("unknown-guarded-target", mutate(**{"states/work/on/CHECK/target": "nope"}), "/states/work/on/CHECK/target", "unknown-state"),
    ("unknown-branch-target", mutate(**{"states/work/on/CHECK": [{"target": "done", "guard": "ok"}, {"target": "nope"}]}), "/states/work/on/CHECK/1/target", "unknown-state"),
    ("unknown-safe-next", mutate(**{"states/work/safe_next": "nope"}), "/states/work/safe_next", "unknown-state"),
    ("unknown-invoke-on-complete", mutate(**{"states/work/on/CHECK": {"invoke": "child", "on_complete": "nope"}}), "/states/work/on/CHECK/on_complete", "unknown-state"),
    ("unknown-invoke-on-fail", mutate(**{"states/work/on/CHECK": {"invoke": "child", "on_complete": "done", "on_fail": "nope"}}), "/states/work/on/CHECK/on_fail", "unknown-state"),
    ("unknown-fork-on-complete", wf({"a": {"on": {"GO": {"fork": {"branches": {"x": {"initial": "x1", "terminal": "xd"}}, "on_complete": "nope"}}}}, "x1": {"on": {"OK": "xd"}}, "xd": F}), "/states/a/on/GO/fork/on_complete", "unknown-state"),
    ("unknown-fork-on-fail", wf({"a": {"on": {"GO": {"fork": {"branches": {"x": {"initial": "x1", "terminal": "xd"}}, "on_complete": "xd", "on_fail": "nope"}}}}, "x1": {"on": {"OK": "xd"}}, "xd": F}), "/states/a/on/GO/fork/on_fail", "unknown-state"),
    ("unknown-fork-initial", wf({"a": {"on": {"GO": {"fork": {"branches": {"x": {"initial": "nope", "terminal": "xd"}}, "on_complete": "xd"}}}}, "xd": F}), "/states/a/on/GO/fork/branches/x/initial", "unknown-state"),
    ("unknown-fork-terminal", wf({"a": {"on": {"GO": {"fork": {"branches": {"x": {"initial": "x1", "terminal": "nope"}}, "on_complete": "d"}}}}, "x1": {"on": {"OK": "d"}}, "d": F}), "/states/a/on/GO/fork/branches/x/terminal", "unknown-state"),
    ("unknown-interrupt-target", mutate(interrupts={"i": {"trigger": {"file_pattern": "*.py"}, "target": "nope"}}), "/interrupts/i/target", "unknown-state"),
    ("unknown-guard-single", mutate(**{"states/work/on/CHECK/guard": "okk"}), "/states/work/on/CHECK/guard", "unknown-guard"),
    ("unknown-guard-list", mutate(**{"states/work/on/CHECK": {"target": "done", "guards": ["ok", "nope"]}}), "/states/work/on/CHECK/guards/1", "unknown-guard"),
    ("unknown-guard-branch", mutate(**{"states/work/on/CHECK": [{"target": "done", "guards": ["nope"]}, {"target": "done"}]}), "/states/work/on/CHECK/0/guards/0", "unknown-guard"),
    ("default-branch-not-last", mutate(**{"states/work/on/CHECK": [{"target": "done"}, {"target": "done", "guard": "ok"}]}), "/states/work/on/CHECK/0", "default-branch-not-last"),
    ("two-default-branches", mutate(**{"states/work/on/CHECK": [{"target": "done", "guard": "ok"}, {"target": "done"}, {"target": "work"}]}), "/states/work/on/CHECK/1", "default-branch-not-last"),
    ("unreachable-state", mutate(**{"states/island": {"on": {"GO": "done"}}}), "/states/island", "unreachable-state"),
    ("final-with-on", mutate(**{"states/done/on": {"AGAIN": "work"}}), "/states/done/on", "final-has-transitions"),
    ("final-with-safe-next", mutate(**{"states/done/safe_next": "work"}), "/states/done/safe_next", "final-has-transitions"),
    ("return-without-interrupts", mutate(**{"states/work/on/BACK": "$return"}), "/states/work/on/BACK", "illegal-return"),
    ("return-in-normal-state", wf({"a": {"on": {"GO": "h", "DONE": "d"}}, "h": {"on": {"BACK": "$return"}}, "d": F},
                                  interrupts={"i": {"trigger": {"file_pattern": "*.py"}, "target": "h"}}), "/states/h/on/BACK", "illegal-return"),
    ("return-as-interrupt-target", mutate(interrupts={"i": {"trigger": {"file_pattern": "*.py"}, "target": "$return"}}), "/interrupts/i/target", "illegal-return"),
    ("return-as-invoke-target", wf({"a": {"on": {"DONE": "d"}}, "h": {"on": {"GO": {"invoke": "child", "on_complete": "$return"}}}, "d": F},
                                   interrupts={"i": {"trigger": {"file_pattern": "*.py"}, "target": "h"}}), "/states/h/on/GO/on_complete", "illegal-return"),
    ("invoke-self", mutate(**{"states/work/on/CHECK": {"invoke": "base", "on_complete": "done"}}), "/states/work/on/CHECK/invoke", "invoke-cycle"),
    ("alias-conflict-env", mutate(**{"states/work/blocked_env": ["A"], "states/work/deny_env": ["B"]}), "/states/work/deny_env", "alias-conflict"),
    ("alias-conflict-overrides", mutate(**{"states/work/env_overrides": {"A": "1"}, "states/work/env": {"B": "2"}}), "/states/work/env", "alias-conflict"),
    ("read-only-absolute", mutate(**{"states/work/read_only": ["tests/**", "/etc/passwd"]}), "/states/work/read_only/1", "bad-read-only"),
    ("read-only-home", mutate(**{"states/work/read_only": ["~/.ssh/**"]}), "/states/work/read_only/0", "bad-read-only"),
    ("read-only-drive", mutate(**{"states/work/read_only": ["C:/work/**"]}), "/states/work/read_only/0", "bad-read-only"),
    ("read-only-parent", mutate(**{"states/work/read_only": ["../sibling/**"]}), "/states/work/read_only/0", "bad-read-only"),
    ("read-only-inner-parent", mutate(**{"states/work/read_only": ["src/../../x"]}), "/states/work/read_only/0", "bad-read-only"),
    ("read-only-backslash", mutate(**{"states/work/read_only": ["tests\\unit\\*.py"]}), "/states/work/read_only/0", "bad-read-only"),
    ("guard-missing-value", mutate(**{"guards/ok/value": ...}), "/guards/ok", "guard-missing-value"),
    ("guard-in-not-list", mutate(**{"guards/ok": {"field": "env", "op": "in", "value": "staging"}}), "/guards/ok/value", "guard-bad-value"),
    ("guard-gt-bool", mutate(**{"guards/ok": {"field": "n", "op": "gt", "value": True}}), "/guards/ok/value", "guard-bad-value"),
]

# Not documents at all: JSON text that does not parse, etc. (text, pointer, code)
MALFORMED: list[tuple[str, str | bytes, str, str]] = [
    ("truncated", '{"id": "x", "initial": ', "", "invalid-json"),
    ("trailing-comma", '{"id": "x",}', "", "invalid-json"),
    ("nan", '{"id": "x", "initial": "a", "states": {}, "context": {"n": NaN}}', "", "invalid-json"),
    ("not-utf8", b'{"id": "\xff"}', "", "invalid-json"),
    ("duplicate-key", '{"id": "x", "initial": "a", "initial": "b", "states": {"a": {"type": "final"}}}', "/initial", "duplicate-key"),
    ("nested-duplicate-key", '{"id": "x", "initial": "a", "states": {"a": {"type": "final", "type": "final"}}}', "/states/a/type", "duplicate-key"),
]
