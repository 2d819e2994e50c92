"""The web page shows what statewright's own checks answered (outcome, counts, the tail of the
output) and when a state times out, over plain HTTP against a real `statewright ui`."""

from __future__ import annotations

import html
import json

import pytest

from statewright.errors import StatewrightError
from statewright.runtime import Runtime

from .harness import UiProcess

pytestmark = pytest.mark.e2e

FLOW = {
    "id": "checked", "initial": "work",
    "checks": {"suite": {"run": "echo 'collected 3 items'; echo 'FAILED test_a.py::test_x';"
                                " echo '<b>1 failed</b>'; exit 1",
                         "report": "r.xml", "timeout_s": 30}},
    "guards": {"ok": {"field": "_checks.suite.ok", "op": "eq", "value": True}},
    "states": {"work": {"timeout_s": 3600, "on_timeout": "GIVE_UP",
                        "on": {"DONE": {"target": "done", "guard": "ok", "checks": ["suite"]},
                               "GIVE_UP": "done"}},
               "done": {"type": "final"}},
}


def test_the_run_page_shows_a_check_outcome_and_its_output(project) -> None:
    (project / "workflows" / "checked.json").write_text(json.dumps(FLOW))
    rt = Runtime.open(project)
    run_id = rt.start("checked", "agent")["run_id"]
    with pytest.raises(StatewrightError):
        rt.transition("agent", "DONE")
    ui = UiProcess(project)
    try:
        status, key = ui.sign_in()
        assert status == 200 and key
        status, _h, body = ui.request("GET", f"/api/runs/{run_id}",
                                      headers={"X-Statewright-Key": key})
        assert status == 200
        page = body.decode()
        assert '<span class="check fail"><b>check suite</b> failed (exit status 1)' in page
        assert '<details class="output">' in page
        assert "FAILED test_a.py::test_x" in page
        # the output is text, never markup
        assert html.escape("<b>1 failed</b>") in page and "<b>1 failed</b>" not in page
        assert "sandbox" in page
        assert "This state times out in" in page and "GIVE_UP" in page
        assert "runs checks suite" in page
    finally:
        ui.stop()
