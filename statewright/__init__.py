"""statewright: keep coding agents on a declared path.

Kept empty on purpose: the hook imports `statewright.hook`, and everything imported here would be
paid on every tool call.
"""

__version__ = "0.1.0"
