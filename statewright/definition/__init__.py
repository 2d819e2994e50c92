"""Workflow definitions: load JSON -> schema check (jsonschema) -> typed model (pydantic) ->
semantic checks -> `CompiledWorkflow`. Every diagnostic carries an RFC 6901 JSON Pointer.

Public API (imported lazily, so `import statewright.definition.compiled` on the hook path never
pulls in pydantic or jsonschema):

- `compile_dict(doc, source_path=None, *, resolver=None) -> CompiledWorkflow`
  (alias `compile_workflow`); raises `StatewrightError(INVALID_WORKFLOW, ...)` listing every error;
- `load_path(path, *, resolver=None) -> CompiledWorkflow`;
- `validate(source, *, resolver=None) -> ValidationResult` — never raises;
- `Diagnostic`, `ValidationResult`, `load_schema()`;
- `discovery.list_workflows(config)`, `discovery.find_workflow(name, config)`,
  `discovery.make_resolver(config)`.

`resolver(name) -> bool | None` answers whether an invoked workflow exists (None: cannot tell,
a warning). If it also has `.invokes(name) -> list of ids`, invoke cycles across files are found.
"""

from __future__ import annotations

from .compiled import CompiledWorkflow

TYPE_CHECKING = False
if TYPE_CHECKING:  # what `__getattr__` below loads on first use
    from .diagnostics import Diagnostic, ValidationResult
    from .pipeline import compile_dict, load_path, validate
    from .pipeline import compile_dict as compile_workflow
    from .schema_check import load_schema

__all__ = [
    "CompiledWorkflow",
    "Diagnostic",
    "ValidationResult",
    "compile_dict",
    "compile_workflow",
    "load_path",
    "load_schema",
    "validate",
]

_LAZY = {
    "Diagnostic": ("diagnostics", "Diagnostic"),  # lazy: diagnostics.py builds dataclasses
    "ValidationResult": ("diagnostics", "ValidationResult"),
    "compile_dict": ("pipeline", "compile_dict"),
    "compile_workflow": ("pipeline", "compile_dict"),
    "load_path": ("pipeline", "load_path"),
    "validate": ("pipeline", "validate"),
    "load_schema": ("schema_check", "load_schema"),
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(f"{__name__}.{mod}"), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
