"""Property tests: validate never raises; the JSON Schema and the pydantic model agree."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from statewright.definition import validate
from statewright.definition.model import parse
from statewright.definition.schema_check import validator

from .corpus import MALFORMED, SEMANTIC, STRUCTURAL, example_docs, reference_docs

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=25,
)

# Documents shaped like workflows, so the later stages (model, semantics, compile) get exercised too.
names = st.sampled_from(["a", "b", "c", "done", "$return", "", "x y"])
transition = (names | st.fixed_dictionaries({"target": names}, optional={"guard": st.sampled_from(["g", "h"]),
                                                                             "requires_approval": st.booleans()})
              | st.lists(st.fixed_dictionaries({"target": names}, optional={"guard": st.sampled_from(["g", "h"])}), max_size=3)
              | st.fixed_dictionaries({"invoke": st.sampled_from(["child", "t"]), "on_complete": names}, optional={"on_fail": names})
              | st.fixed_dictionaries({"fork": st.fixed_dictionaries({
                  "branches": st.dictionaries(st.sampled_from(["x", "y"]), st.fixed_dictionaries({"initial": names, "terminal": names}), max_size=2),
                  "on_complete": names}, optional={"join": st.sampled_from(["all", "any", "some"])})})
              | json_values)
state = st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["final", "Final"]),
    "on": st.dictionaries(st.sampled_from(["GO", "DONE", "bad-event", "BACK"]), transition, max_size=3),
    "safe_next": names,
    "allowed_tools": st.lists(st.sampled_from(["Read", "Bash", "mcp__x__*", ""]), max_size=3),
    "allowed_commands": st.lists(st.sampled_from(["pytest", "npm test"]), max_size=2),
    "max_iterations": st.integers(-1, 3) | st.floats(0, 3),
    "blocked_env": st.lists(st.sampled_from(["AWS", "BAD-NAME"]), max_size=2),
    "deny_env": st.lists(st.sampled_from(["AWS"]), max_size=1),
})
workflowish = st.fixed_dictionaries(
    {"id": st.sampled_from(["t", "child", "-bad"]), "initial": names,
     "states": st.dictionaries(names, state, max_size=5)},
    optional={
        "guards": st.dictionaries(st.sampled_from(["g", "h", "u"]), st.fixed_dictionaries(
            {"field": st.sampled_from(["x", "a.b", "a..b"]),
             "op": st.sampled_from(["eq", "in", "gt", "exists", "nope"])},
            optional={"value": json_values}), max_size=3),
        "interrupts": st.dictionaries(st.sampled_from(["i"]), st.fixed_dictionaries(
            {"trigger": st.fixed_dictionaries({"file_pattern": st.sampled_from(["*.py", "/abs", ""])}), "target": names}), max_size=1),
        "meta": st.dictionaries(st.sampled_from(["debug", "approval_mode", "other"]), json_values, max_size=2),
        "model": json_values,
    },
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_result(result) -> None:
    assert isinstance(result.ok, bool)
    assert result.ok == (not result.errors)
    assert (result.compiled is not None) == result.ok
    for d in result.diagnostics:
        assert d.severity in ("error", "warning")
        assert d.pointer == "" or d.pointer.startswith("/")
        assert d.message and d.code


@SETTINGS
@given(json_values)
def test_validate_never_raises_on_arbitrary_json(doc) -> None:
    _check_result(validate(doc))


@SETTINGS
@given(st.text(max_size=200) | st.binary(max_size=200))
def test_validate_never_raises_on_arbitrary_text(text) -> None:
    if isinstance(text, str) and "\x00" in text:
        text = text.replace("\x00", "")
    _check_result(validate(text))


@SETTINGS
@given(workflowish)
def test_validate_never_raises_on_workflow_shaped_documents(doc) -> None:
    result = validate(doc)
    _check_result(result)
    if result.ok:  # a compiled workflow round-trips through stdlib json
        from statewright.definition.compiled import CompiledWorkflow
        data = json.loads(json.dumps(result.compiled.to_dict()))
        assert CompiledWorkflow.from_dict(data) == result.compiled


def test_validate_survives_deep_nesting() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    _check_result(validate(deep))
    nested: object = {}
    for _ in range(5000):
        nested = {"k": nested}
    _check_result(validate({"id": "t", "initial": "a", "states": {"a": {"type": "final"}}, "context": nested}))


def _schema_ok(doc) -> bool:
    return validator().is_valid(doc)


def _model_ok(doc) -> bool:
    try:
        parse(doc)
        return True
    except ValidationError:
        return False


_AGREEMENT = (
    [(f"example:{n}", d) for n, d in example_docs().items()]
    + [(f"reference:{n}", d) for n, d in reference_docs().items()]
    + [(f"structural:{c[0]}", c[1]) for c in STRUCTURAL]
    + [(f"semantic:{c[0]}", c[1]) for c in SEMANTIC]
    + [(f"malformed:{c[0]}", json.loads(c[1])) for c in MALFORMED if c[3] == "duplicate-key"]
)


@pytest.mark.parametrize("name,doc", _AGREEMENT, ids=[a[0] for a in _AGREEMENT])
def test_schema_and_model_agree_on_corpora(name: str, doc) -> None:
    expected = not name.startswith("structural:")
    assert _schema_ok(doc) is expected
    assert _model_ok(doc) is expected


@SETTINGS
@given(workflowish)
def test_schema_and_model_agree_on_generated_documents(doc) -> None:
    assert _schema_ok(doc) == _model_ok(doc)


def _plain_ok(doc) -> bool:
    from jsonschema import Draft202012Validator

    from statewright.definition.schema_check import load_schema
    return Draft202012Validator(load_schema()).is_valid(doc)


@pytest.mark.parametrize("name,doc", _AGREEMENT, ids=[a[0] for a in _AGREEMENT])
def test_fast_validator_matches_the_published_schema(name: str, doc) -> None:
    # schema_check inlines $refs and short-cuts the transition oneOf; same verdict as the plain schema
    assert _schema_ok(doc) == _plain_ok(doc)


@SETTINGS
@given(workflowish)
def test_fast_validator_matches_on_generated_documents(doc) -> None:
    assert _schema_ok(doc) == _plain_ok(doc)
