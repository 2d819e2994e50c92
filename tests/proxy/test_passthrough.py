"""What the proxy passes through besides tools (DESIGN section 5, "Forwarding"), with real
processes: progress of a forwarded call (server-everything's long-running operation), logging
messages, resources (URIs unchanged, reads gated by the policy) and prompts (`<server>__`
names), and capabilities that match on stdio and HTTP."""

from __future__ import annotations

import time
import warnings

import mcp_types as types
import pytest
from mcp import MCPError
from mcp.shared.exceptions import MCPDeprecationWarning

from .harness import (
    ProxyClient,
    everything_server,
    file_resources_server,
    free_port,
    fs_server,
    make_project,
    payload,
)
from .workflows import RESOURCES

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("proxy_passthrough")]

LONG = "every__trigger-long-running-operation"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("passthrough") / "proj"
    make_project(root, {"fs": fs_server(root), "every": everything_server(),
                        "files": file_resources_server(root)}, {"res": RESOURCES})
    (root / "notes.txt").write_text("some notes\n")
    return root


@pytest.fixture(scope="module")
def pc(project):
    with ProxyClient(project) as client:
        client.list_tools()
        yield client


def call_with_progress(pc: ProxyClient, name: str, args: dict) -> tuple[types.CallToolResult, list]:
    seen: list = []

    async def run() -> types.CallToolResult:
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total))

        return await pc.client.session.call_tool(name, args, progress_callback=on_progress)

    return pc.portal.call(run), seen


def session(pc: ProxyClient, method: str, *args, **kwargs):
    async def run():
        with warnings.catch_warnings():  # the SDK marks logging deprecated for the 2026 era
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            return await getattr(pc.client.session, method)(*args, **kwargs)

    return pc.portal.call(run)


def test_capabilities_are_what_is_served(pc):
    caps = pc.client.server_capabilities
    assert caps.tools.list_changed is True
    assert caps.resources is not None and caps.resources.subscribe is False
    assert caps.prompts is not None and caps.logging is not None
    assert caps.completions is None  # completion/complete is not passed through


def test_capabilities_match_over_http_and_in_the_2026_era(project):
    with ProxyClient(project, http=f"127.0.0.1:{free_port()}") as http:
        caps = http.client.server_capabilities
        assert caps.tools.list_changed is True and caps.resources.subscribe is False
        r, seen = call_with_progress(http, LONG, {"duration": 0.3, "steps": 3})
        assert not r.is_error and [p for p, _ in seen] == [1, 2, 3]
        assert_unknown_tool_is_a_protocol_error(http)
    with ProxyClient(project, mode="auto") as modern:
        assert modern.client.protocol_version == "2026-07-28"
        caps = modern.client.server_capabilities
        assert caps.tools.list_changed is True and caps.resources.subscribe is False
        assert_unknown_tool_is_a_protocol_error(modern)


def assert_unknown_tool_is_a_protocol_error(pc: ProxyClient) -> None:
    with pytest.raises(MCPError) as err:
        pc.call("no_such_tool", {})
    assert err.value.code == -32602


def test_progress_of_a_forwarded_call_reaches_the_client(pc):
    r, seen = call_with_progress(pc, LONG, {"duration": 0.3, "steps": 3})
    assert not r.is_error and "completed" in r.content[0].text
    assert seen == [(1, 3), (2, 3), (3, 3)]
    # without a progress token: no progress, same result (the fast lane)
    assert "completed" in pc.call(LONG, {"duration": 0.1, "steps": 2}).content[0].text


def test_logging_messages_of_a_downstream_reach_the_client(pc):
    session(pc, "set_logging_level", "debug")
    pc.call("every__toggle-simulated-logging", {})
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            logs = [m for m in pc.notifications
                    if isinstance(getattr(m, "root", m), types.LoggingMessageNotification)]
            if logs:
                break
            time.sleep(0.1)
        assert logs, "no notifications/message within 30 s"
        assert all(m.params.logger.startswith("every") for m in logs)
    finally:
        pc.call("every__toggle-simulated-logging", {})


def test_resources_pass_through_with_their_uris(pc, project):
    listed = session(pc, "list_resources").resources
    uris = {str(r.uri) for r in listed}
    notes = (project / "notes.txt").as_uri()
    assert notes in uris
    assert any(u.startswith("demo://resource/static/") for u in uris)
    templates = session(pc, "list_resource_templates").resource_templates
    assert {"file:///{+path}", "demo://resource/dynamic/text/{resourceId}"} <= \
        {t.uri_template for t in templates}
    demo = next(u for u in uris if u.startswith("demo://"))
    assert session(pc, "read_resource", demo).contents[0].uri == demo
    # a URI only a template of `every` matches goes to `every`
    dynamic = session(pc, "read_resource", "demo://resource/dynamic/text/1")
    assert "1" in dynamic.contents[0].text


def test_resource_reads_are_governed(pc, project):
    notes = (project / "notes.txt").as_uri()
    config = (project / "statewright.json").as_uri()
    # no run: nothing is enforced
    assert session(pc, "read_resource", config).contents[0].text.startswith("{")
    pc.call("statewright_pause")
    assert not pc.call("statewright_load_workflow", {"name": "res"}).is_error
    try:
        assert session(pc, "read_resource", notes).contents[0].text == "some notes\n"
        # self-protection: the store is out of reading reach, whoever serves it (this URI is
        # listed by no server: the template `file:///{+path}` of `files` matches it)
        store = (project / ".statewright" / "state.db").as_uri()
        with pytest.raises(MCPError) as err:
            session(pc, "read_resource", store)
        assert "TOOL_DENIED" in err.value.message and "statewright's store" in err.value.message
        counters = payload(pc.call("statewright_get_state"))["counters"]
        assert counters["iterations"] == 1  # the allowed read counted; the refusal did not
        # a state whose allowed_tools leave out the server's resources/read
        assert not pc.call("statewright_transition", {"event": "CLOSE"}).is_error
        with pytest.raises(MCPError) as err:
            session(pc, "read_resource", notes)
        assert "TOOL_DENIED" in err.value.message and "mcp__files__resources/read" in err.value.message
    finally:
        pc.call("statewright_transition", {"event": "END"})


def test_prompts_pass_through_with_server_names(pc):
    names = {p.name for p in session(pc, "list_prompts").prompts}
    assert {"every__simple-prompt", "every__args-prompt"} <= names
    got = session(pc, "get_prompt", "every__args-prompt", {"city": "Paris"})
    assert "Paris" in got.messages[0].content.text
    with pytest.raises(MCPError) as err:
        session(pc, "get_prompt", "simple-prompt")  # only the prefixed name exists
    assert err.value.code == -32602
