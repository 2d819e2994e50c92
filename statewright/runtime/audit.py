"""The audit trail: a project's history exported with its hash chain (`store.chain`), one JSON
object a line, for `statewright audit verify` to check offline, anywhere."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..store.chain import EXPORT_FORMAT, GENESIS

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterator

    from .service import Runtime

EXPORT_LIMIT = 10**9


def export(rt: Runtime, run_id: str | None = None) -> Iterator[dict[str, Any]]:
    """The header, each history row (of `run_id` and the runs it started, or of every run of
    the project), then each run's head: how many rows and the last hash."""
    yield {"type": "header", "format": EXPORT_FORMAT, "exported_at": time.time(),
           "project": rt.config.project_name,
           "store": "postgresql" if rt.store_url is not None else "sqlite"}
    if not rt.has_store():
        return
    with rt.store.read() as tx:
        ids = tx.run_and_descendants(run_id) if run_id else None
        rows = tx.history(ids, limit=EXPORT_LIMIT, chain=True)
    heads: dict[str, tuple[int, str]] = {}
    for r in rows:
        n, _ = heads.get(r["run_id"], (0, GENESIS))
        heads[r["run_id"]] = (n + 1, r["hash"])
        yield {"type": "event", **r}
    for rid, (n, h) in heads.items():
        yield {"type": "head", "run_id": rid, "count": n, "hash": h}


def store_chains(rt: Runtime, run_ids: list[str]) -> dict[str, list[str]]:
    """Each run's hashes in order as the store holds them now (to compare an export with: a
    file rewritten whole cannot match the store's own chain)."""
    if not rt.has_store() or not run_ids:
        return {}
    with rt.store.read() as tx:
        rows = tx.history(run_ids, limit=EXPORT_LIMIT, chain=True)
    out: dict[str, list[str]] = {}
    for r in rows:
        out.setdefault(r["run_id"], []).append(r["hash"])
    return out
