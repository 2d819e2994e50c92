"""Pure enforcement (DESIGN.md section 4): `gate(state, counters, call, ctx) -> Decision`.

Submodules: `tools` (tool-name matching), `shell` (tree-sitter-bash analysis, imported lazily),
`edits` (lines per edit op), `paths` (glob semantics), `protect` (self-protection).
"""

from __future__ import annotations

from .gate import gate
from .types import Counters, Decision, GateContext, ToolCall, ToolResult

__all__ = ["Counters", "Decision", "GateContext", "ToolCall", "ToolResult", "gate"]
