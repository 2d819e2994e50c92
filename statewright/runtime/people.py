"""Who acts on a store that a team shares: tokens and the roles they carry (DESIGN section 5,
"Teams").

A token is 256 random bits, printed once by `statewright token create` and stored only as its
SHA-256. Its role says what it may do: `approver` decides parked transitions, `admin` also
makes and revokes tokens, `agent` identifies an agent to a shared proxy (`serve --http`) and
decides nothing. Its subject (a person's name) is what history and the approval record name as
the one who decided. The first admin token of a store is made without one; every later token
needs an admin's.

On a PostgreSQL store, approving or rejecting needs an approver's (or admin's) token; on a
project's own SQLite file a token is optional (given, it names the approver). The agent never
decides: no agent-facing route approves (DESIGN section 3), an agent token's role cannot, and
the approval's record refuses a decider who is its requester.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from ..errors import INVALID_ARGUMENTS, TOOL_DENIED, StatewrightError
from ..lean import sha256

if TYPE_CHECKING:  # pragma: no cover
    from .surface import Runtime

ROLES = ("agent", "approver", "admin")
DECIDING_ROLES = frozenset({"approver", "admin"})
TOKEN_ENV = "STATEWRIGHT_TOKEN"
TOKEN_PREFIX = "swt_"
#: what approval records name an agent as (never a person's subject: those may not start so)
AGENT_PREFIX = "agent:"
MAX_SUBJECT = 80


def token_hash(raw: str) -> str:
    return str(sha256(raw.strip().encode("utf-8", "surrogateescape")).hexdigest())


def _check_subject(subject: str, role: str) -> str:
    subject = subject.strip() if isinstance(subject, str) else ""
    problems = []
    if not subject or len(subject) > MAX_SUBJECT or any(c.isspace() and c != " " for c in subject):
        problems.append(f"--name must be a name of 1 to {MAX_SUBJECT} characters on one line")
    if role != "agent" and subject.lower().startswith(AGENT_PREFIX):
        problems.append(f"a person's name may not start with {AGENT_PREFIX!r} (agents are "
                        "named so)")
    if role not in ROLES:
        problems.append(f"--role must be one of {', '.join(ROLES)}")
    if problems:
        raise StatewrightError(INVALID_ARGUMENTS, "; ".join(problems))
    return subject


def identify(rt: Runtime, raw: str) -> tuple[str, str]:
    """(subject, role) of a live token; TOOL_DENIED for an unknown or revoked one."""
    with rt.store.read() as tx:
        found = tx.token(token_hash(raw))
    if found is None:
        raise StatewrightError(TOOL_DENIED, "the token is unknown or revoked "
                               "(`statewright token list` shows the live ones)")
    return found


def create_token(rt: Runtime, role: str, subject: str,
                 admin_token: str | None) -> dict[str, Any]:
    """Make a token; its raw value is in the answer and nowhere else."""
    subject = _check_subject(subject, role)
    by = None
    if admin_token:
        by, by_role = identify(rt, admin_token)
        if by_role != "admin":
            raise StatewrightError(TOOL_DENIED, f"{by}'s token is an {by_role}'s: only an "
                                   "admin's token makes tokens")
    raw = TOKEN_PREFIX + os.urandom(32).hex()
    with rt.store.transaction() as tx:
        if by is None and any(t["role"] == "admin" and t["revoked_at"] is None
                              for t in tx.tokens()):
            raise StatewrightError(TOOL_DENIED, "this store has an admin: making a token needs "
                                   f"an admin's token (--token or ${TOKEN_ENV})")
        h = token_hash(raw)
        tx.put_token(h, subject, role, time.time(), by)
    return {"token": raw, "id": h[:12], "subject": subject, "role": role, "created_by": by}


def list_tokens(rt: Runtime) -> list[dict[str, Any]]:
    if not rt.has_store():
        return []
    with rt.store.read() as tx:
        return list(tx.tokens())


def revoke_token(rt: Runtime, token_id: str, admin_token: str | None) -> int:
    if not admin_token:
        raise StatewrightError(TOOL_DENIED, f"revoking a token needs an admin's token (--token "
                               f"or ${TOKEN_ENV})")
    by, role = identify(rt, admin_token)
    if role != "admin":
        raise StatewrightError(TOOL_DENIED, f"{by}'s token is an {role}'s: only an admin's "
                               "token revokes tokens")
    if len(token_id) < 8:
        raise StatewrightError(INVALID_ARGUMENTS, "name the token by its id (at least 8 of the "
                               "characters `statewright token list` shows)")
    with rt.store.transaction() as tx:
        n = tx.revoke_token(token_id, time.time())
    if n == 0:
        raise StatewrightError(INVALID_ARGUMENTS, f"no live token with id {token_id}")
    return int(n)


def named(rt: Runtime, tx: Any, run: Any, out: Any, approver: str | None) -> Any:
    """The engine's outcome of a decision on `run`'s pending approval, its history rows
    naming `approver`. Refused: no approver on a shared store (where every decision names
    one: the CLI's and the page's alike), an approver who is the one who asked."""
    if approver is None and rt.store_url is not None:
        raise StatewrightError(TOOL_DENIED, "on a shared store a decision names its approver: "
                               f"pass an approver's token (--token or ${TOKEN_ENV})")
    pending = run.pending_approval
    if approver is None or pending is None:
        return out
    asked = (tx.approval(pending.approval_id) or {}).get("requested_by")
    if asked is not None and asked in (approver, AGENT_PREFIX + approver):
        # (the second: a shared proxy's caller, whose token's subject was the session that
        # asked: `proxy.bearer`)
        raise StatewrightError(TOOL_DENIED, f"{approver} asked for this approval and cannot "
                               "decide it")
    from dataclasses import replace

    return replace(out, events=tuple(
        replace(ev, data={**ev.data, "approver": approver})
        if ev.data.get("approval_id") == pending.approval_id else ev for ev in out.events))


def record_approver(tx: Any, run: Any, approver: str | None) -> None:
    """After the decision is written: the approval's record names the approver (the database
    refuses one who is its requester)."""
    if approver is not None and run.pending_approval is not None:
        tx.set_approver(run.pending_approval.approval_id, approver)


def approver(rt: Runtime, raw: str | None) -> str | None:
    """Who decides, from the token given (`--token`, else `$STATEWRIGHT_TOKEN`): its subject;
    None on a project's own store without a token. Refused: a shared store without a token,
    an unknown or revoked token, an agent's token."""
    raw = raw or os.environ.get(TOKEN_ENV) or None
    if raw is None:
        if rt.store_url is not None:
            raise StatewrightError(
                TOOL_DENIED, "on a shared store a decision needs an approver's token: an admin "
                "makes one with `statewright token create --role approver --name NAME`; pass it "
                f"with --token or ${TOKEN_ENV}")
        return None
    subject, role = identify(rt, raw)
    if role not in DECIDING_ROLES:
        raise StatewrightError(TOOL_DENIED, f"{subject}'s token is an {role}'s: only an "
                               "approver or an admin decides parked transitions")
    return subject
