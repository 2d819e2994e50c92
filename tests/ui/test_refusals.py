"""Who may use the web page, over plain HTTP against a real `statewright ui` (what an agent
with a shell and curl can send): without the secret, with a forged Origin or Host, or with a
spent sign-in link, nothing is shown and no decision is taken; the human's key works."""

from __future__ import annotations

import json

import pytest

from statewright.runtime import Runtime

from .harness import UiProcess

pytestmark = pytest.mark.e2e


@pytest.fixture
def parked(project):
    """A demo-proxy run whose DONE waits for a human (the agent side, in process)."""
    rt = Runtime.open(project)
    rt.start("demo-proxy", "agent")
    rt.transition("agent", "PLAN_READY")
    answer = rt.transition("agent", "DONE")
    return rt, answer["run_id"], answer["pending_approval"]["approval_id"]


@pytest.fixture
def ui(project):
    proc = UiProcess(project)
    yield proc
    proc.stop()


def decide(ui, aid, headers, decision="approve", body=None):
    return ui.request("POST", f"/api/approvals/{aid}/{decision}",
                      body if body is not None else {"reason": "r"}, headers)


def still_parked(rt, run_id, aid):
    view = rt.run_view(run_id)
    assert view["answer"]["pending_approval"]["approval_id"] == aid
    assert view["answer"]["state"] == "implement"
    assert not [h for h in view["history"] if h["kind"] in ("approved", "rejected_by_human")]


def test_without_the_secret_nothing_is_decided_or_shown(parked, ui):
    rt, run_id, aid = parked
    same = {"Origin": ui.base, "Content-Type": "application/json"}
    for headers in (same, {**same, "X-Statewright-Key": "guess"},
                    {**same, "X-Statewright-Key": ui.token},  # the sign-in token is no key
                    {**same, "Cookie": f"key={ui.token}"}):
        status, _h, body = decide(ui, aid, headers)
        assert status == 401, body
        assert json.loads(body)["error"]["code"] == "SIGN_IN"
        status, _h, _b = decide(ui, aid, headers, "reject")
        assert status == 401
    for path in ("/api/runs", f"/api/runs/{run_id}", "/api/wait?since=0"):
        status, _h, body = ui.request("GET", path)
        assert status == 401 and aid.encode() not in body
    still_parked(rt, run_id, aid)


def test_a_forged_origin_or_host_is_refused_even_with_the_key(parked, ui):
    rt, run_id, aid = parked
    status, key = ui.sign_in()
    assert status == 200 and key
    good = {"Origin": ui.base, "Content-Type": "application/json", "X-Statewright-Key": key}
    forged = [
        {**good, "Origin": "http://evil.example"},
        {**good, "Origin": f"http://127.0.0.1:{ui.port + 1}"},  # another local port
        {**good, "Origin": "null"},
        {k: v for k, v in good.items() if k != "Origin"},  # no Origin on a change
        {**good, "Sec-Fetch-Site": "cross-site"},
        {**good, "Host": "evil.example"},  # DNS rebinding
        {**good, "Host": f"127.0.0.1:{ui.port + 1}"},
        {**good, "Content-Type": "text/plain"},  # what a form or a simple request sends
    ]
    for headers in forged:
        status, _h, body = decide(ui, aid, headers)
        assert status in (403, 415), (headers, status, body)
    for method in ("PUT", "DELETE", "PATCH"):
        assert ui.request(method, f"/api/approvals/{aid}/approve", {}, good)[0] == 405
    status, _h, body = ui.request("GET", f"/api/runs/{run_id}",
                                  headers={"X-Statewright-Key": key, "Host": "evil.example"})
    assert status == 403 and aid.encode() not in body
    still_parked(rt, run_id, aid)
    # the same request from the page itself is the human's decision
    status, _h, body = decide(ui, aid, good, "reject", {"reason": "not yet"})
    assert status == 200, body
    assert json.loads(body)["state"] == "implement"
    hist = rt.run_view(run_id)["history"]
    rejected = next(h for h in hist if h["kind"] == "rejected_by_human")
    assert rejected["actor"] == "human" and rejected["data"]["reason"] == "not yet"


def test_the_sign_in_link_works_once(ui):
    status, key = ui.sign_in()
    assert status == 200 and key
    status, again = ui.sign_in()
    assert status == 401 and again is None
    assert ui.sign_in("x" * 43)[0] == 401


def test_responses_forbid_framing_scripts_and_caching(ui):
    status, headers, body = ui.request("GET", "/")
    assert status == 200 and b"statewright" in body
    assert "script-src 'self'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert headers["cache-control"] == "no-store"
    assert headers["referrer-policy"] == "no-referrer"
    # the page itself carries no run data: it needs the key to load any
    assert b"run_" not in body


def test_the_page_says_where_it_is_while_it_runs(parked, project):
    rt, run_id, aid = parked
    assert rt.page_url() is None
    ui = UiProcess(project)
    try:
        assert rt.page_url() == ui.base
        assert ui.token not in (project / ".statewright" / "ui.json").read_text()
        from tests.cli_runs.test_cli_runs import sw

        out = sw(project, "status", session="agent").stdout
        assert f"web page: {ui.base}/runs/{run_id}" in out
        rt.reject(None, aid, "again")
        parked_again = rt.transition("agent", "DONE")
        assert f"{ui.base}/runs/{run_id}" in parked_again["advice"]
    finally:
        ui.stop()
    assert not (project / ".statewright" / "ui.json").exists()
    assert rt.page_url() is None
