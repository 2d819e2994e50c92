"""People and the audit trail, on both stores, through the real CLI: tokens name who approves
(never the agent that asked), and `audit verify` catches every kind of tampering with an
export, offline."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import bin_path

from statewright.store.chain import GENESIS, row_hash

pytestmark = pytest.mark.e2e

GATE = {"id": "gate", "initial": "build", "meta": {"approval_mode": "ui"},
        "states": {"build": {"on": {"TICK": "build",
                                    "SHIP": {"target": "shipped", "requires_approval": True,
                                             "approval_message": "ship it?"}}},
                   "shipped": {"type": "final"}}}


def _project(tmp_path: Path, name: str = "proj") -> Path:
    root = tmp_path / name
    (root / "workflows").mkdir(parents=True)
    (root / "workflows" / "gate.json").write_text(json.dumps(GATE))
    return root


def sw(root: Path, *args: str, check: bool = True, **env: str) -> subprocess.CompletedProcess:
    """The real `statewright` CLI in project `root` (the test's store: `$STATEWRIGHT_STORE`
    when `store_kind` set it)."""
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("STATEWRIGHT_", "CLAUDE_")) or k == "STATEWRIGHT_STORE"}
    e.update(env)
    r = subprocess.run([bin_path("statewright"), *args, "--project", str(root)],
                       capture_output=True, text=True, env=e, timeout=120)
    assert "Traceback" not in r.stderr, r.stderr
    if check:
        assert r.returncode == 0, r.stderr
    return r


def _parked(root: Path, session: str = "agent-1") -> str:
    sw(root, "start", "gate", "--session", session)
    sw(root, "transition", "TICK", "--session", session)
    st = json.loads(sw(root, "transition", "SHIP", "--session", session, "--json").stdout)
    return st["pending_approval"]["approval_id"]


def test_tokens_name_the_approver_and_an_agent_never_decides(tmp_path, store_kind):
    root = _project(tmp_path)
    approval = _parked(root)
    if store_kind == "postgresql":  # a shared store: deciding needs a token
        r = sw(root, "approve", approval, check=False)
        assert r.returncode == 1 and r.stderr.startswith("error[TOOL_DENIED]")
        assert "approver's token" in r.stderr
    admin = sw(root, "token", "create", "--role", "admin", "--name", "alice").stdout.strip()
    assert admin.startswith("swt_") and len(admin) == 4 + 64
    # the store has an admin now: more tokens need one
    r = sw(root, "token", "create", "--role", "approver", "--name", "mallory", check=False)
    assert r.returncode == 1 and "needs an admin's token" in r.stderr
    bob = sw(root, "token", "create", "--role", "approver", "--name", "bob",
             "--token", admin).stdout.strip()
    bot = sw(root, "token", "create", "--role", "agent", "--name", "agent:ci-bot",
             STATEWRIGHT_TOKEN=admin).stdout.strip()
    r = sw(root, "token", "create", "--role", "approver", "--name", "agent:bob",
           "--token", admin, check=False)
    assert r.returncode == 2 or "may not start with 'agent:'" in r.stderr
    listed = json.loads(sw(root, "token", "list", "--json").stdout)
    assert {(t["subject"], t["role"]) for t in listed} == {
        ("alice", "admin"), ("bob", "approver"), ("agent:ci-bot", "agent")}
    assert not any(tok[4:] in json.dumps(listed) for tok in (admin, bob, bot))  # hashes only
    # an agent's token decides nothing; an unknown one neither
    for tok, why in ((bot, "only an approver or an admin"), ("swt_" + "0" * 64, "unknown")):
        r = sw(root, "approve", approval, "--token", tok, check=False)
        assert r.returncode == 1 and why in r.stderr, r.stderr
    # a revoked token decides nothing
    bob_id = next(t["id"] for t in listed if t["subject"] == "bob")
    carol = sw(root, "token", "create", "--role", "approver", "--name", "carol",
               "--token", admin).stdout.strip()
    carol_id = next(t["id"] for t in json.loads(sw(root, "token", "list", "--json").stdout)
                    if t["subject"] == "carol")
    sw(root, "token", "revoke", carol_id, "--token", admin)
    r = sw(root, "approve", approval, "--token", carol, check=False)
    assert r.returncode == 1 and "revoked" in r.stderr
    state = json.loads(sw(root, "approve", approval, "--json", STATEWRIGHT_TOKEN=bob).stdout)
    assert state["state"] == "shipped"
    hist = json.loads(sw(root, "history", "--session", "agent-1", "--json").stdout)
    approved = next(h for h in hist if h["kind"] == "approved")
    assert approved["actor"] == "human" and approved["data"]["approver"] == "bob"
    assert bob_id  # (bob's token stays live)
    # the approval's own record names who asked and who decided
    from statewright.runtime import Runtime

    with Runtime.open(root).store.read() as tx:
        record = tx.approval(approval)
    assert record["requested_by"] == "agent:agent-1" and record["decided_by"] == "bob"


def _export(root: Path) -> list[dict]:
    out = sw(root, "audit", "export").stdout
    return [json.loads(line) for line in out.splitlines()]


def _verify(root: Path, rows: list[dict], tmp_path: Path, *extra: str
            ) -> subprocess.CompletedProcess:
    f = tmp_path / "bundle.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return sw(root, "audit", "verify", str(f), "--json", *extra, check=False)


def _rechain(rows: list[dict]) -> list[dict]:
    """What a careful forger does: every hash, link and head recomputed after the change."""
    heads: dict[str, tuple[int, str]] = {}
    out = []
    for r in rows:
        if r["type"] == "event":
            n, prev = heads.get(r["run_id"], (0, GENESIS))
            r = {**r, "prev_hash": prev}
            r["hash"] = row_hash(prev, r)
            heads[r["run_id"]] = (n + 1, r["hash"])
        elif r["type"] == "head":
            n, h = heads[r["run_id"]]
            r = {**r, "count": n, "hash": h}
        out.append(r)
    return out


def test_audit_verify_catches_each_kind_of_tampering(tmp_path, store_kind):
    root = _project(tmp_path)
    approval = _parked(root)
    sw(root, "reject", approval, "--reason", "not yet",
       STATEWRIGHT_TOKEN=sw(root, "token", "create", "--role", "approver", "--name",
                            "dana").stdout.strip())
    sw(root, "transition", "TICK", "--session", "agent-1")
    rows = _export(root)
    assert rows[0]["type"] == "header" and rows[0]["format"] == "statewright-audit/1"
    events = [i for i, r in enumerate(rows) if r["type"] == "event"]
    assert len(events) >= 5 and rows[-1]["type"] == "head"
    ok = _verify(root, rows, tmp_path, "--against-store")
    assert ok.returncode == 0, ok.stdout
    assert json.loads(ok.stdout) == {"ok": True, "runs": 1, "rows": len(events), "problems": []}

    def tampered(mutate) -> list[str]:
        changed = mutate([dict(r) for r in rows])
        r = _verify(root, changed, tmp_path)
        assert r.returncode == 1, (mutate.__name__, r.stdout)
        return json.loads(r.stdout)["problems"]

    second, third, last = events[1], events[2], events[-1]

    def other(actor: str) -> str:
        return "agent" if actor != "agent" else "human"

    def changed_row(rs):  # who acted, rewritten
        rs[second]["actor"] = other(rs[second]["actor"])
        return rs

    def changed_data(rs):  # what was decided, rewritten
        rs[third]["data"] = {**rs[third]["data"], "forged": True}
        return rs

    def changed_and_rehashed(rs):  # the row's own hash fixed up: the next link breaks
        rs[second]["actor"] = other(rs[second]["actor"])
        rs[second]["hash"] = row_hash(rs[second]["prev_hash"], rs[second])
        return rs

    def removed(rs):
        del rs[second]
        return rs

    def removed_last(rs):
        del rs[last]
        return rs

    def reordered(rs):
        rs[second], rs[third] = rs[third], rs[second]
        return rs

    def inserted(rs):
        extra = {**rs[second], "kind": "tool_allowed", "data": {"tool": "Bash"}}
        extra["hash"] = row_hash(extra["prev_hash"], extra)
        rs.insert(third, extra)
        return rs

    expect = {changed_row: f"line {second + 1}: run", changed_data: "was changed",
              changed_and_rehashed: f"line {third + 1}", removed: "removed, inserted or moved",
              removed_last: "rows were removed or added", reordered: "removed, inserted or moved",
              inserted: "removed, inserted or moved"}
    for mutate, needle in expect.items():
        problems = tampered(mutate)
        assert any(needle in p for p in problems), (mutate.__name__, problems)
    # a forger who recomputes the whole chain passes the offline check of the file alone,
    # and is caught against the store's own chain
    forged = _rechain(changed_row([dict(r) for r in rows]))
    assert _verify(root, forged, tmp_path).returncode == 0
    r = _verify(root, forged, tmp_path, "--against-store")
    assert r.returncode == 1 and "rewritten" in json.loads(r.stdout)["problems"][0]
    # the run went on after the export: the export still checks out against the store
    sw(root, "transition", "TICK", "--session", "agent-1")
    assert _verify(root, rows, tmp_path, "--against-store").returncode == 0
    # not an export at all
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hello": 1}\n')
    r = sw(root, "audit", "verify", str(bad), check=False)
    assert r.returncode == 1 and "not an export" in r.stdout


def test_an_approval_on_one_machine_releases_the_agent_on_the_other(tmp_path, pg_url):
    config = json.dumps({"store": pg_url, "project": "shop"})
    laptop, ci = _project(tmp_path / "laptop"), _project(tmp_path / "ci")
    for root in (laptop, ci):
        (root / "statewright.json").write_text(config)
    approval = _parked(ci, "ci-agent")  # the agent in CI asks
    lead = sw(laptop, "token", "create", "--role", "admin", "--name", "lead").stdout.strip()
    pending = json.loads(sw(laptop, "status", "--session", "ci-agent", "--json").stdout)
    assert pending["pending_approval"]["approval_id"] == approval
    sw(laptop, "approve", approval, STATEWRIGHT_TOKEN=lead, STATEWRIGHT_MACHINE="laptop")
    after = json.loads(sw(ci, "status", "--session", "ci-agent", "--json").stdout)
    assert after["state"] == "shipped" and after["pending_approval"] is None
    # the runs of every project of the store, each with its project and machine
    sw(laptop, "start", "gate", "--session", "lead-demo", STATEWRIGHT_MACHINE="laptop")
    listed = json.loads(sw(ci, "runs", "--all-projects", "--json").stdout)
    assert {(r["session"], r["project"]) for r in listed} == {("ci-agent", "shop"),
                                                              ("lead-demo", "shop")}
    assert {r["machine"] for r in listed if r["session"] == "lead-demo"} == {"laptop"}


def test_an_approval_on_one_machines_page_releases_the_agent_on_the_other(tmp_path, pg_url):
    from tests.ui.harness import UiProcess

    laptop, ci = _project(tmp_path / "laptop"), _project(tmp_path / "ci")
    for root, name in ((laptop, "shop"), (ci, "shop")):
        (root / "statewright.json").write_text(json.dumps({"store": pg_url, "project": name}))
    other = _project(tmp_path / "other")  # another project of the same store
    (other / "statewright.json").write_text(json.dumps({"store": pg_url, "project": "docs"}))
    approval = _parked(ci, "ci-agent")
    _parked(other, "docs-agent")
    lead = sw(laptop, "token", "create", "--role", "admin", "--name", "lead").stdout.strip()
    # a shared store's page decides in someone's name: it will not start without a token
    r = sw(laptop, "ui", "--port", "0", check=False)
    assert r.returncode == 1 and r.stderr.startswith("error[TOOL_DENIED]"), r.stderr
    ui = UiProcess(laptop, "--token", lead)
    try:
        status, key = ui.sign_in()
        assert status == 200 and key
        headers = {"Origin": ui.base, "Content-Type": "application/json",
                   "X-Statewright-Key": key}
        status, _h, page = ui.request("GET", "/api/runs", headers=headers)
        assert status == 200
        html = page.decode()
        assert "docs-agent" in html and "ci-agent" in html  # every project of the store
        assert "<th>project</th>" in html and ">docs<" in html and ">shop<" in html
        status, _h, body = ui.request("POST", f"/api/approvals/{approval}/approve", {},
                                      headers)
        assert status == 200, body
    finally:
        ui.stop()
    after = json.loads(sw(ci, "status", "--session", "ci-agent", "--json").stdout)
    assert after["state"] == "shipped" and after["pending_approval"] is None
    hist = json.loads(sw(ci, "history", "--session", "ci-agent", "--json").stdout)
    assert next(h for h in hist if h["kind"] == "approved")["data"]["approver"] == "lead"


def _post(port: int, body: dict, token: str | None) -> tuple[int, dict[str, str], str]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    conn.request("POST", "/mcp", json.dumps(body), headers)
    resp = conn.getresponse()
    out = resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode()
    conn.close()
    return out


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "team-test", "version": "1"}}}


def test_a_shared_proxy_serves_only_bearers_of_a_live_token(tmp_path, pg_url):
    from tests.proxy.harness import ServeHttp

    root = _project(tmp_path)
    (root / "statewright.json").write_text(json.dumps({"store": pg_url}))
    agent = sw(root, "token", "create", "--role", "agent", "--name", "agent:ci").stdout.strip()
    with ServeHttp(root) as srv:
        for token in (None, "swt_" + "1" * 64, agent[:-1] + "0"):
            status, headers, body = _post(srv.port, INITIALIZE, token)
            assert status == 401, (token, status, body)
            assert headers["www-authenticate"].startswith("Bearer")
            assert "bearer token" in json.loads(body)["error"]["message"]
        status, headers, body = _post(srv.port, INITIALIZE, agent)
        assert status == 200, body
        assert "statewright" in body and "serverInfo" in body


def test_the_bearer_gate_never_passes_the_token_on(tmp_path, pg_url):
    """What the MCP server behind the gate (and so every downstream call it makes) receives:
    the request without its Authorization header, with the token's subject and role."""
    import anyio

    from statewright.proxy.bearer import BearerGate
    from statewright.runtime import Runtime
    from statewright.runtime.people import create_token

    root = _project(tmp_path)
    (root / "statewright.json").write_text(json.dumps({"store": pg_url}))
    rt = Runtime.open(root)
    raw = create_token(rt, "approver", "erin", None)["token"]
    seen: list[dict] = []

    async def inner(scope, receive, send) -> None:
        seen.append(scope)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    sent: list[dict] = []

    async def send(msg) -> None:
        sent.append(msg)

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def call(headers) -> None:
        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
        await BearerGate(inner, rt)(scope, receive, send)

    anyio.run(call, [(b"authorization", f"Bearer {raw}".encode()), (b"x-other", b"1")])
    assert len(seen) == 1 and sent[0]["status"] == 204
    assert seen[0]["headers"] == [(b"x-other", b"1")]
    assert raw not in repr(seen[0])
    assert seen[0]["state"]["statewright_subject"] == "erin"
    assert seen[0]["state"]["statewright_role"] == "approver"
    anyio.run(call, [(b"authorization", b"Basic abc")])
    assert len(seen) == 1 and sent[-2]["status"] == 401


SPANS = """
import json, sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
from statewright.policy.types import ToolCall
from statewright.runtime import Runtime

rt = Runtime.open(sys.argv[1])
rt.start("gate", "s1")
rt.authorize("s1", ToolCall("Read", {"file_path": "x.py"}))
rt.authorize("s1", ToolCall("Bash", {"command": "cat .statewright/state.db"}))
print(json.dumps([{"name": s.name, "attributes": dict(s.attributes),
                   "status": s.status.status_code.name} for s in exporter.get_finished_spans()]))
"""


def test_decisions_are_opentelemetry_spans_when_asked(tmp_path):
    import sys

    root = _project(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STATEWRIGHT_", "CLAUDE_"))}
    out = subprocess.run([sys.executable, "-c", SPANS, str(root)], capture_output=True, text=True,
                         env={**env, "STATEWRIGHT_OTEL": "1"}, timeout=120)
    assert out.returncode == 0, out.stderr
    spans = json.loads(out.stdout)
    assert [s["name"] for s in spans] == ["execute_tool Read", "execute_tool Bash"]
    read, bash = spans
    assert read["attributes"]["gen_ai.operation.name"] == "execute_tool"
    assert read["attributes"]["gen_ai.conversation.id"] == "s1"
    assert read["attributes"]["statewright.decision"] == "allow" and read["status"] == "UNSET"
    assert bash["attributes"]["statewright.decision"] == "deny" and bash["status"] == "ERROR"
    assert bash["attributes"]["error.type"] == "statewright.denied"
    assert "cat" not in json.dumps(bash["attributes"])  # arguments are never attributes
    # without the switch, nothing is exported and the module is not even imported
    quiet = subprocess.run([sys.executable, "-c", SPANS + "\nprint('statewright.runtime.telemetry' in sys.modules)",
                            str(_project(tmp_path, "quiet"))], capture_output=True, text=True, env=env,
                           timeout=120)
    assert quiet.returncode == 0, quiet.stderr
    lines = quiet.stdout.split("\n")
    assert lines[0] == "[]" and lines[1] == "False"
