"""Pure helpers of the proxy (no processes)."""

from __future__ import annotations

import base64
import json

from statewright.proxy.server import raw_result_bytes, resolve_session
from statewright.proxy.tools import OWN_TOOLS, TOOL_SPECS, check_arguments, own_tools


def test_session_resolution_order(monkeypatch):
    assert resolve_session() == "default"
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "claude-1")
    assert resolve_session() == "claude-1"
    monkeypatch.setenv("STATEWRIGHT_SESSION", "sw-1")
    assert resolve_session() == "sw-1"
    assert resolve_session("explicit") == "explicit"


def test_force_state_is_listed_only_for_debug():
    assert "statewright_force_state" not in {t.name for t in own_tools(False)}
    assert {t.name for t in own_tools(True)} == OWN_TOOLS


def test_argument_checks_name_each_problem_with_a_pointer():
    schema = TOOL_SPECS["statewright_transition"]["schema"]
    assert check_arguments(schema, {"event": "GO", "data": {"x": 1}, "expected_version": 3}) == []
    problems = check_arguments(schema, {"event": 3, "expected_version": 0, "extra": True})
    text = " ".join(problems)
    assert "/event" in text and "/expected_version" in text and "extra" in text
    assert check_arguments(TOOL_SPECS["statewright_load_workflow"]["schema"], {})[0].startswith("/:")


def test_result_bytes_count_what_the_agent_receives():
    png = base64.b64encode(b"\x89PNG" * 10).decode()
    result = {"content": [{"type": "text", "text": "héllo"},
                          {"type": "image", "data": png, "mimeType": "image/png"},
                          {"type": "resource", "resource": {"uri": "file:///x", "text": "abc"}}],
              "structuredContent": {"a": [1, 2]}}
    expected = (len("héllo".encode()) + len(png)
                + len(json.dumps(result["content"][2], separators=(",", ":")))
                + len(json.dumps({"a": [1, 2]}, separators=(",", ":"))))
    assert raw_result_bytes(result) == expected
    assert raw_result_bytes({"content": []}) == 0


def test_the_proxys_tools_are_exactly_the_names_policy_exempts() -> None:
    """One list of statewright's own tools: the proxy offers exactly the names the policy
    exempts from `allowed_tools` (statewright.names.OWN_TOOLS)."""
    from statewright.names import OWN_TOOLS
    from statewright.proxy import tools as own

    assert own.OWN_TOOLS == OWN_TOOLS
