"""Live across machines on a shared store (LISTEN/NOTIFY): two checkouts of one project on one
PostgreSQL store, each with real statewright processes. What one machine commits (a
transition, an approval asked for or decided, a new run) reaches the other machine's proxy
(`notifications/tools/list_changed`, and the state it decides with) and its web page (the long
poll answers) by the store's notices alone: the processes here are told never to poll
(`STATEWRIGHT_POLL_INTERVAL`, `STATEWRIGHT_QUIET_READ`), so only a notice can wake them. A
listening connection that is killed comes back, and whatever was committed meanwhile is read.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import psycopg
import pytest
from conftest import clean_env

from statewright.store.pg_listen import CHANNEL, LISTEN_APPLICATION, ChangeFeed
from tests.proxy.harness import ProxyClient, payload
from tests.store.test_team import _project, sw
from tests.ui.harness import UiProcess

pytestmark = pytest.mark.e2e

NEVER = "3600"  # seconds: no poll, no quiet read happens during a test
NO_POLLING = {"STATEWRIGHT_POLL_INTERVAL": NEVER, "STATEWRIGHT_QUIET_READ": NEVER}


def _machines(tmp_path: Path, pg_url: str) -> tuple[Path, Path]:
    laptop, ci = _project(tmp_path / "laptop"), _project(tmp_path / "ci")
    for root in (laptop, ci):
        (root / "statewright.json").write_text(json.dumps({"store": pg_url, "project": "shop"}))
    return laptop, ci


def _proxy(root: Path, session: str, pg_url: str) -> ProxyClient:
    return ProxyClient(root, session=session,
                       env=clean_env(STATEWRIGHT_SESSION=session, STATEWRIGHT_MACHINE="ci",
                                     **NO_POLLING))


def _listeners(pg_url: str) -> list[int]:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        return [r[0] for r in conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s",
            (LISTEN_APPLICATION,))]


def _kill_listeners(pg_url: str) -> list[int]:
    pids = _listeners(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for pid in pids:
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    return pids


def test_the_proxy_on_one_machine_follows_what_the_other_commits(tmp_path, pg_url):
    laptop, ci = _machines(tmp_path, pg_url)
    with _proxy(ci, "ci-agent", pg_url) as pc:
        before = pc.tool_names()
        assert "statewright_load_workflow" in before
        # a new run for this session, started on the laptop: the proxy in CI announces it
        n = pc.list_changed_count()
        sw(laptop, "start", "gate", "--session", "ci-agent", STATEWRIGHT_MACHINE="laptop")
        n = pc.wait_list_changed(n, timeout=60)
        state = payload(pc.call("statewright_get_state"))
        assert state["workflow"] == "gate" and state["state"] == "build"
        # a transition made on the laptop: announced, and the state the proxy decides with
        sw(laptop, "transition", "TICK", "--session", "ci-agent", STATEWRIGHT_MACHINE="laptop")
        n = pc.wait_list_changed(n, timeout=60)
        assert payload(pc.call("statewright_get_state"))["version"] == state["version"] + 1
        # the agent asks in CI, the lead approves on the laptop: the agent is released
        r = pc.call("statewright_transition", {"event": "SHIP"})
        parked = payload(r)
        approval = parked["pending_approval"]["approval_id"]
        n = pc.wait_list_changed(n, timeout=60)  # (its own change comes back as a notice too)
        lead = sw(laptop, "token", "create", "--role", "admin", "--name", "lead").stdout.strip()
        sw(laptop, "approve", approval, STATEWRIGHT_TOKEN=lead, STATEWRIGHT_MACHINE="laptop")
        pc.wait_list_changed(n, timeout=60)
        after = payload(pc.call("statewright_get_state"))
        assert after["state"] == "shipped" and after["pending_approval"] is None


def test_one_machines_page_follows_the_other_and_its_approval_releases_the_agent(
        tmp_path, pg_url):
    laptop, ci = _machines(tmp_path, pg_url)
    lead = sw(laptop, "token", "create", "--role", "admin", "--name", "lead").stdout.strip()
    sw(ci, "start", "gate", "--session", "ci-agent", STATEWRIGHT_MACHINE="ci")
    ui = UiProcess(laptop, "--token", lead, env=NO_POLLING)
    try:
        status, key = ui.sign_in()
        assert status == 200 and key
        headers = {"Origin": ui.base, "X-Statewright-Key": key}

        def wait(since: int) -> int:
            status, _h, body = ui.request("GET", f"/api/wait?since={since}", headers=headers)
            assert status == 200, body
            return int(json.loads(body)["mark"])

        mark = wait(-1)  # (the mark now, at once)
        with ProxyClient(ci, session="ci-agent",
                         env=clean_env(STATEWRIGHT_SESSION="ci-agent", **NO_POLLING)) as pc:
            # the page's long poll waits; the agent in CI asks for an approval meanwhile: the
            # page's poll answers with a new mark (a notice: it never reads otherwise)
            got: list[int] = []
            waiter = threading.Thread(target=lambda: got.append(wait(mark)))
            waiter.start()
            pc.call("statewright_transition", {"event": "TICK"})
            parked = payload(pc.call("statewright_transition", {"event": "SHIP"}))
            approval = parked["pending_approval"]["approval_id"]
            waiter.join(60)
            assert got and got[0] != mark
            status, _h, page = ui.request("GET", "/api/runs", headers=headers)
            assert status == 200
            assert "Waiting for you" in page.decode() and parked["run_id"] in page.decode()
            # the lead approves on the laptop's page: the agent's proxy in CI is told
            n = pc.list_changed_count()
            status, _h, body = ui.request("POST", f"/api/approvals/{approval}/approve", {},
                                          {**headers, "Content-Type": "application/json"})
            assert status == 200, body
            pc.wait_list_changed(n, timeout=60)
            after = payload(pc.call("statewright_get_state"))
            assert after["state"] == "shipped" and after["pending_approval"] is None
    finally:
        ui.stop()
    hist = json.loads(sw(ci, "history", "--session", "ci-agent", "--json").stdout)
    assert next(h for h in hist if h["kind"] == "approved")["data"]["approver"] == "lead"


def test_a_dropped_listening_connection_comes_back_and_misses_nothing(tmp_path, pg_url):
    laptop, ci = _machines(tmp_path, pg_url)
    sw(ci, "start", "gate", "--session", "ci-agent")
    with _proxy(ci, "ci-agent", pg_url) as pc:
        first = payload(pc.call("statewright_get_state"))["version"]
        for version in (first + 1, first + 2):
            old = _kill_listeners(pg_url)
            assert old  # the proxy listens
            # committed at once, whether the proxy listens again yet or not
            n = pc.list_changed_count()
            sw(laptop, "transition", "TICK", "--session", "ci-agent")
            pc.wait_list_changed(n, timeout=60)
            assert payload(pc.call("statewright_get_state"))["version"] == version
            now = _listeners(pg_url)
            assert now and not set(now) & set(old)  # a new listening connection


def test_a_proxy_that_never_polls_fires_a_timeout_it_heard_of_at_its_deadline(tmp_path, pg_url):
    """The proxy reads the store for timeouts after a notice and once the earliest deadline it
    saw has come, and not in between: a run started on the other machine, in a state that
    times out, is moved on by the proxy in CI although it never polls."""
    laptop, ci = _machines(tmp_path, pg_url)
    slow = {"id": "slow", "initial": "waiting",
            "states": {"waiting": {"timeout_s": 2, "on_timeout": "EXPIRE",
                                   "on": {"EXPIRE": "expired"}},
                       "expired": {"type": "final"}}}
    for root in (laptop, ci):
        (root / "workflows" / "slow.json").write_text(json.dumps(slow))
    with _proxy(ci, "ci-agent", pg_url) as pc:
        assert "statewright_load_workflow" in pc.tool_names()
        n = pc.list_changed_count()
        sw(laptop, "start", "slow", "--session", "ci-agent", STATEWRIGHT_MACHINE="laptop")
        pc.wait_list_changed(n, timeout=60)  # (heard of: its deadline is known)
        deadline = time.monotonic() + 60
        while (state := payload(pc.call("statewright_get_state")))["state"] == "waiting" \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        assert state["workflow"] == "slow" and state["state"] == "expired", state


def test_the_feed_counts_committed_notices_and_reconnects(pg_url):
    feed = ChangeFeed(pg_url).start()
    try:
        seen = feed.wait(0, 30)
        assert seen >= 1 and feed.connections == 1  # (connecting counts: read again)
        with psycopg.connect(pg_url, autocommit=True) as conn:
            # a notice in a transaction rolled back is never delivered; a committed one is
            conn.execute("BEGIN")
            conn.execute(f"NOTIFY {CHANNEL}, 'rolled back'")
            conn.execute("ROLLBACK")
            conn.execute(f"NOTIFY {CHANNEL}, 'shop\trun-1'")
        now = feed.wait(seen, 30)
        assert now == seen + 1
        _kill_listeners(pg_url)
        later = feed.wait(now, 30)
        assert later > now
        while feed.connections < 2:
            later = feed.wait(later, 30)
        assert _listeners(pg_url)
    finally:
        feed.stop()
    assert not feed._thread.is_alive() and feed._conn is None  # (its connection closed)


class _McpOverHttp:
    """A JSON-RPC client of `serve --http` that carries one bearer token (raw HTTP: the
    token's header is exactly what a team member's client sends)."""

    def __init__(self, port: int, token: str) -> None:
        import http.client

        self.port, self.token, self.sid, self.n = port, token, None, 0
        self.http = http.client

    def _post(self, body: dict) -> dict | None:
        conn = self.http.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self.token}",
                   "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": "2025-06-18"}
        if self.sid:
            headers["Mcp-Session-Id"] = self.sid
        conn.request("POST", "/mcp", json.dumps(body), headers)
        resp = conn.getresponse()
        text = resp.read().decode()
        self.sid = resp.getheader("mcp-session-id") or self.sid
        conn.close()
        assert resp.status in (200, 202), (resp.status, text)
        for line in text.splitlines():  # (an SSE stream or a JSON body)
            line = line.removeprefix("data:").strip()
            if line.startswith("{") and '"id"' in line:
                return json.loads(line)
        return json.loads(text) if text.strip().startswith("{") else None

    def start(self) -> _McpOverHttp:
        self._post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "teammate", "version": "1"}}})
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    def call(self, name: str, arguments: dict | None = None) -> dict:
        self.n += 1
        out = self._post({"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                          "params": {"name": name, "arguments": arguments or {}}})
        assert out is not None and "result" in out, out
        return json.loads(out["result"]["content"][0]["text"])


class _Listening:
    """The standalone event stream of a `_McpOverHttp` session (GET /mcp with its token):
    what the server sends unasked, read in a thread."""

    def __init__(self, client: _McpOverHttp) -> None:
        import http.client

        self.lines: list[str] = []
        self.conn = http.client.HTTPConnection("127.0.0.1", client.port, timeout=120)
        self.conn.request("GET", "/mcp", headers={
            "Accept": "text/event-stream", "Authorization": f"Bearer {client.token}",
            "Mcp-Session-Id": client.sid or "", "MCP-Protocol-Version": "2025-06-18"})
        self.resp = self.conn.getresponse()
        assert self.resp.status == 200, self.resp.status
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while line := self.resp.fp.readline():
                self.lines.append(line.decode())
        except (OSError, ValueError):
            pass

    def count(self, method: str) -> int:
        return sum(method in ln for ln in self.lines)

    def wait(self, method: str, more_than: int, timeout: float = 60) -> int:
        deadline = time.monotonic() + timeout
        while (n := self.count(method)) <= more_than and time.monotonic() < deadline:
            time.sleep(0.05)
        assert n > more_than, f"no {method} within {timeout}s: {self.lines[-5:]}"
        return n


def test_each_caller_of_a_shared_proxy_hears_its_own_run_move(tmp_path, pg_url):
    """A run moved elsewhere (here: the CLI on another checkout) is announced to the callers of
    a shared proxy whose run it is, not only for the proxy's own session."""
    from tests.proxy.harness import ServeHttp

    laptop, ci = _machines(tmp_path, pg_url)
    admin = sw(ci, "token", "create", "--role", "admin", "--name", "lead").stdout.strip()
    agent = sw(ci, "token", "create", "--role", "agent", "--name", "agent:ci",
               STATEWRIGHT_TOKEN=admin).stdout.strip()
    other = sw(ci, "token", "create", "--role", "agent", "--name", "agent:other",
               STATEWRIGHT_TOKEN=admin).stdout.strip()
    with ServeHttp(ci, session="served-default") as srv:
        client = _McpOverHttp(srv.port, agent).start()
        assert client.call("statewright_load_workflow", {"name": "gate"})["state"] == "build"
        stream = _Listening(client)
        seen = stream.count("tools/list_changed")
        # another caller's reads move nothing: no notice (each caller's list is its own)
        them = _McpOverHttp(srv.port, other).start()
        for _ in range(3):
            assert them.call("statewright_get_state")["error"]["code"] == "NO_ACTIVE_RUN"
            assert client.call("statewright_get_state")["state"] == "build"
        time.sleep(1)
        assert stream.count("tools/list_changed") == seen, stream.lines[-4:]
        sw(laptop, "transition", "TICK", "--session", "agent:ci", STATEWRIGHT_TOKEN=admin,
           STATEWRIGHT_MACHINE="laptop")
        seen = stream.wait("tools/list_changed", seen)
        sw(laptop, "end", "--session", "agent:ci", STATEWRIGHT_TOKEN=admin)
        stream.wait("tools/list_changed", seen)
        assert client.call("statewright_get_state")["status"] == "ended"


def test_a_shared_proxy_acts_as_each_tokens_subject(tmp_path, pg_url):
    from tests.proxy.harness import ServeHttp

    root = _project(tmp_path)
    (root / "statewright.json").write_text(json.dumps({"store": pg_url, "project": "shop"}))
    admin = sw(root, "token", "create", "--role", "admin", "--name", "lead").stdout.strip()

    def token(role: str, name: str) -> str:
        return sw(root, "token", "create", "--role", role, "--name", name,
                  STATEWRIGHT_TOKEN=admin).stdout.strip()

    ci, alice, bob = token("agent", "agent:ci"), token("approver", "alice"), token(
        "approver", "bob")
    with ServeHttp(root, session="served-default") as srv:
        agent = _McpOverHttp(srv.port, ci).start()
        started = agent.call("statewright_load_workflow", {"name": "gate"})
        assert started["state"] == "build"
        # alice drives a run of her own through the same proxy: separate sessions
        mine = _McpOverHttp(srv.port, alice).start()
        assert mine.call("statewright_get_state")["error"]["code"] == "NO_ACTIVE_RUN"
        mine.call("statewright_load_workflow", {"name": "gate"})
        parked = mine.call("statewright_transition", {"event": "SHIP"})
        approval = parked["pending_approval"]["approval_id"]
        assert agent.call("statewright_get_state")["run_id"] == started["run_id"]
    runs = {r["session"]: r for r in json.loads(sw(root, "runs", "--json").stdout)}
    assert set(runs) == {"agent:ci", "alice"}  # (never the proxy's own session)
    # alice asked through the proxy: alice may not decide it; bob may
    r = sw(root, "approve", approval, check=False, STATEWRIGHT_TOKEN=alice)
    assert r.returncode != 0 and "cannot decide" in r.stderr, r.stderr
    sw(root, "approve", approval, STATEWRIGHT_TOKEN=bob)
    hist = json.loads(sw(root, "history", "--session", "alice", "--json").stdout)
    assert next(h for h in hist if h["kind"] == "approved")["data"]["approver"] == "bob"
    assert {h["kind"] for h in hist} >= {"started", "approval_requested", "approved"}
