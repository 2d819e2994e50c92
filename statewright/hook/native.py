"""The Python hook's side of `statewright-hook-native`, the process-form hook's native client.

The native client (`statewright/hook/swhook.c`, installed beside `statewright-hook` as
`statewright-hook-native`) hands a hook event to the resident hook server itself, without
starting Python; whatever it cannot do it hands to `statewright-hook` (this process) by exec,
with the same arguments, the hook input it read on stdin and `NATIVE_ENV` saying how far it got.
Every rule and every refusal text stays here: the client decides nothing and words nothing.

`NATIVE_ENV` holds `MODE[,deadline=MS]`:

- `ask`: the client did not ask the server (none named yet, a refused connect, anything it does
  not know): everything happens as usual, and the installation's facts are noted for it.
- `self`: the server was asked and gave no answer of its own (no answer in time, a cut or
  forged answer): this process decides itself, as `resident.ask` returning None would have it.
- `emit=N`: stdin holds the request's nonce and the server's whole reply, whose answer the
  client could not write to stdout (N bytes of it went out): this process checks the reply's
  MAC again (`proven_answer`: a variable alone never makes it print anything) and writes the
  answer by `statewright.hook.emit`'s rules.
- `deadline=MS` (another host than Claude Code): the deadline the client armed at its start,
  in ms since the epoch; past it this process refuses at once (`hosts.arm_deadline`).

**Facts.** The resident server's name is a digest of the user, the Python installation (the
interpreter, its prefix and statewright's package directory), the project and the variables that
name a server (`resident.endpoint`). The client cannot learn the installation's part without
Python, so this process notes it (`resident.note_facts`) in a file beside the store, where the
key file is, under a name derived from its own `bin` directory: `hook-native-<id>.facts`, the
three texts NUL-separated. Only a hook of this installation writes the facts of this
installation's client, and the file lies where self-protection keeps the agent's tools out, as
for the key.
"""

from __future__ import annotations

import os

from ..names import NATIVE_ENV
from ..names import NATIVE_HOOK_SCRIPT as PROGRAM

ASK, SELF, EMIT = "ask", "self", "emit"


class Handover:
    """What the native client handed over (`parse`)."""

    __slots__ = ("deadline", "mode", "sent")

    def __init__(self, mode: str, deadline: float | None, sent: int) -> None:
        self.mode, self.deadline, self.sent = mode, deadline, sent


def take() -> Handover | None:
    """The hand-over of this process's start, if the native client exec'd it, removed from the
    environment (it names nothing and travels nowhere); None otherwise."""
    value = os.environ.pop(NATIVE_ENV, None)
    return None if value is None else parse(value)


def parse(value: str) -> Handover:
    """`MODE[=N][,deadline=MS]`; anything unreadable is `ask` with no deadline (the usual path:
    it never skips a rule, nor waits longer than this process's own deadline would)."""
    head, _, rest = value.partition(",")
    mode, _, n = head.partition("=")
    deadline = None
    if rest.startswith("deadline=") and rest[9:].isdigit():
        deadline = int(rest[9:]) / 1000
    sent = int(n) if mode == EMIT and n.isdigit() else 0
    if mode not in (ASK, SELF, EMIT) or (mode == EMIT and not n.isdigit()):
        mode = ASK
    return Handover(mode, deadline, sent)


def proven_answer(data: bytes) -> str | None:
    """The answer in `data` (mode `emit`: nonce, then the server's reply) if it carries the
    MAC of this hook's resident server over that nonce, else None."""
    from ..lean import hmac_sha256, same_bytes
    from .resident import KEY_BYTES, MAC_BYTES, MAGIC, NONCE_BYTES, endpoint

    try:
        ep = endpoint()
        if ep is None:
            return None
        with open(ep.key_file, "rb") as f:
            key = f.read()
        nonce, reply = data[:NONCE_BYTES], data[NONCE_BYTES:]
        mac, out = reply[len(MAGIC):len(MAGIC) + MAC_BYTES], reply[len(MAGIC) + MAC_BYTES:]
        if len(key) != KEY_BYTES or len(nonce) != NONCE_BYTES or not reply.startswith(MAGIC) \
                or not same_bytes(mac, hmac_sha256(key, b"A" + nonce + out)):
            return None
        return out.decode("ascii")
    except Exception:
        return None


def program_beside(hook: str) -> str | None:
    """The native client installed beside the `statewright-hook` at `hook` (a venv's `bin/`),
    or None."""
    path = os.path.join(os.path.dirname(hook), PROGRAM)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
