"""The validation pipeline: JSON -> schema -> typed model -> semantic checks -> CompiledWorkflow.

`validate` never raises, whatever it is given; `compile_dict` / `load_path` raise one
`StatewrightError(INVALID_WORKFLOW, ...)` listing every error.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import INVALID_WORKFLOW, StatewrightError
from .compiled import CompiledWorkflow
from .diagnostics import ERROR, Diagnostic, ValidationResult, error, format_errors, pointer

Resolver = Callable[[str], "bool | None"]


class _Source:
    """A loaded source: the parsed document or the diagnostics that stopped it."""

    def __init__(self, doc: Any = None, path: str | None = None,
                 diags: list[Diagnostic] | None = None):
        self.doc = doc
        self.path = path
        self.diags = diags or []


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json_text(text: str | bytes) -> tuple[Any, list[Diagnostic]]:
    """Parse JSON text strictly: no NaN/Infinity, duplicate keys reported with their pointer."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            return None, [error("", "invalid-json",
                                f"not UTF-8 text: {exc.reason} at byte {exc.start}")]
    elif text.startswith("\ufeff"):
        text = text[1:]
    dups: list[tuple[int, str]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for k, v in items:
            if k in d:
                dups.append((id(d), k))
            d[k] = v
        return d

    try:
        doc = json.loads(text, object_pairs_hook=pairs, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        return None, [error("", "invalid-json",
                            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")]
    except ValueError as exc:
        return None, [error("", "invalid-json", f"invalid JSON: {exc}")]
    except RecursionError:
        return None, [error("", "invalid-json", "invalid JSON: nested too deeply")]
    diags: list[Diagnostic] = []
    if dups:
        where = _pointers_by_id(doc)
        for oid, key in dups:
            ptr = where.get(oid, "") + pointer(key)
            diags.append(error(ptr, "duplicate-key",
                               f"key {key!r} appears more than once in this object; JSON keeps "
                               "only the last"))
    return doc, diags


def _pointers_by_id(doc: Any) -> dict[int, str]:
    out: dict[int, str] = {}
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        node, ptr = stack.pop()
        if isinstance(node, dict):
            out[id(node)] = ptr
            stack.extend((v, ptr + pointer(k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, ptr + pointer(i)) for i, v in enumerate(node))
    return out


def json_data_problems(doc: Any, limit: int = 20) -> list[Diagnostic]:
    """For documents given as Python objects: everything must be plain JSON data."""
    out: list[Diagnostic] = []
    stack: list[tuple[Any, str, int]] = [(doc, "", 0)]
    while stack and len(out) < limit:
        node, ptr, depth = stack.pop()
        if depth > 200:
            out.append(error(ptr, "not-json", "nested too deeply"))
            continue
        if node is None or isinstance(node, (bool, int, str)):
            continue
        if isinstance(node, float):
            if not math.isfinite(node):
                out.append(error(ptr, "not-json", f"{node!r} is not a JSON number"))
            continue
        if isinstance(node, dict):
            for k, v in node.items():
                if not isinstance(k, str):
                    out.append(error(ptr, "not-json", f"object key {k!r} is not a string"))
                    continue
                stack.append((v, ptr + pointer(k), depth + 1))
            continue
        if isinstance(node, list):
            stack.extend((v, ptr + pointer(i), depth + 1) for i, v in enumerate(node))
            continue
        out.append(error(ptr, "not-json", f"a {type(node).__name__} is not JSON data"))
    return out


def read_source(source: Any) -> _Source:
    """dict / list / number ... : a document; str: JSON text if it starts with '{', else a path
    (or JSON text if no such file exists and it parses); bytes: JSON text; PathLike: a path."""
    if isinstance(source, (bytes, bytearray)):
        doc, diags = parse_json_text(bytes(source))
        return _Source(doc, None, diags)
    if isinstance(source, os.PathLike):
        return _read_file(Path(source))
    if isinstance(source, str):
        stripped = source.lstrip()
        if stripped.startswith("{"):
            doc, diags = parse_json_text(source)
            return _Source(doc, None, diags)
        if stripped and "\n" not in source and len(source) < 4096:
            p = Path(source)
            try:
                exists = p.exists()
            except (OSError, ValueError):
                exists = False
            if exists:
                return _read_file(p)
        doc, diags = parse_json_text(source)
        if diags and diags[0].code == "invalid-json" and "\n" not in source:
            return _Source(None, source, [error("", "not-found", f"no such file: {source}")])
        return _Source(doc, None, diags)
    return _Source(source, None, json_data_problems(source))


def _read_file(p: Path) -> _Source:
    shown = str(p)
    try:
        resolved = str(p.resolve())
    except (OSError, RuntimeError, ValueError):
        resolved = shown
    try:
        if p.is_dir():
            return _Source(None, resolved, [error("", "not-a-file",
                                                  f"{shown} is a directory, not a workflow file")])
        data = p.read_bytes()
    except FileNotFoundError:
        return _Source(None, resolved, [error("", "not-found", f"no such file: {shown}")])
    except (OSError, ValueError) as exc:
        why = getattr(exc, "strerror", None) or exc
        return _Source(None, resolved, [error("", "unreadable", f"cannot read {shown}: {why}")])
    doc, diags = parse_json_text(data)
    return _Source(doc, resolved, diags)


def _run(doc: Any, source_path: str | None, resolver: Resolver | None) -> ValidationResult:
    from . import schema_check

    diags = schema_check.check(doc)
    if diags:
        return ValidationResult(False, diags + _beside_schema_errors(doc, diags, resolver),
                                None, source_path)
    from pydantic import ValidationError

    from . import compiler, model, semantic

    try:
        m = model.parse(doc)
    except ValidationError as exc:  # the schema and the model disagree: fail closed, say where
        for e in exc.errors():
            diags.append(error(pointer(*[p for p in e["loc"] if not _is_union_tag(p)]), "model",
                               e["msg"]))
        return ValidationResult(False, diags, None, source_path)
    diags = semantic.check(m, doc, resolver)
    if any(d.severity == ERROR for d in diags):
        return ValidationResult(False, diags, None, source_path)
    compiled = compiler.build(m, doc, source_path)
    return ValidationResult(True, diags, compiled, source_path)


#: semantic checks whose answer depends on the whole graph: after parts were set aside they
#: could report what is only missing because it was set aside
_WHOLE_GRAPH = frozenset({"unreachable-state", "no-path-to-final", "no-final-state",
                          "fork-terminal-unreachable", "unused-guard", "invoke-cycle"})
_PLACEHOLDER_GUARD = {"field": "_", "op": "exists"}


def _beside_schema_errors(doc: Any, diags: list[Diagnostic],
                          resolver: Resolver | None) -> list[Diagnostic]:
    """The semantic problems of the parts of `doc` the schema found no fault with, so that one
    run of `validate` reports every problem at once (DESIGN section 2): each faulty part is set
    aside (a faulty state or guard kept as an empty one, so references to it still resolve),
    and the rest is checked. Checks that need the whole graph are left out; nothing is
    reported when what remains is still not of the schema's shape."""
    import copy

    from pydantic import ValidationError

    from . import model, schema_check, semantic

    pruned = copy.deepcopy(doc)
    if not isinstance(pruned, dict):
        return []
    for ptr in sorted({d.pointer for d in diags}, key=lambda p: -p.count("/")):
        parts = [t.replace("~1", "/").replace("~0", "~") for t in ptr.split("/")[1:]]
        if not parts or parts[0] not in ("states", "guards", "interrupts", "checks", "meta",
                                         "context") or len(parts) < 2:
            if len(parts) == 1 and parts[0] not in ("id", "initial", "states"):
                pruned.pop(parts[0], None)  # an unknown or malformed optional top-level field
                continue
            return []
        if len(parts) == 2 and parts[0] == "states":
            pruned["states"][parts[1]] = {}
            continue
        if len(parts) == 2 and parts[0] == "guards":
            pruned["guards"][parts[1]] = dict(_PLACEHOLDER_GUARD)
            continue
        owner: Any = pruned
        for t in parts[:-1]:
            nxt = owner.get(t)
            if not isinstance(nxt, dict):  # inside a list (a branch): set the whole list aside
                owner.pop(t, None)
                break
            owner = nxt
        else:
            owner.pop(parts[-1], None)
    if schema_check.check(pruned):
        return []
    try:
        m = model.parse(pruned)
    except ValidationError:
        return []
    return [d for d in semantic.check(m, pruned, resolver) if d.code not in _WHOLE_GRAPH]


def _is_union_tag(p: Any) -> bool:
    # pydantic puts union member names into `loc` (e.g. 'GuardedTransition', 'list[...]').
    return isinstance(p, str) and (p[:1].isupper() or "[" in p or p.startswith("function-"))


def validate(source: Any, *, resolver: Resolver | None = None,
             source_path: str | None = None) -> ValidationResult:
    """Validate a workflow given as a dict (or any JSON value), JSON text/bytes, or a path.

    Never raises: every problem, including unreadable input and internal failures, is a
    diagnostic. `resolver(name)` answers whether an invoked workflow exists (None: cannot tell).
    """
    try:
        src = read_source(source)
        path = source_path if source_path is not None else src.path
        if src.diags and any(d.code != "duplicate-key" for d in src.diags):
            return ValidationResult(False, list(src.diags), None, path)
        result = _run(src.doc, path, resolver)
        if src.diags:  # duplicate keys: an error, reported with the rest
            return ValidationResult(False, [*src.diags, *result.diagnostics], None, path)
        return result
    except RecursionError:
        return ValidationResult(False, [error("", "invalid-json", "document nested too deeply")],
                                None, None)
    except Exception as exc:  # never raise: an internal failure is still a (failed) result
        why = f"cannot validate: {type(exc).__name__}: {exc}"
        return ValidationResult(False, [error("", "internal", why)], None, None)


def compile_dict(doc: dict[str, Any], source_path: str | None = None, *,
                 resolver: Resolver | None = None) -> CompiledWorkflow:
    """Validate fully and compile; `StatewrightError(INVALID_WORKFLOW)` listing every error."""
    src = _Source(doc, source_path, json_data_problems(doc))
    if src.diags:
        raise StatewrightError(INVALID_WORKFLOW, format_errors(src.diags, source_path),
                               details={"diagnostics": [d.to_dict() for d in src.diags]})
    result = _run(doc, source_path, resolver)
    return _compiled_or_raise(result, source_path)


def load_path(path: str | os.PathLike[str], *,
              resolver: Resolver | None = None) -> CompiledWorkflow:
    """Load, validate and compile a workflow file; errors are one `INVALID_WORKFLOW` line."""
    p = Path(path)
    result = validate(p, resolver=resolver)
    return _compiled_or_raise(result, str(p))


def _compiled_or_raise(result: ValidationResult, source: str | None) -> CompiledWorkflow:
    if result.ok and result.compiled is not None:
        return result.compiled
    raise StatewrightError(INVALID_WORKFLOW, format_errors(result.diagnostics, source),
                           details={"diagnostics": [d.to_dict() for d in result.diagnostics]})
