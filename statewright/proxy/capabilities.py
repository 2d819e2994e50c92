"""The capabilities `statewright serve` advertises: what it does, on every transport."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server import NotificationOptions, Server

#: list changes this server announces (handshake era; the 2026 era derives them from
#: `subscriptions/listen`, which is served)
NOTIFICATIONS = NotificationOptions(tools_changed=True, prompts_changed=True,
                                    resources_changed=True)


class ProxyServer(Server[Any]):
    """The SDK server, advertising the list-change notifications we send on every transport:
    stdio passes initialization options, but the streamable HTTP manager asks the server for
    its defaults (which would say `listChanged: false`)."""

    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      *args: Any, **kwargs: Any) -> Any:
        return super().create_initialization_options(notification_options or NOTIFICATIONS,
                                                     *args, **kwargs)

    def get_capabilities(self, *args: Any, **kwargs: Any) -> types.ServerCapabilities:
        caps = super().get_capabilities(*args, **kwargs)
        if caps.resources is not None and caps.resources.subscribe:
            # no resource subscriptions are passed through (the 2026 era derives `subscribe`
            # from `subscriptions/listen`, which we serve for list changes only)
            caps = caps.model_copy(update={"resources": caps.resources.model_copy(
                update={"subscribe": False})})
        return caps
