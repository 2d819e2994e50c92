"""The durable SQLite store (stdlib only). See `db.py` for the layout."""

from .db import APPLICATION_ID, SCHEMA_VERSION, Store, Tx, definition_digest

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "Store", "Tx", "definition_digest"]
