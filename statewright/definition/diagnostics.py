"""Diagnostics: what validation says about a document. Stdlib only.

Every diagnostic carries an RFC 6901 JSON Pointer into the source document ("" is the root) and a
stable `code` (tests and tools key on it; the message is for people).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .compiled import CompiledWorkflow

ERROR = "error"
WARNING = "warning"


def escape_token(token: Any) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(*tokens: Any) -> str:
    """`pointer("states", "a/b", "on")` -> "/states/a~1b/on"."""
    return "".join("/" + escape_token(t) for t in tokens)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: str  # "error" | "warning"
    pointer: str  # RFC 6901 JSON Pointer; "" is the whole document
    message: str
    code: str

    def to_dict(self) -> dict[str, str]:
        return {"severity": self.severity, "pointer": self.pointer, "message": self.message,
                "code": self.code}

    def __str__(self) -> str:
        where = self.pointer or "(document)"
        return f"{self.severity}[{self.code}] {where}: {self.message}"


@dataclass(frozen=True, slots=True)
class ValidationResult:
    ok: bool
    diagnostics: list[Diagnostic] = field(default_factory=list)
    compiled: CompiledWorkflow | None = None
    source_path: str | None = None

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
