"""The proxy's side of checks and state timeouts (DESIGN section 2): `statewright_transition`
runs in a worker thread (the checks statewright runs may take minutes; the proxy keeps
answering meanwhile) and relays each check's progress as MCP progress notifications; serve
fires due state timeouts while no call comes, and follows the store's changes."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread

from .downstream import describe

log = logging.getLogger(__name__)


def identity(run: Any, wf: Any) -> tuple[Any, ...]:
    """What a session's tool list depends on, of its effective run."""
    return (run.run_id, run.state, run.status, run.version, wf.digest, wf.debug)


def fingerprint_of(rt: Any, session: str) -> tuple[Any, ...]:
    """What `session`'s tool list depends on (`identity`, or why there is no run)."""
    try:
        eff = rt.effective_run(session)
    except Exception as exc:
        return ("error", describe(exc))
    if eff is None:
        return ("none",)
    return identity(*eff)


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


async def fire_timeouts(rt: Any, quiet: bool = False) -> None:
    """Fire the state timeouts that are due (`Runtime.fire_due_timeouts`); never fails.
    `quiet`: no notice came since the last look (nothing is read before a known deadline)."""
    try:
        await anyio.to_thread.run_sync(rt.fire_due_timeouts, 500, quiet)
    except Exception as exc:
        log.debug("timeouts could not be fired: %s", exc)


async def follow_store(proxy: Any, interval: float) -> None:
    """Announce the state changes other processes make (`proxy.check_state_change`) and fire
    due timeouts, forever. On a project's SQLite file, the run's version is polled every
    `interval` (one small read); on a shared store, its notices are waited for instead
    (`store.pg_listen`: every transition, approval and new run is announced when committed,
    and a dropped listening connection counts as a change, so nothing is missed), and the
    store is read for timeouts only after a notice or once the earliest deadline has come."""
    try:
        from ..runtime.views import change_feed

        feed = await anyio.to_thread.run_sync(change_feed, proxy.rt)
    except Exception as exc:  # (the store unreachable now: polled, as a file would be)
        log.debug("no change feed: %s", exc)
        feed = None
    seen = feed.generation if feed is not None else 0
    while True:
        if feed is None:
            await anyio.sleep(interval)
        else:
            left = proxy.rt.seconds_to_next_timeout()
            now = await feed.wait_async(seen, interval if left is None else
                                        max(0.01, min(interval, left)))
            changed, seen = now != seen, now
        await fire_timeouts(proxy.rt, quiet=feed is not None and not changed)  # (no call came)
        if feed is not None and not changed:
            continue  # (a timeout fired here is announced by the store too)
        try:
            await proxy.check_state_change()
        except Exception as exc:
            log.debug("state poll failed: %s", exc)
