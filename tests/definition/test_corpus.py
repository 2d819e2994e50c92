"""Reference documents validate; each invalid document fails with the right pointer and code."""

from __future__ import annotations

import json

import pytest

from statewright.definition import compile_dict, validate
from statewright.definition.discovery import make_resolver
from statewright.errors import INVALID_WORKFLOW, StatewrightError

from .corpus import MALFORMED, SEMANTIC, STRUCTURAL, reference_docs

REF = reference_docs()


def test_reference_corpus_is_complete() -> None:
    assert {"minimal.json", "full.json", "complete.json"} <= set(REF)
    assert sum(1 for n in REF if n.startswith("fragment-")) >= 20


@pytest.mark.parametrize("name", sorted(REF))
def test_reference_document_validates(name: str) -> None:
    # Validated together, as `statewright validate tests/definition/reference/` would.
    resolver = make_resolver(None, extra={d["id"]: d for d in REF.values()})
    result = validate(REF[name], resolver=resolver)
    assert result.ok, [str(d) for d in result.diagnostics]
    assert result.errors == []
    assert result.compiled is not None and result.compiled.id == REF[name]["id"]


def test_invoke_without_search_path_is_only_a_warning() -> None:
    result = validate(REF["fragment-pattern-invoke.json"])
    assert result.ok
    assert [(d.severity, d.pointer, d.code) for d in result.diagnostics] == [
        ("warning", "/states/s/on/RUN_TESTS/invoke", "invoke-unresolved")]


def test_corpus_size() -> None:
    assert len(STRUCTURAL) + len(SEMANTIC) + len(MALFORMED) >= 40
    ids = [c[0] for c in STRUCTURAL + SEMANTIC + MALFORMED]
    assert len(ids) == len(set(ids))


def _hits(result, pointer: str, code: str) -> list:
    return [d for d in result.errors if d.pointer == pointer and d.code == code]


@pytest.mark.parametrize("case_id,doc,pointer,code", STRUCTURAL, ids=[c[0] for c in STRUCTURAL])
def test_structural_error(case_id: str, doc, pointer: str, code: str) -> None:
    result = validate(doc)
    assert not result.ok and result.compiled is None
    assert _hits(result, pointer, code), [str(d) for d in result.diagnostics]
    # each diagnostic is specific: no jsonschema noise dumps
    for d in result.diagnostics:
        assert "is not valid under any of the given schemas" not in d.message


@pytest.mark.parametrize("case_id,doc,pointer,code", SEMANTIC, ids=[c[0] for c in SEMANTIC])
def test_semantic_error(case_id: str, doc, pointer: str, code: str) -> None:
    result = validate(doc)
    assert not result.ok and result.compiled is None
    assert _hits(result, pointer, code), [str(d) for d in result.diagnostics]
    with pytest.raises(StatewrightError) as exc:
        compile_dict(doc)
    assert exc.value.code == INVALID_WORKFLOW
    assert pointer in exc.value.message and code in exc.value.message
    assert "\n" not in exc.value.message


@pytest.mark.parametrize("case_id,text,pointer,code", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_text(case_id: str, text, pointer: str, code: str, tmp_path) -> None:
    for source in (text, text.encode() if isinstance(text, str) else text):
        result = validate(source)
        assert not result.ok
        assert _hits(result, pointer, code), [str(d) for d in result.diagnostics]
    p = tmp_path / "w.json"
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    result = validate(p)
    assert _hits(result, pointer, code)
    assert result.source_path == str(p.resolve())


def test_all_errors_reported_at_once() -> None:
    doc = {"id": "t", "initial": "nowhere", "guards": {},
           "states": {"a": {"on": {"GO": "b", "X": {"target": "zz", "guard": "g"}}, "safe_next": "q"},
                      "b": {"on": {"BACK": "a"}}}}
    result = validate(doc)
    got = {(d.pointer, d.code) for d in result.errors}
    assert got >= {("/initial", "unknown-state"), ("/states", "no-final-state"),
                   ("/states/a/on/X/target", "unknown-state"), ("/states/a/on/X/guard", "unknown-guard"),
                   ("/states/a/safe_next", "unknown-state")}
    doc2 = {"id": "t", "initial": "a", "states": {"a": {"max_iterations": 0, "allowd_tools": [], "on": {"GO": 1}}}}
    got2 = {(d.pointer, d.code) for d in validate(doc2).errors}
    assert got2 == {("/states/a/max_iterations", "too-small"), ("/states/a/allowd_tools", "unknown-field"),
                    ("/states/a/on/GO", "wrong-type")}


def test_unknown_field_suggests_the_right_name() -> None:
    result = validate({"id": "t", "initial": "a", "states": {"a": {"type": "final", "alowed_tools": []}}})
    (d,) = result.errors
    assert "did you mean 'allowed_tools'" in d.message


def test_transition_oneof_picks_the_intended_form() -> None:
    doc = {"id": "t", "initial": "a", "states": {"a": {"on": {
        "I": {"invoke": "c", "on_complete": "d", "target": "d"},
        "F": {"fork": {"branches": {"x": {"initial": "d"}}, "on_complete": "d"}},
        "B": [{"target": "d", "gurad": "g"}]}}, "d": F}}
    got = {(d.pointer, d.code) for d in validate(doc).errors}
    assert got == {("/states/a/on/I/target", "unknown-field"),
                   ("/states/a/on/F/fork/branches/x", "missing-field"),
                   ("/states/a/on/B/0/gurad", "unknown-field")}


F = {"type": "final"}


def test_warnings_do_not_fail() -> None:
    doc = {"id": "t", "initial": "a", "model": "opus",
           "guards": {"unused": {"field": "x", "op": "exists"}},
           "states": {
               "a": {"allowed_tools": ["Read"], "allowed_commands": ["pytest"], "thinking_level": "high",
                     "on": {"GO": "loop", "DONE": "d"}},
               "loop": {"on": {"AGAIN": "loop"}},
               "d": F}}
    result = validate(doc)
    assert result.ok and result.compiled is not None
    got = {(d.severity, d.pointer, d.code) for d in result.diagnostics}
    assert got == {
        ("warning", "/model", "ignored-field"),
        ("warning", "/states/a/thinking_level", "ignored-field"),
        ("warning", "/guards/unused", "unused-guard"),
        ("warning", "/states/a/allowed_commands", "commands-without-bash"),
        ("warning", "/states/loop", "no-path-to-final"),
    }


def test_allowed_commands_with_bash_glob_is_fine() -> None:
    doc = {"id": "t", "initial": "a", "states": {
        "a": {"allowed_tools": ["Read", "B*"], "allowed_commands": ["pytest"], "on": {"DONE": "d"}}, "d": F}}
    assert validate(doc).diagnostics == []


def test_fork_branch_reachable_from_outside_warns() -> None:
    doc = {"id": "t", "initial": "a", "states": {
        "a": {"on": {"GO": {"fork": {"branches": {"x": {"initial": "x1", "terminal": "xd"}}, "on_complete": "d"}},
                     "SKIP": "x1"}},
        "x1": {"on": {"OK": "xd"}}, "xd": F, "d": F}}
    result = validate(doc)
    assert result.ok
    assert {(d.pointer, d.code) for d in result.warnings} == {("/states/x1", "fork-branch-shared")}


def test_fork_terminal_checks_warn() -> None:
    doc = {"id": "t", "initial": "a", "states": {
        "a": {"on": {"GO": {"fork": {"branches": {"x": {"initial": "x1", "terminal": "x2"}}, "on_complete": "d"}}}},
        "x1": {"on": {"OK": "d"}}, "x2": {"on": {"OK": "d"}}, "d": F}}
    result = validate(doc)
    codes = {(d.pointer, d.code) for d in result.warnings}
    assert ("/states/a/on/GO/fork/branches/x/terminal", "fork-terminal-not-final") in codes
    assert ("/states/a/on/GO/fork/branches/x/terminal", "fork-terminal-unreachable") in codes


def test_return_legal_in_handler_chain() -> None:
    # h1 -> h2 are only reachable from the interrupt; both may use $return.
    doc = {"id": "t", "initial": "a", "interrupts": {"i": {"trigger": {"file_pattern": "**/*.sql"}, "target": "h1"}},
           "states": {"a": {"on": {"DONE": "d"}}, "h1": {"on": {"NEXT": "h2", "BACK": "$return"}},
                      "h2": {"safe_next": "$return", "on": {"BACK": [{"target": "$return"}]}}, "d": F}}
    result = validate(doc)
    assert result.ok, [str(d) for d in result.diagnostics]
    assert result.diagnostics == []


def test_interrupt_pattern_that_never_matches_warns() -> None:
    doc = {"id": "t", "initial": "a", "interrupts": {"i": {"trigger": {"file_pattern": "/etc/*.conf"}, "target": "h"}},
           "states": {"a": {"on": {"DONE": "d"}}, "h": {"on": {"BACK": "$return"}}, "d": F}}
    result = validate(doc)
    assert result.ok
    assert [(d.pointer, d.code) for d in result.warnings] == [("/interrupts/i/trigger/file_pattern", "pattern-never-matches")]


def test_invoke_resolution_and_cycles() -> None:
    parent = {"id": "parent", "initial": "a", "states": {
        "a": {"on": {"GO": {"invoke": "child", "on_complete": "d"}}}, "d": F}}
    child = {"id": "child", "initial": "a", "states": {
        "a": {"on": {"GO": {"invoke": "parent", "on_complete": "d"}}}, "d": F}}
    leaf = {"id": "child", "initial": "a", "states": {"a": {"on": {"OK": "d"}}, "d": F}}

    assert validate(parent, resolver=lambda n: True).diagnostics == []
    r = validate(parent, resolver=lambda n: False)
    assert [(d.pointer, d.code) for d in r.errors] == [("/states/a/on/GO/invoke", "unknown-workflow")]
    r = validate(parent, resolver=lambda n: None)
    assert r.ok and [d.code for d in r.warnings] == ["invoke-unresolved"]

    def boom(n: str) -> bool:
        raise RuntimeError("resolver broke")

    assert validate(parent, resolver=boom).ok  # a broken resolver cannot break validation

    r = validate(parent, resolver=make_resolver(None, extra={"parent": parent, "child": child}))
    (d,) = r.errors
    assert (d.pointer, d.code) == ("/states/a/on/GO/invoke", "invoke-cycle")
    assert "parent -> child -> parent" in d.message
    assert validate(parent, resolver=make_resolver(None, extra={"child": leaf})).ok


def test_validate_accepts_paths_text_and_bytes(tmp_path) -> None:
    doc = REF["minimal.json"]
    p = tmp_path / "m.json"
    p.write_text(json.dumps(doc))
    for source in (doc, json.dumps(doc), json.dumps(doc).encode(), p, str(p)):
        r = validate(source)
        assert r.ok and r.compiled is not None and r.compiled.id == "review"
    assert validate(p).compiled.source_path == str(p.resolve())
    assert validate(str(tmp_path / "missing.json")).errors[0].code == "not-found"
    assert validate(tmp_path).errors[0].code == "not-a-file"


def test_non_json_python_objects_are_reported() -> None:
    doc = {"id": "t", "initial": "a", "states": {"a": {"type": "final"}}, "context": {"s": {1, 2}, 3: "x"}}
    result = validate(doc)
    assert {(d.pointer, d.code) for d in result.errors} == {("/context/s", "not-json"), ("/context", "not-json")}
    with pytest.raises(StatewrightError):
        compile_dict(doc)
