"""Writing a file all at once: every file statewright keeps beside the store, in the state
directory or in a host's settings is written here, so that a reader never sees half a file and
a crash never leaves one.

The bytes go into a new temporary file beside the target (created exclusively and without
following a link, so nothing planted at its name is written through), get their mode, and are
renamed over the target. Stdlib only: the process hook imports this where it writes.
"""

from __future__ import annotations

import os

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def write_atomic(path: str, data: bytes, mode: int = 0o600) -> None:
    """`data` into `path`, replacing what was there in one step, with permissions `mode` (not
    narrowed by the umask). Raises `OSError`; the temporary file is gone either way."""
    head, name = os.path.split(path)
    tmp = os.path.join(head, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, _FLAGS, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if mode != 0o600:
                os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
