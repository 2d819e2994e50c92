"""`statewright serve` as a real process, the SDK `Client` as the agent, real downstream servers
(filesystem and everything from npm, mcp-server-git from PyPI).

One proxy process serves the whole module (processes take ~1.3 s to import mcp); each test starts
its own fresh run, so the tests do not depend on each other's state. They share one xdist worker.
"""

from __future__ import annotations

import os
import signal
import time

import pytest
from mcp import Client, MCPError, StdioServerParameters

from .harness import (
    EVERYTHING_JS,
    NODE,
    ProxyClient,
    cmdline,
    everything_server,
    fs_server,
    git_server,
    make_project,
    payload,
    statewright,
    text_of,
)
from .workflows import DEBUG, GOV

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("proxy_e2e")]

OWN = {"statewright_get_state", "statewright_list_workflows", "statewright_load_workflow",
       "statewright_transition", "statewright_pause", "statewright_resume", "statewright_fork"}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("proxy") / "proj"
    make_project(root, {"fs": fs_server(root), "every": everything_server(), "git": git_server(root)},
                 {"gov": GOV, "dbg": DEBUG}, git=True)
    (root / "notes.txt").write_text("one\ntwo\nthree\n")
    return root


@pytest.fixture(scope="module")
def pc(project):
    with ProxyClient(project) as client:
        client.list_tools()  # the first tools/list waits for every downstream to start
        yield client


def fresh(pc: ProxyClient, name: str | None = "gov") -> dict:
    """Pause whatever runs, then start `name` (a fresh run)."""
    pc.call("statewright_pause")
    if name is None:
        return {}
    before = pc.list_changed_count()
    r = pc.call("statewright_load_workflow", {"name": name})
    assert not r.is_error, text_of(r)
    pc.wait_list_changed(before)
    return payload(r)


def state(pc: ProxyClient) -> dict:
    r = pc.call("statewright_get_state")
    assert not r.is_error, text_of(r)
    return payload(r)


# -- listing ---------------------------------------------------------------------------------

def test_no_run_lists_everything_with_downstream_schemas_unchanged(pc, project):
    fresh(pc, None)
    tools = {t.name: t for t in pc.list_tools()}
    assert OWN <= set(tools)
    assert "statewright_force_state" not in tools  # no debug workflow running
    assert {"fs__read_text_file", "fs__write_file", "every__echo", "git__git_status"} <= set(tools)
    # every statewright tool teaches its use: description and a strict object schema
    for name in OWN:
        assert len(tools[name].description) > 80
        assert tools[name].input_schema["type"] == "object"
        assert tools[name].input_schema.get("additionalProperties") is False

    # compare with what server-everything itself declares
    from anyio.from_thread import start_blocking_portal
    with start_blocking_portal() as portal:
        direct = Client(StdioServerParameters(command=NODE, args=[str(EVERYTHING_JS), "stdio"]),
                        mode="legacy", cache=None)
        with portal.wrap_async_context_manager(direct) as c:
            theirs = {t.name: t for t in portal.call(c.list_tools).tools}
    for name, tool in theirs.items():
        mine = tools[f"every__{name}"]
        assert mine.input_schema == tool.input_schema
        assert mine.description == tool.description
        assert mine.output_schema == tool.output_schema


def test_get_state_without_run_is_an_error_that_reports_downstream(pc):
    fresh(pc, None)
    r = pc.call("statewright_get_state")
    assert r.is_error
    data = payload(r)
    assert data["error"]["code"] == "NO_ACTIVE_RUN"
    assert {n: s["status"] for n, s in data["downstream"].items()} == {
        "fs": "up", "every": "up", "git": "up"}


def test_list_workflows(pc):
    r = pc.call("statewright_list_workflows")
    assert not r.is_error
    names = {w.get("id") or w.get("name") for w in payload(r)["workflows"]}
    assert {"gov", "dbg"} <= names


# -- governance ------------------------------------------------------------------------------

def test_load_filters_the_list_and_notifies(pc):
    answer = fresh(pc, "gov")
    assert answer["state"] == "read_only" and answer["workflow"] == "gov"
    names = set(pc.tool_names())
    assert names == OWN | {"fs__read_text_file", "fs__list_directory", "every__echo"}


def test_denied_call_says_why_and_does_nothing(pc, project):
    fresh(pc, "gov")
    target = project / "should-not-exist.txt"
    r = pc.call("fs__write_file", {"path": str(target), "content": "x\n"})
    assert r.is_error
    text = text_of(r)
    assert "TOOL_DENIED" in text and "mcp__fs__write_file" in text
    assert "mcp__fs__read_text_file" in text  # what is allowed instead
    assert "NEXT" in text  # which events move on
    assert not target.exists()
    # denials are not iterations
    assert state(pc)["counters"]["iterations"] == 0


def test_allowed_call_is_forwarded_and_counted(pc, project):
    fresh(pc, "gov")
    r = pc.call("fs__read_text_file", {"path": str(project / "notes.txt")})
    assert not r.is_error and text_of(r) == "one\ntwo\nthree\n"
    r = pc.call("every__echo", {"message": "hi"})
    assert text_of(r).startswith("Echo: hi")
    c = state(pc)["counters"]
    assert c["iterations"] == 2 and c["bytes"] >= len("one\ntwo\nthree\n")


def test_max_iterations(pc):
    fresh(pc, "gov")
    for i in range(3):
        assert not pc.call("every__echo", {"message": str(i)}).is_error
    r = pc.call("every__echo", {"message": "again"})
    assert r.is_error and "NEXT" in text_of(r)
    # statewright tools still work
    assert not pc.call("statewright_get_state").is_error


def test_transition_changes_what_is_listed_and_allowed(pc, project):
    fresh(pc, "gov")
    before = pc.list_changed_count()
    r = pc.call("statewright_transition", {"event": "NEXT"})
    assert not r.is_error and payload(r)["state"] == "edit"
    pc.wait_list_changed(before)
    names = set(pc.tool_names())
    assert {"fs__write_file", "fs__edit_file", "git__git_status"} <= names
    assert "fs__move_file" not in names and "every__echo" not in names
    r = pc.call("every__echo", {"message": "no"})
    assert r.is_error and "every__echo" in text_of(r)
    r = pc.call("fs__move_file", {"source": str(project / "notes.txt"), "destination": str(project / "n2")})
    assert r.is_error and (project / "notes.txt").exists()
    r = pc.call("git__git_status", {"repo_path": str(project)})
    assert not r.is_error


def test_edit_budgets(pc, project):
    fresh(pc, "gov")
    pc.call("statewright_transition", {"event": "NEXT"})
    a, b, c = (project / "a.txt"), (project / "b.txt"), (project / "c.txt")
    r = pc.call("fs__write_file", {"path": str(a), "content": "1\n2\n3\n4\n5\n6\n"})
    assert r.is_error and "5" in text_of(r) and not a.exists()  # 6 lines > max_edit_lines 5
    assert not pc.call("fs__write_file", {"path": str(a), "content": "1\n2\n3\n"}).is_error
    # edit_file: the edit changes max(old, new) lines
    r = pc.call("fs__edit_file", {"path": str(a), "edits": [
        {"oldText": "1\n2\n3\n", "newText": "a\nb\nc\nd\ne\nf\n"}]})
    assert r.is_error and a.read_text() == "1\n2\n3\n"
    assert not pc.call("fs__edit_file", {"path": str(a), "edits": [{"oldText": "2", "newText": "two"}]}).is_error
    assert a.read_text() == "1\ntwo\n3\n"
    assert not pc.call("fs__write_file", {"path": str(b), "content": "b\n"}).is_error
    r = pc.call("fs__write_file", {"path": str(c), "content": "c\n"})  # third file
    assert r.is_error and not c.exists()
    assert not pc.call("fs__write_file", {"path": str(a), "content": "1\ntwo\n3\n4\n"}).is_error
    assert sorted(state(pc)["counters"]["files_edited"]) == ["a.txt", "b.txt"]


def test_interrupt_from_write_file_and_return(pc, project):
    fresh(pc, "gov")
    pc.call("statewright_transition", {"event": "NEXT"})
    (project / "secrets").mkdir(exist_ok=True)
    before = pc.list_changed_count()
    r = pc.call("fs__write_file", {"path": str(project / "secrets" / "key.txt"), "content": "k\n"})
    assert not r.is_error
    text = text_of(r)
    assert "[STATEWRIGHT INTERRUPT]" in text and "secrets/key.txt" in text
    assert r.content[-1].text.startswith("[STATEWRIGHT INTERRUPT]")
    pc.wait_list_changed(before)
    assert set(pc.tool_names()) == OWN | {"fs__read_text_file"}
    st = state(pc)
    assert st["state"] == "handler"
    before = pc.list_changed_count()
    r = pc.call("statewright_transition", {"event": "OK"})
    assert payload(r)["state"] == "edit"
    pc.wait_list_changed(before)


def test_context_budget(pc):
    fresh(pc, "gov")
    pc.call("statewright_transition", {"event": "NEXT"})
    pc.call("statewright_transition", {"event": "BUDGET"})
    denied = None
    for _ in range(20):
        r = pc.call("every__echo", {"message": "x" * 100})
        if r.is_error:
            denied = text_of(r)
            break
    assert denied is not None and "DONE" in denied, "the 300-byte budget never ran out"
    assert state(pc)["counters"]["bytes"] >= 300


def test_guard_rejected_answer_carries_the_state(pc):
    fresh(pc, "gov")
    r = pc.call("statewright_transition", {"event": "SHIP", "data": {"tests": "red"}})
    assert r.is_error
    data = payload(r)
    assert data["error"]["code"] == "GUARD_REJECTED"
    assert data["state"] == "read_only" and data["run_id"] and data["transitions"]
    r = pc.call("statewright_transition", {"event": "NOPE"})
    assert payload(r)["error"]["code"] == "INVALID_TRANSITION" and r.is_error


def test_force_state_only_listed_and_allowed_for_debug_workflows(pc):
    fresh(pc, "gov")
    assert "statewright_force_state" not in pc.tool_names()
    r = pc.call("statewright_force_state", {"state": "done"})
    assert r.is_error and payload(r)["error"]["code"] == "DEBUG_DISABLED"
    assert state(pc)["state"] == "read_only"
    fresh(pc, "dbg")
    names = set(pc.tool_names())
    assert "statewright_force_state" in names and "every__echo" not in names
    before = pc.list_changed_count()
    r = pc.call("statewright_force_state", {"state": "two", "context": {"why": "test"}})
    assert not r.is_error and payload(r)["state"] == "two"
    pc.wait_list_changed(before)
    assert "every__echo" in pc.tool_names()


def test_state_change_from_another_process_is_announced(pc, project):
    fresh(pc, "gov")
    before = pc.list_changed_count()
    statewright("transition", "NEXT", project=project)
    pc.wait_list_changed(before)
    assert "fs__write_file" in pc.tool_names()


# -- failures --------------------------------------------------------------------------------

def test_downstream_crash_and_recovery(pc, project):
    fresh(pc, None)
    victim = [p for p in pc.server_pids() if "server-everything" in cmdline(p)]
    assert len(victim) == 1
    os.kill(victim[0], signal.SIGKILL)
    deadline = time.monotonic() + 10
    r = pc.call("every__echo", {"message": "?"})
    while not r.is_error and time.monotonic() < deadline:  # until the proxy notices the death
        r = pc.call("every__echo", {"message": "?"})
    assert r.is_error and "DOWNSTREAM_ERROR" in text_of(r)
    # the other servers keep working
    r = pc.call("fs__read_text_file", {"path": str(project / "notes.txt")})
    assert not r.is_error
    # the next call restarts it
    r = pc.call("every__echo", {"message": "back"})
    assert not r.is_error and text_of(r).startswith("Echo: back")
    r = pc.call("statewright_get_state")
    assert payload(r)["downstream"]["every"]["restarts"] == 1


def test_malformed_requests_keep_the_proxy_serving(pc):
    fresh(pc, "gov")
    with pytest.raises(MCPError) as err:  # a protocol error (-32602), not a tool result
        pc.call("no_such__tool", {})
    assert err.value.code == -32602 and "unknown tool" in err.value.message
    # optional arguments given as null mean "not given" (the schemas list them as optional
    # properties of one type each)
    r = pc.call("statewright_transition", {"event": "NO_SUCH", "data": None,
                                           "expected_version": None})
    assert payload(r)["error"]["code"] == "INVALID_TRANSITION"
    r = pc.call("every__echo", {"message": 5})
    assert r.is_error and "INVALID_ARGUMENTS" in text_of(r) and "/message" in text_of(r)
    r = pc.call("statewright_transition", {"event": 3})
    assert r.is_error and payload(r)["error"]["code"] == "INVALID_ARGUMENTS"
    r = pc.call("statewright_transition", {"event": "NEXT", "bogus": 1})
    assert r.is_error and "bogus" in payload(r)["error"]["message"]
    r = pc.call("statewright_load_workflow", {})
    assert r.is_error and payload(r)["error"]["code"] == "INVALID_ARGUMENTS"
    r = pc.call("every__echo", {"message": "x" * (9 * 1024 * 1024)})
    assert r.is_error and "bytes" in text_of(r)
    r = pc.call("statewright_load_workflow", {"name": "no-such-workflow"})
    assert r.is_error and payload(r)["error"]["code"] in ("UNKNOWN_WORKFLOW", "INVALID_ARGUMENTS")
    # none of that counted, and the proxy still serves
    assert state(pc)["counters"]["iterations"] == 0
    assert text_of(pc.call("every__echo", {"message": "still here"})).startswith("Echo: still here")
