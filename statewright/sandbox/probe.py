"""What this machine's kernel enforces (`tier()`), asked of the launcher itself (`swbox
--probe`) once per boot and kept beside the active-run markers, where no tool and no sandboxed
process may write (a forged "none" would switch the kernel tier off in `sandbox: "auto"` states).

Stdlib only and cheap: the process hook reads one small file per decision that needs it.
"""

from __future__ import annotations

import os
import sys

from ..config import active_marker_dir
from ..lean import Record, set_field

#: the launcher, built beside this module at install (`hatch_build.py`, `make venv`)
HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "swbox")

NAMESPACES, LANDLOCK, NONE = "namespaces", "landlock", "none"


class Tier(Record):
    """`kind`: `"namespaces"` (user, mount and PID namespaces with read-only binds, Landlock and
    seccomp on top: the exact tier), `"landlock"` (Landlock alone: the top level of the project
    and every directory on the way to a protected path are frozen while a line runs), or
    `"none"`; `landlock_abi`: the kernel's Landlock ABI (0: none); `why`: for `none`, why."""

    __slots__ = __match_args__ = _fields = ("kind", "landlock_abi", "why")
    kind: str
    landlock_abi: int
    why: str

    def __init__(self, kind: str, landlock_abi: int = 0, why: str = "") -> None:
        set_field(self, "kind", kind)
        set_field(self, "landlock_abi", landlock_abi)
        set_field(self, "why", why)

    @property
    def available(self) -> bool:
        return self.kind != NONE


_KEPT: list[Tier] = []


def tier() -> Tier:
    """What this machine enforces: kept for the process, and on disk for the boot."""
    if _KEPT:
        return _KEPT[0]
    found = _read_or_probe()
    _KEPT.append(found)
    return found


def forget() -> None:
    """Ask again on the next `tier()` (tests; `statewright doctor`)."""
    _KEPT.clear()


def _cache_file() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as f:
            boot = f.read().strip().decode("utf-8", "replace")
        st = os.stat(HELPER)
    except OSError:
        return None
    # (a rebuilt launcher or another boot asks again)
    name = f"sandbox-tier-{boot}-{st.st_ino}-{st.st_mtime_ns}"
    return os.path.join(active_marker_dir(), name)


def parse(text: str) -> Tier:
    """The launcher's `--probe` answer: `KIND ABI [WHY...]`."""
    parts = text.strip().split(" ", 2)
    kind = parts[0] if parts and parts[0] in (NAMESPACES, LANDLOCK, NONE) else NONE
    try:
        abi = int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        abi = 0
    why = parts[2] if len(parts) > 2 else ("" if kind != NONE else "the launcher did not say")
    return Tier(kind, abi, why)


def _read_or_probe() -> Tier:
    if not sys.platform.startswith("linux"):
        return Tier(NONE, 0, f"no kernel tier on {sys.platform} yet (macOS: the Seatbelt profile "
                             "is generated but untested)")
    if not os.access(HELPER, os.X_OK):
        return Tier(NONE, 0, "the launcher was not built at install (no C compiler?): "
                             "reinstall statewright with a C compiler present")
    cache = _cache_file()
    if cache is not None:
        try:
            with open(cache, "rb") as f:
                return parse(f.read().decode("utf-8", "replace"))
        except OSError:
            pass
    import subprocess

    try:
        out = subprocess.run([HELPER, "--probe"], capture_output=True, text=True, timeout=10,
                             check=False).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return Tier(NONE, 0, f"the launcher could not run: {e}")
    found = parse(out)
    if cache is not None:
        try:
            from ..atomic import write_atomic  # (once per machine: off the per-call path)

            os.makedirs(os.path.dirname(cache), exist_ok=True)
            write_atomic(cache, out.encode("utf-8"), 0o644)
        except OSError:
            pass
    return found
