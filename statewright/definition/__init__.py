"""Workflow definitions: load JSON -> schema check (jsonschema) -> typed model (pydantic) ->
semantic checks -> `CompiledWorkflow`. Every diagnostic carries an RFC 6901 JSON Pointer.

Public API (imported lazily, so `import statewright.definition.compiled` on the hook path never
pulls in pydantic or jsonschema):

- `compile_dict(doc, source_path=None, *, resolver=None) -> CompiledWorkflow`; raises
  `StatewrightError(INVALID_WORKFLOW, ...)` listing every error;
- `load_path(path, *, resolver=None) -> CompiledWorkflow`;
- `validate(source, *, resolver=None) -> ValidationResult` — never raises;
- `Diagnostic`, `ValidationResult`, `load_schema()`;
- `discovery.list_workflows(config)`, `discovery.find_workflow(name, config)`,
  `discovery.make_resolver(config)`.

`resolver(name) -> bool | None` answers whether an invoked workflow exists (None: cannot tell,
a warning). If it also has `.invokes(name) -> list of ids`, invoke cycles across files are found.
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING, lazy_attributes
from .compiled import CompiledWorkflow

if TYPE_CHECKING:  # what `__getattr__` below loads on first use
    from .diagnostics import Diagnostic, ValidationResult
    from .pipeline import compile_dict, load_path, validate
    from .schema_check import load_schema

__all__ = [
    "CompiledWorkflow",
    "Diagnostic",
    "ValidationResult",
    "compile_dict",
    "load_path",
    "load_schema",
    "validate",
]

# lazy: the pipeline imports pydantic and jsonschema, diagnostics builds dataclasses
__getattr__ = lazy_attributes(__name__, {
    "Diagnostic": "diagnostics", "ValidationResult": "diagnostics", "compile_dict": "pipeline",
    "load_path": "pipeline", "validate": "pipeline", "load_schema": "schema_check",
})
