"""A quick yes for the argument check of forwarded calls (`tools.check_arguments`).

Every forwarded `tools/call` is checked against the tool's input schema before `authorize`
(a malformed call must not count as an iteration). jsonschema's `is_valid` costs tens of
microseconds even for `{"message": "hi"}`; the schemas real servers publish are almost all
plain: an object of typed properties, some required, with enums of strings, number bounds,
arrays of such items. `plain_check(schema)` compiles such a schema into a predicate that says
True only when the arguments are certainly valid; False means "ask jsonschema", which then
decides and names the problems. So the predicate may be stricter than the schema (an integral
float for an `integer`, anything it does not know), never looser: a schema with any keyword
outside the subset gets no predicate at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

#: keywords that never make an instance invalid
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment",
                         "deprecated", "readOnly", "writeOnly"})
#: drafts in which the subset below means the same
DRAFTS = frozenset({"http://json-schema.org/draft-07/schema#",
                    "http://json-schema.org/draft-07/schema",
                    "http://json-schema.org/draft-06/schema#",
                    "http://json-schema.org/draft-04/schema#",
                    "https://json-schema.org/draft/2019-09/schema",
                    "https://json-schema.org/draft/2020-12/schema"})
_KNOWN = ANNOTATIONS | {"type", "enum", "properties", "required", "additionalProperties",
                        "items", "minItems", "maxItems", "minLength", "maxLength", "minimum",
                        "maximum"}


def _is_number(v: Any) -> bool:
    return type(v) is int or type(v) is float


#: exact Python types only: a bool is no number, an integral float is left to jsonschema
_TYPES: dict[str, Check] = {
    "string": lambda v: type(v) is str,
    "boolean": lambda v: type(v) is bool,
    "integer": lambda v: type(v) is int,
    "number": _is_number,
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "null": lambda v: v is None,
}


def plain_check(schema: Any) -> Check | None:
    """The predicate for a top-level input schema (an object schema), or None when the
    schema is not plain."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None
    draft = schema.get("$schema")
    if draft is not None and draft not in DRAFTS:
        return None
    return _compile({k: v for k, v in schema.items() if k != "$schema"}, 0)


def _compile(schema: Any, depth: int) -> Check | None:
    if not isinstance(schema, dict) or depth > 8 or not set(schema) <= _KNOWN:
        return None
    checks: list[Check] = []
    kind = schema.get("type")
    if kind is not None:
        if not isinstance(kind, str) or kind not in _TYPES:
            return None
        checks.append(_TYPES[kind])
    if "enum" in schema:
        enum = schema["enum"]
        if not isinstance(enum, list) or not all(type(e) is str for e in enum):
            return None
        allowed = frozenset(enum)
        checks.append(lambda v: type(v) is str and v in allowed)
    for part in (_bounds(schema), _object(schema, depth), _array(schema, depth)):
        if part is False:
            return None
        if part is not None:
            checks.append(part)  # type: ignore[arg-type]
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    return lambda v: all(c(v) for c in checks)


def _int(v: Any) -> bool:
    return type(v) is int and v >= 0


def _bounds(schema: dict[str, Any]) -> Check | bool | None:
    """Number and length bounds (each applies only to its own kind of value)."""
    lo, hi = schema.get("minimum"), schema.get("maximum")
    sizes = [schema.get(k) for k in ("minLength", "maxLength", "minItems", "maxItems")]
    if any(b is not None and not _is_number(b) for b in (lo, hi)):
        return False
    if any(s is not None and not _int(s) for s in sizes):
        return False
    if lo is None and hi is None and all(s is None for s in sizes):
        return None
    min_len, max_len, min_items, max_items = sizes

    def check(v: Any) -> bool:
        if _is_number(v):
            return (lo is None or v >= lo) and (hi is None or v <= hi)
        if type(v) is str:
            return ((min_len is None or len(v) >= min_len)
                    and (max_len is None or len(v) <= max_len))
        if type(v) is list:
            return ((min_items is None or len(v) >= min_items)
                    and (max_items is None or len(v) <= max_items))
        return True

    return check


def _object(schema: dict[str, Any], depth: int) -> Check | bool | None:
    props, required = schema.get("properties"), schema.get("required")
    extra = schema.get("additionalProperties", True)
    if props is None and required is None and "additionalProperties" not in schema:
        return None
    if not isinstance(props if props is not None else {}, dict) or not isinstance(extra, bool):
        return False
    if required is not None and not (isinstance(required, list)
                                     and all(type(r) is str for r in required)):
        return False
    checks: dict[str, Check] = {}
    for name, sub in (props or {}).items():
        c = _compile(sub, depth + 1)
        if c is None:
            return False
        checks[name] = c
    needed = tuple(required or ())

    def check(v: Any) -> bool:
        if type(v) is not dict:
            return True  # (properties and required apply to objects only)
        for r in needed:
            if r not in v:
                return False
        for k, item in v.items():
            c = checks.get(k)
            if c is None:
                if not extra:
                    return False
            elif not c(item):
                return False
        return True

    return check


def _array(schema: dict[str, Any], depth: int) -> Check | bool | None:
    if "items" not in schema:
        return None
    item = _compile(schema["items"], depth + 1)
    if item is None:
        return False  # (a list of schemas, or a schema that is not plain)
    return lambda v: type(v) is not list or all(item(x) for x in v)
