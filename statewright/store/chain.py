"""The hash chain of a run's history (tamper evidence; both stores write it, `statewright audit
verify` checks it offline). Stdlib only: the hook appends history rows.

Each history row of a run carries `prev_hash` (the `hash` of the run's row before it; 64 zeros
for the first) and `hash` = SHA-256 of the bytes of `prev_hash` followed by the row's canonical
form: the compact JSON (ASCII, `","` and `":"` separators, keys in the order written) of

    [run_id, at, actor, kind, version, state, machine, data]

`data` is the row's data exactly as stored (the store writes it with the same encoder, so its
text and a re-encoding of what it parses to are the same bytes). Changing a row changes its
hash; removing or reordering rows breaks the link of the row after; an export says each run's
last hash and count, so cutting rows off the end is seen when checked against the store (or a
copy of the heads kept elsewhere).
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING, sha256
from .tables import to_json

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

GENESIS = "0" * 64


def canonical(run_id: str, at: float, actor: str, kind: str, version: int, state: str | None,
              machine: str | None, data_json: str) -> str:
    """The canonical text of a history row whose data is already JSON (`data_json`)."""
    head = to_json([run_id, at, actor, kind, version, state, machine])
    return f"{head[:-1]},{data_json}]"


def link(prev_hash: str, text: str) -> str:
    """The hash of a row of canonical `text` after a row whose hash is `prev_hash`."""
    return str(sha256(bytes.fromhex(prev_hash) + text.encode("ascii")).hexdigest())


def row_hash(prev_hash: str, row: dict[str, Any]) -> str:
    """The hash of an exported history row (`{run_id, at, actor, kind, version, state, machine,
    data}`) after `prev_hash`: what `audit verify` recomputes."""
    text = canonical(row["run_id"], row["at"], row["actor"], row["kind"], row["version"],
                     row["state"], row.get("machine"), to_json(row["data"]))
    return link(prev_hash, text)
