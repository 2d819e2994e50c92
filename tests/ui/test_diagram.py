"""The workflow drawn as SVG (statewright/ui/diagram.py) and the page's HTML escaping."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from statewright.definition import compile_dict as load_dict
from statewright.runtime import Runtime
from statewright.ui import pages
from statewright.ui.diagram import layout, render_svg
from tests.conftest import EXAMPLES

SVG = "{http://www.w3.org/2000/svg}"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.json"))


@pytest.mark.parametrize("name", NAMES)
def test_every_example_is_drawn_with_each_state_once(project, name):
    wf = Runtime.open(project).load_definition(name)
    svg = render_svg(wf, wf.initial, {})
    root = ET.fromstring(svg.replace("<svg ", f'<svg xmlns="{SVG[1:-1]}" ', 1))
    drawn = [g.get("data-state") for g in root.iter(f"{SVG}g") if g.get("data-state")]
    assert sorted(n for n in drawn if n != "$return") == sorted(wf.states)
    current = [g.get("data-state") for g in root.iter(f"{SVG}g")
               if "current" in (g.get("class") or "").split()]
    assert current == [wf.initial]
    lay = layout(wf)
    boxes = [(n.x, n.y) for n in lay.nodes.values() if not n.dummy]
    assert len(set(boxes)) == len(boxes)  # no two states on one spot
    for n in lay.nodes.values():
        assert 0 <= n.x <= lay.width and 0 <= n.y <= lay.height


def test_edges_leaving_the_current_state_say_whether_they_pass_now():
    wf = load_dict({"id": "w", "initial": "a", "guards": {"g": {"field": "ok", "op": "eq",
                                                                 "value": True}},
                    "states": {"a": {"on": {"GO": {"target": "b", "guard": "g"}, "SKIP": "c"}},
                               "b": {"on": {"BACK": "a"}}, "c": {"type": "final"}}})
    svg = render_svg(wf, "a", {"GO": False, "SKIP": True})
    assert re.search(r'<g class="edge blocked"><title>GO \[g\]</title>', svg)
    assert re.search(r'<g class="edge pass"><title>SKIP</title>', svg)
    assert '<g class="edge"><title>BACK</title>' in svg  # not leaving the current state


def test_text_from_runs_and_workflows_is_escaped():
    evil = '<script>alert(1)</script>"'
    wf = load_dict({"id": "w", "initial": "a",
                    "states": {"a": {"instructions": evil, "on": {"GO": "z"}},
                               "z": {"type": "final"}}})
    assert "<script>" not in render_svg(wf, "a", {})
    answer = {"workflow": "w", "state": "a", "status": "running", "version": 1,
              "instructions": evil, "transitions": [], "counters": {}, "context": {"x": evil},
              "pending_approval": {"approval_id": "apr_1", "event": "GO", "target": "z",
                                   "message": evil, "data": {"k": evil}, "requested_at": 0}}
    run = {"run_id": "run_1", "session": evil, "created_at": 0, "updated_at": 0,
           "parent_run": None}
    html = pages.run_html({"answer": answer, "run": run, "definition": wf, "children": [],
                           "history": [{"seq": 1, "run_id": "run_1", "at": 0, "actor": "agent",
                                        "kind": "started", "version": 1, "state": "a",
                                        "data": {"x": evil}}]})
    assert "<script>" not in html and "&lt;script&gt;" in html
