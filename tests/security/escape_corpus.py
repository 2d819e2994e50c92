"""The escape-class corpora of issue 10 (`tests/security/corpus/*.txt`) as data: each case is a
command line, the verdict it must get, and the state it is decided in (see the header of
`corpus/programs.txt` for the format)."""

from __future__ import annotations

import json
from pathlib import Path

from statewright.definition.compiled import State

HERE = Path(__file__).resolve().parent / "corpus"


class Case:
    __slots__ = ("file", "line", "state_doc", "state_name", "verdict")

    def __init__(self, file: str, state_name: str, state_doc: dict, verdict: str,
                 line: str) -> None:
        self.file = file
        self.state_name = state_name
        self.state_doc = state_doc
        self.verdict = verdict
        self.line = line

    @property
    def allowed(self) -> bool:
        return self.verdict == "allow"

    def state(self) -> State:
        d = self.state_doc
        cmds = d.get("allowed_commands")
        return State(name=self.state_name,
                     allowed_commands=tuple(cmds) if cmds is not None else None,
                     blocked_env=tuple(d.get("blocked_env", ())))

    def __repr__(self) -> str:
        return f"{self.verdict} [{self.state_name}] {self.line!r}"


def load(name: str) -> list[Case]:
    """Every case of corpus file `name`, in order."""
    out: list[Case] = []
    state_name, state_doc = "", {}
    for n, raw in enumerate((HERE / name).read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        if raw.startswith("@state "):
            state_name, _, doc = raw[7:].partition(" ")
            state_doc = json.loads(doc)
            continue
        verdict, _, line = raw.partition(" ")
        if verdict not in ("deny", "allow") or not state_name:
            raise ValueError(f"{name}:{n}: expected `deny LINE` or `allow LINE` after @state")
        out.append(Case(name, state_name, state_doc, verdict, line.replace("<NL>", "\n")))
    return out


def states(cases: list[Case]) -> dict[str, dict]:
    """The states the cases are decided in, by name."""
    return {c.state_name: c.state_doc for c in cases}
