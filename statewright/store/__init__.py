"""The durable store: the project's SQLite file (stdlib only; `db.py` has its layout), or a
team's shared PostgreSQL store (`pg.py`, imported only for a project that uses one)."""

from __future__ import annotations

from ..lean import TYPE_CHECKING
from .db import APPLICATION_ID, SCHEMA_VERSION, Store, Tx, definition_digest

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "Store", "Tx", "definition_digest", "open_store"]


def open_store(rt: Any) -> Store:
    """The store of runtime `rt`: its shared store when `rt.store_url` names one, else the
    project's SQLite file."""
    url = rt.store_url
    if url is None:
        return Store.open(rt.store_file, resident=rt.resident)
    from .pg import open_shared

    return open_shared(url, rt)  # type: ignore[return-value]  # (the same interface)
