"""The proxy's side of checks and state timeouts (DESIGN section 2): `statewright_transition`
runs in a worker thread (the checks statewright runs may take minutes; the proxy keeps
answering meanwhile) and relays each check's progress as MCP progress notifications; serve
fires due state timeouts while no call comes."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread

log = logging.getLogger(__name__)


async def transition(rt: Any, session: str, args: dict[str, Any],
                     progress: Any) -> dict[str, Any]:
    """`Runtime.transition` for `statewright_transition`; each check's progress goes to
    `progress(elapsed_s, timeout_s, message)` when the caller asked for it."""
    report = None
    if progress is not None:
        def report(check: str, elapsed: float, total: float, line: str) -> None:
            message = f"check {check}: {elapsed:.0f} s" + (f" | {line}" if line else "")
            anyio.from_thread.run_sync(progress, round(elapsed, 1), total, message)

    return await anyio.to_thread.run_sync(
        lambda: rt.transition(session, args["event"], data=args.get("data"),
                              expected_version=args.get("expected_version"), actor="agent",
                              progress=report))


async def fire_timeouts(rt: Any) -> None:
    """Fire the state timeouts that are due (`Runtime.fire_due_timeouts`); never fails."""
    try:
        await anyio.to_thread.run_sync(rt.fire_due_timeouts)
    except Exception as exc:
        log.debug("timeouts could not be fired: %s", exc)
