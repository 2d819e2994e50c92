"""The runtime service shared by the hook, the proxy and the CLI (docs/internals.md).

Import cost matters (the hook imports this on every tool call): only the stdlib, the engine,
the store and `definition.compiled` are imported here; `statewright.definition` (pydantic) is
imported lazily when a workflow file has to be compiled.
"""

from .service import DEFAULT_SESSION, Runtime, new_id

__all__ = ["DEFAULT_SESSION", "Runtime", "new_id"]
