"""The runtime service shared by the hook, the proxy and the CLI: `Runtime` (DESIGN.md
section 1; docs/internals.md).

Import cost matters (the hook imports this on every tool call): only the stdlib, `engine.run`,
the store and `definition.compiled` are imported here; the state machine, the policy layer and
`statewright.definition` (pydantic) are imported when first needed.

Modules: `service` (the `Runtime` class), `chain` (whose rules apply), `persist` (writing
engine outcomes), `answer` (the state answer), `enforcement` (authorize / record /
fail_open), `messages` (what the agent is told).
"""

import os as _os

from .chain import DEFAULT_SESSION
from .service import Runtime, new_id

__all__ = ["DEFAULT_SESSION", "Runtime", "new_id"]

if _os.environ.get("STATEWRIGHT_OTEL") == "1" or _os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
    from .telemetry import install  # (decisions as spans: only a process that asks imports it)

    install(Runtime)
