"""`Profile`: what every process of a sandboxed line may not do. Plain data; the policy builds it
(`statewright.policy.confine`), the launcher enforces it."""

from __future__ import annotations

from ..lean import Record, set_field


class Profile(Record):
    """The rules of one sandbox, all paths absolute and real (symlinks resolved).

    - `root`: the project root;
    - `read_only`: paths no process may write, truncate, remove, rename, link over or change
      the mode of (a directory: everything under it); they need not exist (one that does not
      may not be created);
    - `hidden`: paths no process may read either (the store, statewright's keys);
    - `scrub`: environment variables removed before `exec`; `setenv`: (name, value) pinned;
    - `network`: False: no network (a new network namespace where the kernel allows it);
    - `unix_sockets`: False: no new Unix socket may be created (`socketpair` still works), so
      no server outside the sandbox (tmux, docker, statewright's own) can be asked to act.
    """

    __slots__ = __match_args__ = _fields = ("root", "read_only", "hidden", "scrub", "setenv",
                                            "network", "unix_sockets")
    root: str
    read_only: tuple[str, ...]
    hidden: tuple[str, ...]
    scrub: tuple[str, ...]
    setenv: tuple[tuple[str, str], ...]
    network: bool
    unix_sockets: bool

    def __init__(self, root: str, read_only: tuple[str, ...] = (), hidden: tuple[str, ...] = (),
                 scrub: tuple[str, ...] = (), setenv: tuple[tuple[str, str], ...] = (),
                 network: bool = True, unix_sockets: bool = False) -> None:
        set_field(self, "root", root)
        set_field(self, "read_only", read_only)
        set_field(self, "hidden", hidden)
        set_field(self, "scrub", scrub)
        set_field(self, "setenv", setenv)
        set_field(self, "network", network)
        set_field(self, "unix_sockets", unix_sockets)
