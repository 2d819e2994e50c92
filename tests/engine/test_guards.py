from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statewright.definition.compiled import CompiledWorkflow, Guard, State
from statewright.engine.guards import MISSING, check, evaluate, get_field


def test_dotted_fields_and_missing():
    ctx = {"review": {"score": 7, "tags": ["a"]}, "items": [{"x": 1}]}
    assert get_field(ctx, "review.score") == 7
    assert get_field(ctx, "items.0.x") == 1
    assert get_field(ctx, "review.nope") is MISSING
    assert get_field(ctx, "review.score.deeper") is MISSING
    assert get_field(ctx, "items.5") is MISSING


@pytest.mark.parametrize("op,seen,value,expected", [
    ("eq", "pass", "pass", True), ("eq", None, "pass", False), ("eq", 1, 1.0, True),
    ("eq", True, 1, False), ("eq", [1, {"a": 2}], [1, {"a": 2}], True),
    ("neq", "fail", "pass", True), ("neq", "pass", "pass", False), ("neq", True, 1, True),
    ("gt", 81, 80, True), ("gt", 80, 80, False), ("gte", 80, 80, True), ("lt", 4, 5, True),
    ("lte", 0, 0, True), ("gt", "b", "a", True),
    ("gt", "81", 80, False), ("lt", None, 5, False), ("gte", True, 0, False),
    ("gt", [1], 0, False), ("lt", {"a": 1}, 2, False), ("gt", math.nan, 1, False),
    ("in", "staging", ["staging", "prod"], True), ("in", "dev", ["staging", "prod"], False),
    ("in", 1, [True], False), ("in", "x", 5, False), ("in", "ag", "staging", True),
    ("contains", ["approved", "x"], "approved", True), ("contains", "hello", "ell", True),
    ("contains", {"k": 1}, "k", True), ("contains", 5, 5, False), ("contains", [1], "1", False),
    ("exists", "x", None, True), ("exists", None, None, False), ("exists", MISSING, None, False),
    ("exists", 0, None, True), ("exists", False, None, True),
    ("not_exists", MISSING, None, True), ("not_exists", None, None, True),
    ("not_exists", "", None, False),
    ("bogus", 1, 1, False),
])
def test_operators(op, seen, value, expected):
    assert check(op, seen, value) is expected


def _wf(guards: dict[str, Guard]) -> CompiledWorkflow:
    return CompiledWorkflow(id="g", initial="a", states={"a": State("a", final=True)}, guards=guards)


def test_evaluate_explains_what_it_saw():
    c = _wf({"ok": Guard("ok", "review.score", "gte", 8, True)})
    passes, why = evaluate(c, "ok", {"review": {"score": 7}})
    assert not passes and "review.score gte 8" in why and "saw 7" in why
    passes, why = evaluate(c, "ok", {})
    assert not passes and "not set" in why
    assert evaluate(c, "ok", {"review": {"score": 9}})[0]
    assert evaluate(c, "missing_guard", {})[0] is False  # fail closed


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(op=st.sampled_from(["eq", "neq", "gt", "gte", "lt", "lte", "in", "contains", "exists",
                           "not_exists", "xx"]),
       seen=json_values | st.just(MISSING), value=json_values)
def test_check_is_total(op, seen, value):
    assert check(op, seen, value) in (True, False)
