"""Pure helpers of the proxy (no processes)."""

from __future__ import annotations

import base64
import json

from statewright.proxy.config import resolve_session
from statewright.proxy.limits import raw_result_bytes
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


def test_own_schemas_have_one_type_per_property_and_null_means_absent():
    from statewright.proxy.tools import drop_nulls

    for spec in TOOL_SPECS.values():
        for prop in spec["schema"]["properties"].values():
            assert isinstance(prop.get("type"), str), prop
    schema = TOOL_SPECS["statewright_load_workflow"]["schema"]
    args = drop_nulls("statewright_load_workflow", {"name": "x", "branch": None, "input": None})
    assert args == {"name": "x"} and check_arguments(schema, args) == []
    # a required argument given as null is still wrong
    assert check_arguments(schema, drop_nulls("statewright_load_workflow", {"name": None}))
    # so is null where the schema never allowed it
    assert check_arguments(schema, drop_nulls("statewright_load_workflow",
                                              {"name": "x", "resume": None}))


def test_a_resource_read_is_judged_as_a_read_tool_with_the_local_path():
    from statewright.policy.tools import tool_facts
    from statewright.proxy.passthrough import resource_call

    call = resource_call("files", "file:///tmp/a%20b/c.txt")
    assert call.tool_name == "mcp__files__resources/read"
    assert call.tool_input == {"uri": "file:///tmp/a%20b/c.txt", "path": "/tmp/a b/c.txt"}
    assert resource_call("every", "demo://resource/1").tool_input == {"uri": "demo://resource/1"}
    _name, _first, own, may_write, _counted, _tree = tool_facts(call.tool_name)
    assert not own and not may_write


def test_the_event_store_replays_one_stream_after_an_id_and_forgets_the_oldest():
    import anyio

    from statewright.proxy.events import MemoryEventStore

    async def run() -> None:
        store = MemoryEventStore(max_events=4)
        prime = await store.store_event("a", None)
        ids = [await store.store_event(s, {"n": n}) for n, s in enumerate("abab")]
        replayed: list = []

        async def send(ev) -> None:
            replayed.append((ev.event_id, ev.message))

        assert await store.replay_events_after(ids[0], send) == "a"
        assert replayed == [(ids[2], {"n": 2})]
        assert await store.replay_events_after(prime, send) is None  # dropped (4 kept)

    anyio.run(run)


def test_server_roots_are_reused_briefly_and_follow_mcp_json(tmp_path):
    import json as _json
    import time

    from statewright.config import load_config, mcp_server_roots

    (tmp_path / "statewright.json").write_text(_json.dumps(
        {"mcpServers": {"fs": {"command": "node", "args": ["srv.js", "data"]}}}))
    config = load_config(str(tmp_path))
    root = str(tmp_path.resolve())
    assert mcp_server_roots(config, 60.0) == {"fs": (root,)}
    (tmp_path / "data").mkdir()
    # within max_age and with .mcp.json unchanged: the answer computed before
    assert mcp_server_roots(config, 60.0) == {"fs": (root,)}
    assert mcp_server_roots(config) == {"fs": (root, f"{root}/data")}  # max_age 0: afresh
    # .mcp.json appearing (or changing) is seen at once
    (tmp_path / ".mcp.json").write_text(_json.dumps(
        {"mcpServers": {"git": {"command": "git-mcp", "args": ["data"]}}}))
    assert mcp_server_roots(config, 60.0) == {"fs": (root, f"{root}/data"),
                                              "git": (root, f"{root}/data")}
    # and anything else once the answer is older than max_age
    (tmp_path / "srv.js").mkdir()
    first = mcp_server_roots(config, 0.05)
    time.sleep(0.1)
    again = mcp_server_roots(config, 0.05)
    assert again is not first and again["fs"] == (root, f"{root}/srv.js", f"{root}/data")
