"""What the agent reads when a session starts, a prompt arrives or it wants to stop: the
briefing on its running run, and the Stop hook's reminder (`Runtime.briefing`,
`Runtime.stop_reminder`)."""

from __future__ import annotations

from ..errors import StatewrightError
from ..lean import TYPE_CHECKING
from .chain import effective_in
from .enforcement import STOP_REMINDERS_PER_STATE, enforced_state
from .messages import briefing
from .messages import stop_text as _stop_text

if TYPE_CHECKING:  # pragma: no cover
    from .surface import Runtime


def stop_reminder(rt: Runtime, session: str) -> str | None:
    """Stop hook: in a running, non-final state, the reminder to give (counted, at most
    STOP_REMINDERS_PER_STATE per state); None when the agent may stop."""
    if not rt.has_store():
        return None
    with rt.store.transaction() as tx:
        eff = effective_in(tx, session)
        if eff is None:
            return None
        run, wf = eff
        state = enforced_state(run, wf)
        if state is None or run.stop_reminders >= STOP_REMINDERS_PER_STATE:
            return None
        tx.save_with_events(run, run.with_(stop_reminders=run.stop_reminders + 1), ())
    return _stop_text(wf.id, run, state)


def current_briefing(rt: Runtime, session: str) -> str | None:
    """SessionStart / UserPromptSubmit: the briefing on the session's running run, else None."""
    if rt.effective_run(session) is None:
        return None
    try:
        answer = rt.get_state(session)
    except StatewrightError as exc:
        from ..errors import NO_ACTIVE_RUN

        if exc.code == NO_ACTIVE_RUN:
            return None
        raise
    if answer.get("status") not in (None, "running"):
        return None
    return briefing(answer)
