"""Stage 1: the published JSON Schema (draft 2020-12), every error mapped to a pointer and a
message a newcomer can act on.

jsonschema's own messages are precise but noisy (`oneOf` failures dump every alternative); here
each error becomes one `Diagnostic`, and for a transition that matches none of the five forms the
form the author evidently meant (by JSON type and discriminating key) is picked and only its
errors are reported.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match

from ..config import schema_path
from .diagnostics import Diagnostic, error, pointer

_TYPE_NAMES = {
    "object": "an object", "array": "a list", "string": "a string", "number": "a number",
    "integer": "an integer", "boolean": "true or false", "null": "null",
}

ID_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.-]*$"
EVENT_PATTERN = "^[A-Za-z][A-Za-z0-9_]*$"
ENV_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*$"
STATE_NAME_PATTERN = "^[^$]"
FIELD_PATTERN = "^[^.]+(\\.[^.]+)*$"
CHECK_PATTERN = "^[A-Za-z_][A-Za-z0-9_-]*$"

_PATTERN_HELP = {
    ID_PATTERN: "must start with a letter or digit and contain only letters, digits, '_', '.' "
                "and '-'",
    EVENT_PATTERN: "event names start with a letter and contain only letters, digits and '_'",
    ENV_PATTERN: "is not a valid environment variable name (letters, digits and '_', not "
                 "starting with a digit)",
    STATE_NAME_PATTERN: "state names may not start with '$' (\"$return\" is a reserved target)",
    CHECK_PATTERN: "check names start with a letter or '_' and contain only letters, digits, "
                   "'_' and '-' (a guard reads `_checks.<name>`)",
    FIELD_PATTERN: "must be a context field name or a dotted path without empty parts (e.g. "
                   "\"review.score\")",
}

# The five transition forms, in the order of the schema's `oneOf`.
_FORMS = ("simple", "guarded", "branched", "invoke", "fork")


@lru_cache(maxsize=1)
def load_schema() -> dict[str, Any]:
    with open(schema_path(), encoding="utf-8") as fh:
        return json.load(fh)


def _inline_refs(schema: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The schema with every local `$ref` replaced by its target (the schema has no recursion).

    Resolving references is most of jsonschema's time on big documents; inlining them once keeps
    a 500-state workflow well under a second. Returns (inlined schema, inlined $defs by name).
    """
    defs = schema.get("$defs", {})
    memo: dict[str, Any] = {}

    def deref(name: str, depth: int) -> Any:
        if name not in memo:
            memo[name] = walk(defs[name], depth + 1)
        return memo[name]

    def walk(node: Any, depth: int = 0) -> Any:
        if depth > 64:
            raise ValueError("schema $ref nesting too deep")
        if isinstance(node, list):
            return [walk(v, depth) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and "/" not in ref[8:]:
            target = deref(ref[8:], depth)
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if not siblings:
                return target  # shared object: errors can be recognised by identity
            return {**target, **{k: walk(v, depth) for k, v in siblings.items()}}
        return {k: (v if k == "$defs" else walk(v, depth)) for k, v in node.items()}

    inlined = walk(schema)
    inlined.pop("$defs", None)
    return inlined, {n: deref(n, 0) for n in defs}


@lru_cache(maxsize=1)
def _compiled_schema() -> tuple[Draft202012Validator, dict[str, Any]]:
    # (the published schema is checked against the 2020-12 meta-schema by the tests, not on
    # every start: that check alone cost `list` and `validate` a third of their time)
    schema = load_schema()
    inlined, defs = _inline_refs(schema)
    transition_forms = defs["transition"]["oneOf"]
    generic_one_of = Draft202012Validator.VALIDATORS["oneOf"]

    def one_of(validator: Any, subschemas: Any, instance: Any,
               schema: Any) -> Iterator[ValidationError]:
        # The five transition forms exclude each other by JSON type and by their required keys
        # (with additionalProperties false), so only the form the author meant can match:
        # validate against that one alone. Same verdict as `oneOf`, a fifth of the work.
        idx = _intended_form(instance) if subschemas is transition_forms else None
        if idx is None:
            yield from generic_one_of(validator, subschemas, instance, schema)
            return
        errs = list(validator.descend(instance, subschemas[idx], schema_path=idx))
        if errs:
            yield ValidationError(f"{instance!r} is not valid under any of the given schemas",
                                  context=errs)

    cls = validators.extend(Draft202012Validator, {"oneOf": one_of})
    return cls(inlined), defs


def validator() -> Draft202012Validator:
    return _compiled_schema()[0]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _show(value: Any, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _in_property_names(err: ValidationError) -> bool:
    return "propertyNames" in err.absolute_schema_path


def _intended_form(instance: Any) -> int | None:
    if isinstance(instance, str):
        return 0
    if isinstance(instance, list):
        return 2
    if isinstance(instance, dict):
        if "fork" in instance:
            return 4
        if "invoke" in instance:
            return 3
        return 1
    return None


def _is_transition_oneof(err: ValidationError) -> bool:
    return err.validator == "oneOf" and err.schema is _compiled_schema()[1]["transition"]


def _map(err: ValidationError) -> Iterator[Diagnostic]:
    """One jsonschema error as the diagnostics a person can act on."""
    path = list(err.absolute_path)
    ptr = pointer(*path)
    v = err.validator
    if _in_property_names(err):
        yield _bad_name(err, path)
    elif _is_transition_oneof(err):
        yield from _map_transition(err, ptr)
    elif v in ("oneOf", "anyOf"):
        best = best_match(err.context or ())
        if best is not None:
            yield from _map(best)
        else:
            yield error(ptr, "schema", err.message)
    elif v == "additionalProperties" and isinstance(err.instance, dict):
        yield from _unknown_fields(err, path)
    elif v == "required":
        for name in _value(err):
            if isinstance(err.instance, dict) and name not in err.instance:
                yield error(ptr, "missing-field", f"missing required field {name!r}")
    else:
        yield _map_value(err, ptr)


def _value(err: ValidationError) -> Any:
    """The keyword's value in the schema (typed `Any | Unset` by the stubs; always set for an
    error the validator raised)."""
    return err.validator_value


def _schema(err: ValidationError) -> dict[str, Any]:
    schema = err.schema
    return schema if isinstance(schema, dict) else {}


def _bad_name(err: ValidationError, path: list[Any]) -> Diagnostic:
    """A key refused by `propertyNames`: the instance is the key; point at the key itself."""
    key = str(err.instance)
    pat = _value(err) if err.validator == "pattern" else None
    if key.startswith("BRANCH_DONE:") and path and path[-1] == "on":
        msg = (f"event name {key!r} is reserved: BRANCH_DONE:<branch> is sent by the engine "
               "for forks")
    elif pat in _PATTERN_HELP:
        msg = f"name {key!r}: {_PATTERN_HELP[pat]}"
    else:
        msg = f"name {key!r} is not allowed here"
    return error(pointer(*path, key), "bad-name", msg)


def _map_transition(err: ValidationError, ptr: str) -> Iterator[Diagnostic]:
    """A transition matching none of its forms: the errors of the form it was meant to be."""
    inst = err.instance
    idx = _intended_form(inst)
    if idx is None:
        got = _TYPE_NAMES.get(_json_type(inst), _json_type(inst))
        yield error(ptr, "wrong-type",
                    "a transition must be a target state name, an object (guarded, invoke or "
                    f"fork) or a list of branches; got {got}")
        return
    subs = [e for e in err.context or ()
            if e.relative_schema_path and e.relative_schema_path[0] == idx]
    if not subs:  # e.g. matched more than one form; cannot happen with this schema
        yield error(ptr, "invalid-transition", f"not a valid {_FORMS[idx]} transition")
        return
    for sub in subs:
        yield from _map(sub)


def _unknown_fields(err: ValidationError, path: list[Any]) -> Iterator[Diagnostic]:
    known = list((_schema(err).get("properties") or {}).keys())
    instance: Any = err.instance  # (an object: the caller checked)
    for key in instance:
        if key in known:
            continue
        hint = difflib.get_close_matches(key, known, n=1, cutoff=0.7)
        extra = f" (did you mean {hint[0]!r}?)" if hint else ""
        allowed = ", ".join(k for k in known if not k.startswith("$")) or "none"
        yield error(pointer(*path, key), "unknown-field",
                    f"unknown field {key!r}{extra}; allowed here: {allowed}")


_EMPTY = {"minLength": "an empty string", "minItems": "an empty list",
          "minProperties": "an empty object"}


def _map_value(err: ValidationError, ptr: str) -> Diagnostic:
    """A value of the wrong type, outside its enum or bounds, or not of its format."""
    v = err.validator
    inst = err.instance
    if v == "type":
        want = _value(err)
        wants = want if isinstance(want, list) else [want]
        names = " or ".join(_TYPE_NAMES.get(w, str(w)) for w in wants)
        got = _json_type(inst)
        extra = " (a whole number)" if "integer" in wants and isinstance(inst, float) else ""
        return error(ptr, "wrong-type",
                     f"must be {names}{extra}; got {_TYPE_NAMES.get(got, got)} {_show(inst)}")
    if v == "enum":
        options = ", ".join(_show(o) for o in _value(err))
        return error(ptr, "invalid-value", f"must be one of {options}; got {_show(inst)}")
    if v == "const":
        return error(ptr, "invalid-value",
                     f"must be {_show(_value(err))}; got {_show(inst)}")
    if v == "minimum":
        return error(ptr, "too-small", f"must be >= {_value(err)}; got {_show(inst)}")
    if v in _EMPTY:
        return error(ptr, "empty", f"must not be {_EMPTY[v]}")
    if v == "pattern":
        help_ = _PATTERN_HELP.get(_value(err),
                                  f"must match the pattern {_value(err)}")
        return error(ptr, "bad-format", f"{_show(inst)} {help_}" if help_.startswith("is ")
                     else f"{help_}; got {_show(inst)}")
    return error(ptr, "schema", err.message)


def check(doc: Any) -> list[Diagnostic]:
    """Every schema error of `doc`, mapped. An empty list means structurally valid."""
    out: list[Diagnostic] = []
    seen: set[tuple[str, str, str]] = set()
    for err in validator().iter_errors(doc):
        for d in _map(err):
            key = (d.pointer, d.code, d.message)
            if key not in seen:
                seen.add(key)
                out.append(d)
    return out
