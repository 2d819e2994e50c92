"""The web page end to end in headless Chromium (Debian's `chromium`, driven by Playwright
against the system browser): the human signs in with the link `statewright ui` printed, the
page lists the agent's run, follows its transitions live (fired by the real CLI), shows the
approval it waits for, and the human approves it; a browser without the secret, and a page
of another origin, cannot decide. The screenshots in docs/images/ are taken here."""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect

from statewright.runtime import Runtime
from tests.conftest import REPO, bin_path, clean_env

from .harness import UiProcess

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("chromium")]

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]
#: where the screenshots go: docs/images/ with UPDATE_SCREENSHOTS=1 (`make screenshots`), else
#: the test's own directory (a `make test` leaves the working tree as it found it)
DOC_IMAGES = REPO / "docs" / "images"
TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        raise RuntimeError("chromium is not installed: `make test` installs it (apt-get)")
    with sync_playwright() as p:
        # Playwright gives every launch a fresh temporary profile (--user-data-dir)
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield b
        b.close()


def cli(project, *args, status=0):
    p = subprocess.run([bin_path("statewright"), *args, "--project", str(project),
                        "--session", "agent"], capture_output=True, text=True,
                       env=clean_env(), timeout=60)
    assert p.returncode == status, p.stderr
    return p


class _Evil(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # a page of another origin, on this machine
        body = b"<!doctype html><title>other page</title><p>another origin</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def evil_origin():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Evil)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def test_the_human_follows_a_run_live_and_approves_it(project, browser, evil_origin, tmp_path):
    images = DOC_IMAGES if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path
    rt = Runtime.open(project)
    run_id = rt.start("demo-proxy", "agent", actor="agent")["run_id"]
    Runtime.open(project).start("tdd-feature", "other", actor="agent")
    ui = UiProcess(project)
    try:
        images.mkdir(parents=True, exist_ok=True)
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        page = ctx.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        # the runs
        page.goto(ui.login_url)
        row = page.locator(f'tr[data-run="{run_id}"]')
        row.wait_for()
        assert "explore" in row.inner_text() and "demo-proxy" in row.inner_text()
        assert "#login" not in page.url  # the secret left the address bar
        page.screenshot(path=str(images / "ui-runs.png"), full_page=True)
        # a run, followed live while the agent works
        row.locator("a").first.click()
        page.wait_for_url(f"**/runs/{run_id}")
        state = page.locator("#state")
        assert state.inner_text() == "explore"
        assert page.locator("svg.graph g.state.current").get_attribute("data-state") == "explore"
        cli(project, "transition", "PLAN_READY")
        expect(state).to_have_text("implement", timeout=TIMEOUT_MS)
        assert page.locator("svg.graph g.state.current").get_attribute("data-state") == \
            "implement"
        assert "PLAN_READY" in page.locator("table.history").inner_text()
        cli(project, "transition", "DONE", status=3)  # parked for approval
        card = page.locator("section.approval")
        card.wait_for()
        assert "The agent says the change is complete" in card.inner_text()
        aid = card.get_attribute("data-approval")
        page.screenshot(path=str(images / "ui-approval.png"), full_page=True)

        _refused_without_the_secret(browser, ui, run_id, aid, evil_origin)
        view = rt.run_view(run_id)
        assert view["answer"]["pending_approval"]["approval_id"] == aid

        # the human decides
        page.locator("button.approve").click()
        expect(state).to_have_text("done", timeout=TIMEOUT_MS)
        assert "Approved" in page.locator("#flash").inner_text()
        assert "completed" in page.locator("h1").inner_text()
        history = page.locator("table.history").inner_text()
        assert "approved" in history and "human" in history
        page.screenshot(path=str(images / "ui-run.png"), full_page=True)
        for name in ("ui-runs.png", "ui-approval.png", "ui-run.png"):
            assert (images / name).stat().st_size > 1000  # a real picture of the page
        ctx.close()
        view = rt.run_view(run_id)
        assert view["answer"]["status"] == "completed"
        approved = next(h for h in view["history"] if h["kind"] == "approved")
        assert approved["actor"] == "human" and approved["data"]["approval_id"] == aid
    finally:
        ui.stop()


def _refused_without_the_secret(browser, ui, run_id, aid, evil_origin):
    """An agent's browser: no key (a fresh profile), the spent sign-in link, another origin."""
    ctx = browser.new_context()
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{ui.base}/runs/{run_id}")
    page.locator("section.signin").wait_for()
    assert aid not in page.content()
    status = page.evaluate("""async (aid) => (await fetch('/api/approvals/' + aid + '/approve',
        {method: 'POST', headers: {'Content-Type': 'application/json'},
         body: '{}'})).status""", aid)
    assert status == 401
    page.goto(ui.login_url)  # spent: the human used it
    page.locator("section.signin").wait_for()
    assert "already used" in page.locator("#flash").inner_text()
    # a page of another origin posting to the page's API (a browser cannot hide its origin)
    page.goto(evil_origin)
    outcome = page.evaluate("""async ([base, aid]) => {
        try {
          const r = await fetch(base + '/api/approvals/' + aid + '/approve',
            {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'},
             body: '{}'});
          return r.type;
        } catch (e) { return 'blocked'; }
    }""", [ui.base, aid])
    assert outcome in ("opaque", "blocked")
    ctx.close()


def test_on_a_shared_store_the_leads_page_releases_an_agent_on_another_machine(
        browser, pg_url, tmp_path):
    """Two checkouts of one project on one PostgreSQL store: the agent works through its proxy
    in CI, the lead watches on the laptop's page. Neither the page nor the proxy polls here
    (only the store's notices wake them): the page shows the approval the agent asked for, the
    lead clicks Approve, and the agent's proxy is told and moves on."""
    import json

    from tests.proxy.harness import ProxyClient, payload
    from tests.store.test_live import NO_POLLING, _machines
    from tests.store.test_team import sw

    laptop, ci = _machines(tmp_path, pg_url)
    lead = sw(laptop, "token", "create", "--role", "admin", "--name", "lead").stdout.strip()
    ui = UiProcess(laptop, "--token", lead, env=NO_POLLING)
    try:
        with ProxyClient(ci, session="ci-agent",
                         env=clean_env(STATEWRIGHT_SESSION="ci-agent", STATEWRIGHT_MACHINE="ci",
                                       **NO_POLLING)) as agent:
            run_id = payload(agent.call("statewright_load_workflow", {"name": "gate"}))["run_id"]
            ctx = browser.new_context(viewport={"width": 1280, "height": 900})
            page = ctx.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(ui.login_url)
            page.locator(f'tr[data-run="{run_id}"]').locator("a").first.click()
            page.wait_for_url(f"**/runs/{run_id}")
            state = page.locator("#state")
            assert state.inner_text() == "build"
            # the agent asks in CI; the lead's page shows it without being reloaded
            parked = payload(agent.call("statewright_transition", {"event": "SHIP"}))
            aid = parked["pending_approval"]["approval_id"]
            card = page.locator("section.approval")
            card.wait_for()
            assert card.get_attribute("data-approval") == aid
            assert "ship it?" in card.inner_text()
            n = agent.list_changed_count()
            page.locator("button.approve").click()
            expect(state).to_have_text("shipped", timeout=TIMEOUT_MS)
            ctx.close()
            agent.wait_list_changed(n, timeout=60)  # the agent's proxy in CI is told
            after = payload(agent.call("statewright_get_state"))
            assert after["state"] == "shipped" and after["pending_approval"] is None
    finally:
        ui.stop()
    hist = json.loads(sw(ci, "history", "--session", "ci-agent", "--json").stdout)
    assert next(h for h in hist if h["kind"] == "approved")["data"]["approver"] == "lead"
