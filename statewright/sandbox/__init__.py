"""Binding by the kernel (DESIGN section 4): the launcher a shell line runs under, per state.

The analysis of a line (`statewright.policy`) refuses early and explains; the kernel is the
guarantee for what the analysis cannot see: the code an allowed command runs (a test, a
`conftest.py`, a Makefile recipe, a package script) and the paths written by data (a patch, a
branch). The policy decides *what* a state protects (`Profile`); this package knows *how* a
machine enforces it:

- `Profile`: what every process of a sandboxed line may not do (plain data, built by the policy);
- `launcher.wrap(profile, line)`: the shell text that runs `line` under the profile, keeping the
  host's shell semantics (exit status, output, a `cd` that persists); the front ends put it into
  the rewritten call (`updatedInput`);
- `launcher.argv(profile)`: the launcher's argv prefix, for statewright's own processes
  (downstream MCP servers, checks);
- `probe.tier()`: what this machine enforces (`statewright doctor`);
- `scan`: what a sandboxed line changed, by effect (inode, size, ctime);
- `seatbelt`: the same profile as a macOS Seatbelt policy.

Stdlib only. The process hook imports `profile` and `launcher` (cheap: no ctypes, no subprocess).
"""

from __future__ import annotations

from .profile import Profile

__all__ = ["Profile"]
