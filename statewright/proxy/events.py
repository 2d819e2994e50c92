"""Resumable SSE streams for `statewright serve --http` (MCP streamable HTTP, 2025-11-25).

The SDK's streamable HTTP transport sends a priming event (an event id, empty data, and the
`retry` interval) on every SSE stream, and replays what a client missed when it reconnects
with `Last-Event-ID` -- once it is given an `EventStore`. The SDK defines the interface only;
this is a small in-memory one. It keeps the most recent events (bounded, oldest dropped
first): a client that comes back after more than that was sent gets what is still kept.
"""

from __future__ import annotations

import collections
import itertools
from typing import Any

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId

#: how long a client should wait before reconnecting a dropped SSE stream (the `retry` field)
RETRY_MS = 1000
#: events kept for replay, over all streams of the server
MAX_EVENTS = 4096


class MemoryEventStore(EventStore):
    """Events in arrival order: `(event id, stream id, message or None for a priming event)`.
    Ids are increasing integers (as text), unique for the life of the process."""

    def __init__(self, max_events: int = MAX_EVENTS) -> None:
        self._events: collections.OrderedDict[str, tuple[StreamId, Any]] = collections.OrderedDict()
        self._ids = itertools.count(1)
        self._max = max_events

    async def store_event(self, stream_id: StreamId, message: Any) -> EventId:
        event_id = str(next(self._ids))
        self._events[event_id] = (stream_id, message)
        while len(self._events) > self._max:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(self, last_event_id: EventId,
                                  send_callback: EventCallback) -> StreamId | None:
        """Send the events of `last_event_id`'s stream that came after it; None when that
        event is not (or no longer) known."""
        entry = self._events.get(last_event_id)
        if entry is None:
            return None
        stream_id = entry[0]
        after = False
        for event_id, (sid, message) in list(self._events.items()):
            if after and sid == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
            elif event_id == last_event_id:
                after = True
        return stream_id
