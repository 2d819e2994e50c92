"""Diagnostics: what validation says about a document. Stdlib only.

Every diagnostic carries an RFC 6901 JSON Pointer into the source document ("" is the root) and a
stable `code` (tests and tools key on it; the message is for people).
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING, Record, set_field

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable
    from typing import Any

    from .compiled import CompiledWorkflow

ERROR = "error"
WARNING = "warning"


def escape_token(token: Any) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(*tokens: Any) -> str:
    """`pointer("states", "a/b", "on")` -> "/states/a~1b/on"."""
    return "".join("/" + escape_token(t) for t in tokens)


class Diagnostic(Record):
    """(a `lean.Record`, not a dataclass: `statewright list` answers without `dataclasses`)"""

    __slots__ = _fields = ("severity", "pointer", "message", "code")
    severity: str  # "error" | "warning"
    pointer: str  # RFC 6901 JSON Pointer; "" is the whole document
    message: str
    code: str

    def __init__(self, severity: str, pointer: str, message: str, code: str) -> None:
        set_field(self, "severity", severity)
        set_field(self, "pointer", pointer)
        set_field(self, "message", message)
        set_field(self, "code", code)

    def to_dict(self) -> dict[str, str]:
        return {"severity": self.severity, "pointer": self.pointer, "message": self.message,
                "code": self.code}

    def __str__(self) -> str:
        where = self.pointer or "(document)"
        return f"{self.severity}[{self.code}] {where}: {self.message}"


class ValidationResult(Record):
    __slots__ = _fields = ("ok", "diagnostics", "compiled", "source_path")
    ok: bool
    diagnostics: list[Diagnostic]
    compiled: CompiledWorkflow | None
    source_path: str | None

    def __init__(self, ok: bool, diagnostics: list[Diagnostic] | None = None,
                 compiled: CompiledWorkflow | None = None, source_path: str | None = None) -> None:
        set_field(self, "ok", ok)
        set_field(self, "diagnostics", [] if diagnostics is None else diagnostics)
        set_field(self, "compiled", compiled)
        set_field(self, "source_path", source_path)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == WARNING]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "path": self.source_path,
            "id": self.compiled.id if self.compiled is not None else None,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


def error(ptr: str, code: str, message: str) -> Diagnostic:
    return Diagnostic(ERROR, ptr, message, code)


def warning(ptr: str, code: str, message: str) -> Diagnostic:
    return Diagnostic(WARNING, ptr, message, code)


def format_errors(diags: Iterable[Diagnostic], source: str | None = None) -> str:
    """One line listing every error, for `StatewrightError(INVALID_WORKFLOW, ...)`."""
    errs = [d for d in diags if d.severity == ERROR]
    head = f"{source}: " if source else ""
    n = len(errs)
    body = "; ".join(f"{d.pointer or '(document)'}: {d.message} [{d.code}]" for d in errs)
    return f"{head}invalid workflow ({n} error{'s' if n != 1 else ''}): {body}"
