"""What a newcomer trips on in the web page, against a real `statewright ui` process (and
headless Chromium where the look is the point): a new sign-in link without a restart, the
favicon, narrow windows, an unknown run id, history data people can read, the "ended" badge,
and graphs whose edge labels show guards and do not hide each other."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from statewright.runtime import Runtime
from tests.conftest import bin_path, clean_env

from .harness import LINK, UiProcess

pytestmark = [pytest.mark.e2e]

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]
TIMEOUT_MS = 30_000


def _sign_in(port: int, token: str) -> int:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = json.dumps({"token": token})
    conn.request("POST", "/api/session", body, {
        "Host": f"127.0.0.1:{port}", "Origin": f"http://127.0.0.1:{port}",
        "Content-Type": "application/json"})
    status = conn.getresponse().status
    conn.close()
    return status


def _link(proc: subprocess.Popen) -> re.Match:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        assert line, "statewright ui ended"
        m = LINK.search(line)
        if m:
            return m
    raise AssertionError("no sign-in link")


def test_enter_on_the_terminal_prints_a_new_sign_in_link(project):
    proc = subprocess.Popen([bin_path("statewright"), "ui", "--port", "0", "--project",
                             str(project)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        first = _link(proc)
        port = int(first.group(2))
        for _ in range(200):
            try:
                assert _sign_in(port, first.group(3)) == 200
                break
            except ConnectionRefusedError:
                time.sleep(0.05)
        assert _sign_in(port, first.group(3)) == 401  # spent: a second tab is signed out
        proc.stdin.write("\n")
        proc.stdin.flush()
        second = _link(proc)
        assert second.group(3) != first.group(3)
        assert _sign_in(port, second.group(3)) == 200  # no restart needed
        assert _sign_in(port, second.group(3)) == 401  # and it works once too
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        for f in (proc.stdin, proc.stdout, proc.stderr):
            f.close()


def test_the_favicon_is_served(project):
    ui = UiProcess(project)
    try:
        status, headers, body = ui.request("GET", "/favicon.ico")
        assert status == 200 and headers["content-type"].startswith("image/svg+xml")
        assert body.startswith(b"<svg")
    finally:
        ui.stop()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        raise RuntimeError("chromium is not installed: `make test` installs it (apt-get)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield b
        b.close()


@pytest.mark.xdist_group("chromium")
def test_the_page_for_narrow_windows_unknown_runs_ended_runs_and_large_graphs(project,
                                                                              browser):
    rt = Runtime.open(project)
    big = rt.start("incident-triage", "big")["run_id"]
    rt.start("demo-proxy", "agent")
    rt.transition("agent", "PLAN_READY", {"note": "x"})
    ended = rt.start("tdd-feature", "gone")["run_id"]
    rt.end("gone", "tour over", actor="human")
    ui = UiProcess(project)
    try:
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        page = ctx.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(ui.login_url)
        page.locator(f'tr[data-run="{big}"]').wait_for()
        # "ended" is a human's closing, not a failure: not drawn in the failure colour
        ended_pill = page.locator(f'tr[data-run="{ended}"] .pill.ended')
        failed_colour = "rgb(207, 34, 46)"
        assert ended_pill.evaluate("e => getComputedStyle(e).color") != failed_colour
        # an unknown run id: not a dead end
        page.goto(f"{ui.base}/runs/run_000000000000")
        back = page.locator("main a[href='/']")
        back.wait_for()
        assert "all runs" in back.inner_text()
        # a large graph: guards on the edges, no label hiding another
        page.goto(f"{ui.base}/runs/{big}")
        page.locator("svg.graph").wait_for()
        svg = page.locator("svg.graph").inner_html()
        from statewright.definition import load_path
        from statewright.definition.discovery import find_workflow

        wf = load_path(find_workflow("incident-triage", rt.config))
        guard_names = {g for st in wf.states.values() for t in st.on.values()
                       for b in t.branches for g in b.guards}
        assert guard_names and all(g in svg for g in guard_names)
        boxes = page.evaluate("""() => [...document.querySelectorAll('svg.graph .edge text')]
            .map(t => { const b = t.getBBox(); return [b.x, b.y, b.x + b.width,
                                                        b.y + b.height]; })""")
        assert len(boxes) > 5
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                overlap = not (a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1])
                assert not overlap, (a, b)
        # history data people can read: no Unix timestamps, one field a line
        page.goto(f"{ui.base}/runs/{rt.get_state('agent')['run_id']}")
        history = page.locator("table.history")
        history.wait_for()
        assert not re.search(r"\b1\d{9}(\.\d+)?\b", history.inner_text())
        assert page.locator("table.history dl.data dt").count() > 0
        # narrow windows: nothing wider than the window, the graph whole
        for width in (640, 390):
            page.set_viewport_size({"width": width, "height": 800})
            page.goto(f"{ui.base}/runs/{big}")
            page.locator("svg.graph").wait_for()
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            right = page.evaluate(
                "document.querySelector('svg.graph').getBoundingClientRect().right")
            assert right <= width
        ctx.close()
    finally:
        ui.stop()
