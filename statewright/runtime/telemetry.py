"""Decisions as OpenTelemetry spans (DESIGN section 5, "Teams"; optional extra
`statewright[otel]`).

Off unless `$STATEWRIGHT_OTEL` is `1` (or `$OTEL_EXPORTER_OTLP_ENDPOINT` is set) and
opentelemetry is installed; checked once per process, so a process that does not export pays
one attribute read per decision. Each decision is a span named `execute_tool {tool}` (the
GenAI semantic conventions' tool-call span: `gen_ai.operation.name`, `gen_ai.tool.name`,
`gen_ai.conversation.id` = the host session), with statewright's own attributes under
`statewright.*` (the decision, the rule, the front end). A refusal sets the span's status to
ERROR with `error.type` = `statewright.denied`. Tool arguments are never attributes: they may
hold secrets.

Spans go to the process's tracer provider. When none was set and
`$OTEL_EXPORTER_OTLP_ENDPOINT` is, one is made with the OTLP exporter if installed
(`opentelemetry-exporter-otlp`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..policy.types import Decision, ToolCall
    from .service import Runtime

ENV = "STATEWRIGHT_OTEL"
_TRACER: list[Any] = []  # [tracer or None] once looked up


def tracer() -> Any:
    if _TRACER:
        return _TRACER[0]
    found = None
    if os.environ.get(ENV) == "1" or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        try:
            from opentelemetry import trace
        except ImportError:
            trace = None  # type: ignore[assignment]
        if trace is not None:
            _otlp_provider(trace)
            found = trace.get_tracer("statewright")
    _TRACER.append(found)
    return found


def _otlp_provider(trace: Any) -> None:
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return
    if type(trace.get_tracer_provider()).__name__ != "ProxyTracerProvider":
        return  # (the process set its own)
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        return
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)


def decision_span(session: str, call: ToolCall, decision: Decision) -> None:
    """One span for one decision (never raises: telemetry never changes a decision)."""
    t = tracer()
    if t is None:
        return
    try:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.tool_name,
                 "gen_ai.conversation.id": session,
                 "statewright.decision": "allow" if decision.allowed else "deny",
                 "statewright.rule": decision.rule or "", "statewright.source": call.source}
        with t.start_as_current_span(f"execute_tool {call.tool_name}", kind=SpanKind.INTERNAL,
                                     attributes=attrs) as span:
            if not decision.allowed:
                span.set_attribute("error.type", "statewright.denied")
                span.set_status(Status(StatusCode.ERROR, decision.reason[:500]))
    except Exception:  # pragma: no cover - a broken exporter must not change a decision
        pass


def install(runtime_class: type[Runtime]) -> None:
    """Make every decision of this process a span: `Runtime.authorize`, wrapped once."""
    plain = runtime_class.authorize
    if getattr(plain, "_spans", False):
        return

    def authorize(self: Runtime, session: str | None, call: ToolCall) -> Decision:
        decision = plain(self, session, call)
        decision_span(self.resolve_session(session), call, decision)
        return decision

    authorize._spans = True  # type: ignore[attr-defined]
    runtime_class.authorize = authorize  # type: ignore[method-assign]
