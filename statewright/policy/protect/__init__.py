"""Self-protection (DESIGN.md section 4, check 1): no call may write, move, delete or read
statewright's store, change a workflow file in use or the configuration that could switch
enforcement off, or run statewright's human-only CLI.

- `store`: what is protected (the store and its markers, the protected files) and the facts
  about them a decision needs;
- `files`: the path arguments of a tool call (Read, Edit, Glob's pattern, MCP paths);
- `line`: a shell line (names, globs, whole-tree commands, redirects), loaded with the shell
  analysis;
- `cli`: the human-only CLI, reached by any route from a shell line.

Only `store` and `files` are imported here: a decision on a tool call that is not a shell line
never loads the shell analysis.
"""

from __future__ import annotations

from .files import glob_violation, globs_among_paths, path_violation
from .store import (
    CONFIG_FILES,
    HOME_CONFIG_FILES,
    CtxFacts,
    StoreMarkers,
    ctx_facts,
    protected_paths,
    real_store,
    store_markers,
)

__all__ = ["CONFIG_FILES", "HOME_CONFIG_FILES", "CtxFacts", "StoreMarkers",
           "ctx_facts", "glob_violation", "globs_among_paths", "path_violation", "protected_paths",
           "real_store",
           "store_markers"]
