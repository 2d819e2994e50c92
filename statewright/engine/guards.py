"""Guard evaluation (DESIGN.md sections 2 and 3): pure and total.

A guard `{field, op, value}` reads a dotted path from the run's context and compares it with
`value`. Comparing values of incomparable types is false, never an exception. Equality is
JSON equality: `true` is not `1`, `1` equals `1.0`.
"""

from __future__ import annotations

from ..definition.compiled import CompiledWorkflow, Guard
from ..lean import TYPE_CHECKING, dumps

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return "<missing>"


MISSING: Any = _Missing()


def get_field(context: Any, dotted: str) -> Any:
    """Follow `a.b.c` through nested objects (and list indices); MISSING if any step is absent.

    A key may itself hold dots (an `allowed_commands` entry such as `./run.sh` under
    `_observed.commands`): when `a` is not a key, `a.b`, `a.b.c`, ... are tried in turn."""
    cur = context
    parts = dotted.split(".")
    i, n = 0, len(parts)
    while i < n:
        part = parts[i]
        i += 1
        if isinstance(cur, dict):
            while part not in cur and i < n:
                part += "." + parts[i]
                i += 1
            if part not in cur:
                return MISSING
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit():
            k = int(part)
            if k >= len(cur):
                return MISSING
            cur = cur[k]
        else:
            return MISSING
    return cur


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "other"


def json_equal(a: Any, b: Any) -> bool:
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        return False
    if ka == "array":
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if ka == "object":
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    try:
        return bool(a == b)
    except Exception:
        return False


def _order(a: Any, b: Any) -> int | None:
    """-1/0/1 for comparable numbers or strings, None for anything else."""
    ka, kb = _kind(a), _kind(b)
    if ka != kb or ka not in ("number", "string"):
        return None
    try:
        return -1 if a < b else (1 if a > b else 0)
    except Exception:
        return None


def check(op: str, seen: Any, value: Any) -> bool:
    """Apply one operator. `seen` may be MISSING (the field is absent)."""
    try:
        if op == "exists":
            return seen is not MISSING and seen is not None
        if op == "not_exists":
            return seen is MISSING or seen is None
        actual = None if seen is MISSING else seen
        if op == "eq":
            return json_equal(actual, value)
        if op == "neq":
            return not json_equal(actual, value)
        if op in ("gt", "gte", "lt", "lte"):
            o = _order(actual, value)
            if o is None:
                return False
            return {"gt": o > 0, "gte": o >= 0, "lt": o < 0, "lte": o <= 0}[op]
        if op == "in":
            if isinstance(value, (list, tuple)):
                return any(json_equal(actual, v) for v in value)
            if isinstance(value, str) and isinstance(actual, str):
                return actual in value
            return False
        if op == "contains":
            if isinstance(actual, (list, tuple)):
                return any(json_equal(v, value) for v in actual)
            if isinstance(actual, str) and isinstance(value, str):
                return value in actual
            if isinstance(actual, dict) and isinstance(value, str):
                return value in actual
            return False
    except Exception:
        return False
    return False  # unknown operator: fail closed


def _show(v: Any) -> str:
    if v is MISSING:
        return "nothing (the field is not set)"
    try:
        s = dumps(v, sort_keys=True, default=str)
    except Exception:
        s = repr(v)
    return s if len(s) <= 120 else s[:117] + "..."


def evaluate(compiled: CompiledWorkflow, name: str, context: dict[str, Any]) -> tuple[bool, str]:
    """(passes, explanation) for the named guard against `context`.

    An unknown guard name fails (the compiler rejects such workflows; this is the fail-closed
    backstop for a hand-built CompiledWorkflow)."""
    g: Guard | None = compiled.guards.get(name)
    if g is None:
        return False, f"guard '{name}' is not defined"
    seen = get_field(context, g.field)
    ok = check(g.op, seen, g.value)
    if g.op in ("exists", "not_exists"):
        expect = f"{g.field} {g.op}"
    else:
        expect = f"{g.field} {g.op} {_show(g.value)}"
    return ok, f"guard '{name}' ({expect}) saw {_show(seen)}"


def all_pass(compiled: CompiledWorkflow, names: Iterable[str],
             context: dict[str, Any]) -> tuple[bool, list[str]]:
    """True if every named guard passes; else False and an explanation per failed guard."""
    failed = []
    for n in names:
        g = compiled.guards.get(n)
        if g is not None and check(g.op, get_field(context, g.field), g.value):
            continue  # passing: no explanation needed
        failed.append(evaluate(compiled, n, context)[1])
    return not failed, failed
