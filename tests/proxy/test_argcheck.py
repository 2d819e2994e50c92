"""The quick yes of the argument check (`proxy.argcheck`): never a yes where jsonschema says no,
and a yes for the plain schemas real servers publish."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from statewright.proxy.argcheck import plain_check
from statewright.proxy.tools import check_arguments

KEYS = ["a", "b", "path", "n"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from([0.0, 1.0, 2.5, -1.5])
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner,
                                                                max_size=3),
    max_leaves=8)

TYPES = ["string", "boolean", "integer", "number", "object", "array", "null"]


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    extras = st.fixed_dictionaries({}, optional={
        "description": st.text(max_size=3), "default": json_values,
        "enum": st.lists(st.text(max_size=2), min_size=1, max_size=3)
        | st.lists(st.integers(0, 2), min_size=1, max_size=2),
        "minimum": st.integers(-2, 2) | st.sampled_from([0.5, True]),
        "maximum": st.integers(-2, 3),
        "minLength": st.integers(0, 2), "maxLength": st.integers(0, 3),
        "minItems": st.integers(0, 2), "maxItems": st.integers(0, 3),
        # keywords outside the subset: the schema then gets no quick yes at all
        "pattern": st.just("^a"), "exclusiveMinimum": st.integers(0, 1),
        "const": json_values, "format": st.just("uri"), "multipleOf": st.just(2),
    })
    return st.builds(lambda t, e: {**({"type": t} if t else {}), **e},
                     st.sampled_from([*TYPES, None]), extras)


schemas = st.recursive(
    _leaf(),
    lambda inner: st.builds(
        lambda props, req, extra, t, items: {
            **({"type": t} if t else {}), "properties": props,
            **({"required": req} if req is not None else {}),
            **({"additionalProperties": extra} if extra is not None else {}),
            **({"items": items} if items is not None else {})},
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
        st.none() | st.lists(st.sampled_from(KEYS), max_size=2, unique=True),
        st.none() | st.booleans(), st.sampled_from(["object", None]), st.none() | inner),
    max_leaves=6)

DRAFTS = [None, "http://json-schema.org/draft-07/schema#",
          "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-04/schema#"]


@settings(max_examples=400, deadline=None)
@given(schemas, st.sampled_from(DRAFTS), st.dictionaries(st.sampled_from(KEYS), json_values,
                                                         max_size=4))
def test_a_quick_yes_is_always_a_yes_of_jsonschema(body, draft, args) -> None:
    schema = {**body, "type": "object", **({"$schema": draft} if draft else {})}
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        return  # (check_arguments checks nothing against a schema that is not one)
    quick = plain_check(schema)
    if quick is not None and quick(args):
        assert cls(schema).is_valid(args), (schema, args)
    # and the check as the proxy runs it agrees with jsonschema either way
    assert (check_arguments(schema, args) == []) == cls(schema).is_valid(args)


def test_the_schemas_of_real_servers_are_plain() -> None:
    d7 = "http://json-schema.org/draft-07/schema#"
    echo = {"$schema": d7, "type": "object", "required": ["message"],
            "properties": {"message": {"type": "string", "description": "Message to echo"}}}
    read = {"$schema": d7, "type": "object", "required": ["path"], "properties": {
        "path": {"type": "string"},
        "tail": {"description": "last N lines", "type": "number"},
        "head": {"type": "number"}}}
    many = {"$schema": d7, "type": "object", "required": ["paths"], "properties": {
        "paths": {"minItems": 1, "type": "array", "items": {"type": "string"}}}}
    sized = {"$schema": d7, "type": "object", "properties": {
        "count": {"default": 3, "type": "number", "minimum": 1, "maximum": 10},
        "sortBy": {"default": "name", "type": "string", "enum": ["name", "size"]}}}
    edit = {"$schema": d7, "type": "object", "required": ["path", "edits"], "properties": {
        "path": {"type": "string"}, "dryRun": {"default": False, "type": "boolean"},
        "edits": {"type": "array", "items": {
            "type": "object", "required": ["oldText", "newText"], "additionalProperties": False,
            "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}}}}}}
    cases = [
        (echo, {"message": "hi"}, True), (echo, {}, False), (echo, {"message": 3}, False),
        (read, {"path": "a", "head": 2}, True), (read, {"path": "a", "head": True}, False),
        (many, {"paths": ["a", "b"]}, True), (many, {"paths": []}, False),
        (many, {"paths": ["a", 1]}, False),
        (sized, {"count": 4, "sortBy": "size"}, True), (sized, {"count": 11}, False),
        (sized, {"sortBy": "date"}, False),
        (edit, {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}, True),
        (edit, {"path": "a", "edits": [{"oldText": "x", "newText": "y", "z": 1}]}, False),
    ]
    for schema, args, valid in cases:
        quick = plain_check(schema)
        assert quick is not None, schema
        assert quick(args) is valid, (schema, args)
        assert (check_arguments(schema, args) == []) is valid, (schema, args)


def test_schemas_outside_the_subset_get_no_quick_yes() -> None:
    for schema in ({"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
                   {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}},
                   {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
                   {"type": "object", "properties": {"a": {"enum": [1, True]}}},
                   {"type": "object", "additionalProperties": {"type": "string"}},
                   {"$schema": "http://json-schema.org/draft-03/schema#", "type": "object"},
                   {"type": "array"}):
        assert plain_check(schema) is None, schema
