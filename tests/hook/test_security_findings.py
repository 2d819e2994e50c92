"""Red-team findings, each checked through the real processes: the installed `statewright-hook`
fed Claude Code hook JSON, the `statewright` CLI, and `statewright serve` driven by the MCP SDK's
own Client.

1. The hook leaves to the proxy only the calls the proxy really gates: the six statewright tools
   under the proxy's names, and tools it forwards from a server of `statewright.json`. Any other
   tool named `mcp__statewright__*` (a user-scope `statewright` server, another plugin) is
   decided like every other tool.
2. A decision that cannot be written still blocks: ASCII-only JSON, a fixed deny as fallback,
   exit status 2 when even that cannot be written.
3. The agent cannot pause a workflow that does not opt in (pausing lifts every rule).
4. `statewright_get_state` after the run completed answers that run (completed, final).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import bin_path
from proxy.harness import ProxyClient, everything_server, make_project, payload, text_of

from .harness import SESSION, Project, allowed, denied

pytestmark = pytest.mark.e2e

LOCKED = {
    "id": "locked",
    "initial": "work",
    "states": {
        "work": {"allowed_tools": ["Read"], "max_iterations": 50, "on": {"DONE": "end"}},
        "end": {"type": "final"},
    },
}


@pytest.fixture
def locked(tmp_path: Path) -> Project:
    """A run whose state allows only Read, in a project whose proxy forwards server `github`."""
    p = Project(tmp_path / "proj")
    (p.root / "statewright.json").write_text(json.dumps(
        {"mcpServers": {"github": {"command": "true"}, "my-tools": {"command": "true"}}}))
    p.write_workflow(LOCKED)
    p.start("locked")
    return p


def _counters(p: Project) -> tuple[int, int]:
    h = p.history()
    return (sum(1 for e in h if e["kind"] == "tool_allowed"),
            sum(1 for e in h if e["kind"] == "tool_denied"))


# -- 1. the hand-off to the proxy ----------------------------------------------------------------

HANDED_OFF = [
    "mcp__statewright__statewright_get_state",
    "mcp__statewright__statewright_transition",
    "mcp__statewright__statewright_pause",
    "mcp__plugin_statewright_statewright__statewright_load_workflow",
    "mcp__plugin_statewright_statewright__statewright_force_state",
    "mcp__statewright__statewright_list_workflows",
    "mcp__statewright__github__create_issue",  # forwarded from a configured server
    "mcp__statewright__my-tools__run",
    "mcp__plugin_statewright_statewright__github__delete_repo",
]

NOT_OURS = [
    "mcp__statewright__drop_tables",  # not a statewright tool, not a forwarded one
    "mcp__statewright__evil__drop_tables",  # `evil` is not in statewright.json
    "mcp__statewright__githubx__create_issue",  # a prefix of a configured name is not the name
    "mcp__statewright__github",  # no tool part
    "mcp__statewright__github__",
    "mcp__statewright__statewright_exec",  # looks like ours, is not one of the six
    "mcp__statewright__Statewright_get_state",
    "mcp__plugin_statewright_statewright__shell",
    "mcp__plugin_statewright_statewright__evil__x",
    "mcp__Statewright__statewright_get_state",
]


def test_only_the_proxys_real_tools_are_left_to_it(locked: Project) -> None:
    before = _counters(locked)
    for name in HANDED_OFF:
        allowed(locked.pre(name, {"x": 1}))
        assert locked.post(name, {"x": 1}, {"content": [{"type": "text", "text": "y" * 500}]}) is None
    assert _counters(locked) == before  # the proxy accounts these: nothing counted here
    assert locked.status()["counters"]["bytes"] == 0
    for name in NOT_OURS:
        why = denied(locked.pre(name, {"x": 1}))
        assert "allowed_tools" in why and "Read" in why, why
    assert _counters(locked) == (before[0], before[1] + len(NOT_OURS))  # decided and counted
    # their results are accounted like any other tool's
    locked.post("mcp__statewright__evil__drop_tables", {}, "z" * 300)
    assert locked.status()["counters"]["bytes"] >= 300


def test_a_forged_own_tool_name_is_governed_like_any_other_tool(tmp_path: Path) -> None:
    """`mcp__statewright__statewright__statewright_transition` must not normalise to one of our
    own (exempt) names; our proxy never offers it (`statewright` is a reserved server name), so
    it is some other server's tool and `allowed_tools` decides it."""
    p = Project(tmp_path / "proj")
    p.write_workflow(LOCKED)
    forged = "mcp__statewright__statewright__statewright_transition"
    assert p.pre(forged, {}) is None  # no run: nothing enforced
    p.start("locked")
    assert "allowed_tools" in denied(p.pre(forged, {}))
    assert "allowed_tools" in denied(
        p.pre("mcp__plugin_statewright_statewright__statewright__statewright_pause", {}))
    p.transition("DONE")
    assert p.pre(forged, {}) is None


def test_without_a_config_only_the_six_tools_are_handed_off(tmp_path: Path) -> None:
    p = Project(tmp_path / "proj")
    p.write_workflow(LOCKED)
    p.start("locked")
    allowed(p.pre("mcp__statewright__statewright_get_state", {}))
    denied(p.pre("mcp__statewright__github__create_issue", {}))


def test_a_broken_config_fails_closed_for_forwarded_names(locked: Project) -> None:
    (locked.root / "statewright.json").write_text("{not json")
    denied(locked.pre("mcp__statewright__github__create_issue", {}))


def test_every_tool_the_real_proxy_offers_is_handed_off(tmp_path: Path) -> None:
    """The hook's idea of 'a tool our proxy gates' matches what `statewright serve` lists."""
    root = make_project(tmp_path / "proj", {"every": everything_server()}, {"locked": LOCKED})
    p = Project(root)
    with ProxyClient(root) as pc:
        names = [t.name for t in pc.list_tools()]  # no run yet: everything is listed
    p.start("locked")
    assert "statewright_get_state" in names and any(n.startswith("every__") for n in names)
    before = _counters(p)
    for n in names:
        for prefix in ("mcp__statewright__", "mcp__plugin_statewright_statewright__"):
            allowed(p.pre(prefix + n, {}))
    assert _counters(p) == before


# -- 2. a decision that cannot be written still blocks -------------------------------------------

def test_a_refusal_with_odd_characters_is_ascii_and_printable_anywhere(locked: Project) -> None:
    odd = "Wr\u00efte\U0001F642\u202e\u0000x"
    stdin = json.dumps(locked.payload("PreToolUse", tool_name=odd, tool_input={"a": "\udc80"}),
                       ensure_ascii=True).encode()
    for encoding in ("ascii", "utf-8", "latin-1"):
        env = {**locked.env, "PYTHONIOENCODING": encoding}
        rc, out, _err = locked.run_hook(["pre-tool-use"], stdin, env)
        assert rc == 0
        assert out.isascii()
        assert odd in denied(json.loads(out))


def _shell_hook(p: Project, redirect: str, event: str, stdin: bytes) -> subprocess.CompletedProcess:
    """The installed hook with its stdout redirected by a real shell (`>&-`: closed)."""
    return subprocess.run(["/bin/sh", "-c", f'exec "$0" {event} {redirect}', bin_path("statewright-hook")],
                          input=stdin, capture_output=True, env=p.env, timeout=120)


@pytest.mark.parametrize("redirect", [">&-", ">/dev/full"])
def test_a_refusal_that_cannot_be_written_exits_2(locked: Project, redirect: str) -> None:
    if redirect == ">/dev/full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    stdin = json.dumps(locked.payload("PreToolUse", tool_name="Edit", tool_input={})).encode()
    r = _shell_hook(locked, redirect, "pre-tool-use", stdin)
    assert r.returncode == 2, r.stderr
    err = r.stderr.decode()
    assert "could not write its decision" in err and "Traceback" not in err
    # garbage input is a refusal too: the same path
    r = _shell_hook(locked, redirect, "pre-tool-use", b"not json")
    assert r.returncode == 2
    r = _shell_hook(locked, redirect, "bogus-event", stdin)
    assert r.returncode == 2


def test_an_undeliverable_answer_that_allows_or_informs_does_not_block(locked: Project) -> None:
    # allowed: nothing to write, exit 0
    stdin = json.dumps(locked.payload("PreToolUse", tool_name="Read", tool_input={"file_path": "a"})).encode()
    assert _shell_hook(locked, ">&-", "pre-tool-use", stdin).returncode == 0
    # a briefing that cannot be delivered never blocks the session
    stdin = json.dumps(locked.payload("SessionStart", source="startup")).encode()
    r = _shell_hook(locked, ">&-", "session-start", stdin)
    assert r.returncode == 0 and b"Traceback" not in r.stderr


def test_the_fixed_deny_is_written_when_the_decision_does_not_encode() -> None:
    """Defence in depth: an answer that is not ASCII (a bug) is replaced by the fixed deny."""
    import statewright.hook as hook

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", write_through=True)
    saved = sys.stdout
    sys.stdout = stream
    try:
        rc = hook.emit('{"x": "\u00e9"}', True)
        rc_quiet = hook.emit('{"x": "\u00e9"}', False)
    finally:
        sys.stdout = saved
    assert rc == 0 and rc_quiet == 0
    out = raw.getvalue().decode("ascii")
    assert out == hook.FALLBACK_DENY + "\n"
    denied(json.loads(out))


# -- 3. the agent cannot pause its way out ---------------------------------------------------------

def test_agent_pause_is_refused_through_the_proxy_and_the_hook_keeps_enforcing(tmp_path: Path) -> None:
    optin = {**LOCKED, "id": "optin", "meta": {"allow_agent_pause": True}}
    root = make_project(tmp_path / "proj", {}, {"locked": LOCKED, "optin": optin})
    p = Project(root)
    edit = {"file_path": p.path("a.py"), "old_string": "a", "new_string": "b"}
    with ProxyClient(root, session=SESSION) as pc:
        tool = next(t for t in pc.list_tools() if t.name == "statewright_pause")
        assert "allow_agent_pause" in tool.description and "statewright pause" in tool.description
        assert not pc.call("statewright_load_workflow", {"name": "locked"}).is_error
        r = pc.call("statewright_pause")
        assert r.is_error, text_of(r)
        data = payload(r)
        assert data["error"]["code"] == "TOOL_DENIED"
        assert "only a human can pause" in data["error"]["message"]
        assert data["status"] == "running" and data["state"] == "work"
        denied(p.pre("Edit", edit))  # still enforced
        # the human can
        assert p.status(SESSION)["status"] == "running"
        p.cli("pause", "--session", SESSION)
        allowed(p.pre("Edit", edit))
        p.cli("force-state", "end", "--session", SESSION)
        # a workflow that opts in lets the agent pause
        assert not pc.call("statewright_load_workflow", {"name": "optin"}).is_error
        denied(p.pre("Edit", edit))
        r = pc.call("statewright_pause")
        assert not r.is_error and payload(r)["status"] == "paused"
        allowed(p.pre("Edit", edit))
    hist = json.loads(p.cli("history", "--json", "--session", SESSION).stdout)
    kinds = [(e["kind"], e["actor"]) for e in hist]
    assert ("paused", "agent") in kinds


# -- 4. get_state after completion -----------------------------------------------------------------

def test_completed_run_is_visible_and_enforces_nothing(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", {}, {"locked": LOCKED})
    p = Project(root)
    edit = {"file_path": p.path("a.py"), "old_string": "a", "new_string": "b"}
    with ProxyClient(root, session=SESSION) as pc:
        r = pc.call("statewright_get_state")
        assert r.is_error and payload(r)["error"]["code"] == "NO_ACTIVE_RUN"  # never a run
        first = payload(pc.call("statewright_load_workflow", {"name": "locked"}))
        denied(p.pre("Edit", edit))
        done = payload(pc.call("statewright_transition", {"event": "DONE"}))
        assert done["status"] == "completed"
        r = pc.call("statewright_get_state")
        assert not r.is_error, text_of(r)
        got = payload(r)
        assert got["run_id"] == first["run_id"] and got["state"] == "end"
        assert got["status"] == "completed" and got["is_final"] is True and got["transitions"] == []
        allowed(p.pre("Edit", edit))  # nothing enforced after completion
        assert p.hook("session-start", p.payload("SessionStart", source="resume")) is None
        assert p.hook("stop", p.payload("Stop", stop_hook_active=False)) is None
        # the CLI shows it
        st = p.cli("status", "--session", SESSION).stdout
        assert "completed" in st and "nothing is enforced" in " ".join(st.split())
        assert "Traceback" not in st
        # a new run can start after completion, and governs again
        again = pc.call("statewright_load_workflow", {"name": "locked"})
        assert not again.is_error, text_of(again)
        assert payload(again)["run_id"] != first["run_id"]
        assert payload(pc.call("statewright_get_state"))["status"] == "running"
        denied(p.pre("Edit", edit))
