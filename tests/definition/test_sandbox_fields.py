"""The kernel-tier state fields: `read_only`, `sandbox`, `network`, `unix_sockets` (valid forms,
defaults, the compiled record and its stored form, the warnings where they have no effect).
The invalid forms with their pointers are in the corpus (`corpus.STRUCTURAL`, `SEMANTIC`)."""

from __future__ import annotations

import json

import pytest

from statewright.definition import compile_dict, validate
from statewright.definition.compiled import SANDBOX_MODES, CompiledWorkflow, State
from statewright.definition.semantic import read_only_problem

from .corpus import SEMANTIC, STRUCTURAL, example_docs, mutate

F = {"type": "final"}


def _state(**fields) -> State:
    doc = {"id": "t", "initial": "a", "states": {"a": {**fields, "on": {"DONE": "d"}}, "d": F}}
    result = validate(doc)
    assert result.ok, [str(d) for d in result.diagnostics]
    return result.compiled.states["a"]


def test_defaults_leave_existing_workflows_unchanged() -> None:
    st = _state()
    assert (st.read_only, st.sandbox, st.network, st.unix_sockets) == ((), "auto", True, False)
    assert State("x") == State("x", read_only=(), sandbox="auto", network=True, unix_sockets=False)
    for name, doc in example_docs().items():
        wf = compile_dict(doc)
        for sname, s in wf.states.items():
            raw = doc["states"][sname]
            want = (tuple(raw.get("read_only", ())), raw.get("sandbox", "auto"),
                    raw.get("network", True), raw.get("unix_sockets", False))
            assert (s.read_only, s.sandbox, s.network, s.unix_sockets) == want, name


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_every_sandbox_mode(mode: str) -> None:
    assert _state(sandbox=mode).sandbox == mode


def test_fields_compile_as_given() -> None:
    st = _state(read_only=["tests/**", "**/*.lock", "./Makefile", "conftest.py"], sandbox="required",
                network=False, unix_sockets=True)
    assert st.read_only == ("tests/**", "**/*.lock", "./Makefile", "conftest.py")
    assert (st.sandbox, st.network, st.unix_sockets) == ("required", False, True)
    assert _state(network=True, unix_sockets=False, read_only=[]).read_only == ()


def test_stored_form_round_trips_and_old_stored_forms_get_defaults() -> None:
    doc = {"id": "t", "initial": "a", "states": {
        "a": {"read_only": ["tests/**"], "sandbox": "required", "network": False, "unix_sockets": True,
              "on": {"DONE": "d"}}, "d": F}}
    wf = compile_dict(doc)
    stored = json.loads(json.dumps(wf.to_dict()))
    assert stored["states"]["a"]["read_only"] == ["tests/**"]
    assert CompiledWorkflow.from_dict(stored) == wf
    # a definition stored before these fields existed
    for s in stored["states"].values():
        for f in ("read_only", "sandbox", "network", "unix_sockets"):
            del s[f]
    old = CompiledWorkflow.from_dict(stored).states["a"]
    assert (old.read_only, old.sandbox, old.network, old.unix_sockets) == ((), "auto", True, False)


def test_the_corpus_covers_each_field() -> None:
    for f in ("read_only", "sandbox", "network", "unix_sockets"):
        assert any(c[2].split("/")[3] == f for c in STRUCTURAL if c[2].startswith("/states/work/")), f
    assert sum(1 for c in SEMANTIC if c[3] == "bad-read-only") >= 5


@pytest.mark.parametrize("pattern", ["tests/**", "**/*.lock", "src/*.py", "./Makefile", "a/[bc]/d",
                                     "x..y", "...", ".github/**", "docs/~draft.md"])
def test_read_only_patterns_accepted(pattern: str) -> None:
    assert read_only_problem(pattern) is None
    assert _state(read_only=[pattern]).read_only == (pattern,)


@pytest.mark.parametrize("pattern", ["/abs", "~/x", "~", "c:/x", "Z:\\x", "..", "../x", "a/../b", "a/..",
                                     "a\\b"])
def test_read_only_patterns_refused(pattern: str) -> None:
    assert read_only_problem(pattern)
    result = validate(mutate(**{"states/work/read_only": ["ok/**", pattern]}))
    assert not result.ok
    (d,) = result.errors
    assert (d.pointer, d.code) == ("/states/work/read_only/1", "bad-read-only")
    assert repr(pattern) in d.message


def test_every_problem_reported_at_once() -> None:
    doc = mutate(**{"states/work/read_only": ["/a", "b/../c"], "states/work/sandbox": "sometimes",
                    "states/work/network": "no"})
    got = {(d.pointer, d.code) for d in validate(doc).errors}
    # the schema's problems and, in the same run, the semantic ones of the parts it accepted
    assert got == {("/states/work/sandbox", "invalid-value"), ("/states/work/network", "wrong-type"),
                   ("/states/work/read_only/0", "bad-read-only"),
                   ("/states/work/read_only/1", "bad-read-only")}
    doc["states"]["work"]["sandbox"] = "off"
    doc["states"]["work"]["network"] = True
    got = {(d.pointer, d.code) for d in validate(doc).errors}
    assert got == {("/states/work/read_only/0", "bad-read-only"), ("/states/work/read_only/1", "bad-read-only")}


def _warnings(doc: dict) -> set[tuple[str, str]]:
    result = validate(doc)
    assert result.ok, [str(d) for d in result.diagnostics]
    return {(d.pointer, d.code) for d in result.warnings}


def test_settings_without_effect_are_warned_about() -> None:
    doc = {"id": "t", "initial": "a", "states": {
        "a": {"sandbox": "off", "network": False, "unix_sockets": True, "read_only": ["tests/**"],
              "on": {"DONE": "d"}},
        "d": {"type": "final", "read_only": ["x"], "sandbox": "required"}}}
    assert _warnings(doc) == {
        ("/states/a/network", "needs-sandbox"), ("/states/a/unix_sockets", "needs-sandbox"),
        ("/states/a/read_only", "needs-sandbox"),
        ("/states/d/read_only", "ignored-in-final"), ("/states/d/sandbox", "ignored-in-final")}
    # the same settings where they take effect: no warning
    doc = {"id": "t", "initial": "a", "states": {
        "a": {"sandbox": "required", "network": False, "unix_sockets": True, "read_only": ["tests/**"],
              "on": {"DONE": "d"}},
        "b": {"sandbox": "off", "network": True, "unix_sockets": False, "on": {"DONE": "d"}},
        "d": F}}
    doc["states"]["a"]["on"]["NEXT"] = "b"
    assert _warnings(doc) == set()
