"""Error codes shared by every layer (DESIGN.md section 5).

`StatewrightError` is the one exception type front ends translate: the CLI prints
`error[CODE]: message` on one line, the proxy returns `{error: {code, message}, ...state}` with
`isError: true`, the hook turns it into a deny with the cause.
"""

from __future__ import annotations

from .lean import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

NO_ACTIVE_RUN = "NO_ACTIVE_RUN"
UNKNOWN_WORKFLOW = "UNKNOWN_WORKFLOW"
INVALID_WORKFLOW = "INVALID_WORKFLOW"
INVALID_TRANSITION = "INVALID_TRANSITION"
GUARD_REJECTED = "GUARD_REJECTED"
FINAL_STATE = "FINAL_STATE"
PENDING_APPROVAL = "PENDING_APPROVAL"
STALE_VERSION = "STALE_VERSION"
TOOL_DENIED = "TOOL_DENIED"
DEBUG_DISABLED = "DEBUG_DISABLED"
INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
DOWNSTREAM_ERROR = "DOWNSTREAM_ERROR"
# Not agent-facing codes of section 5, but needed by the CLI / store:
STORE_ERROR = "STORE_ERROR"  # damaged or foreign state.db, unwritable location
NO_PENDING_APPROVAL = "NO_PENDING_APPROVAL"
UNKNOWN_RUN = "UNKNOWN_RUN"
UNKNOWN_STATE = "UNKNOWN_STATE"
RUN_NOT_RUNNING = "RUN_NOT_RUNNING"
RUN_ACTIVE = "RUN_ACTIVE"  # a run governs the session already: a second cannot start


class StatewrightError(Exception):
    """A refusal or failure with a stable code and a message written for its reader."""

    def __init__(self, code: str, message: str, *, state: dict[str, Any] | None = None,
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.state = state  # the state answer, when there is a run to describe
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"error": {"code": self.code, "message": self.message}}
        if self.details:
            out["error"]["details"] = self.details
        if self.state:
            out.update(self.state)
        return out

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"
