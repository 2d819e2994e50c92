"""Helpers for engine tests: compile workflow documents with the real compiler."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from statewright.definition import compile_dict
from statewright.definition.compiled import CompiledWorkflow
from statewright.engine import Outcome, start
from statewright.engine.run import Run

EXAMPLES = Path(__file__).resolve().parents[2] / "workflows"


def wf(doc: dict[str, Any]) -> CompiledWorkflow:
    return compile_dict(doc)


def example(name: str) -> CompiledWorkflow:
    return compile_dict(json.loads((EXAMPLES / f"{name}.json").read_text()),
                        source_path=str(EXAMPLES / f"{name}.json"))


def begin(c: CompiledWorkflow, input: Any = None, session: str = "s") -> Run:
    out = start(c, "run_000000000001", session, now=1.0, input=input)
    assert out.accepted, out.message
    return out.run


def kinds(out: Outcome) -> list[str]:
    return [e.kind for e in out.events]
