"""What this machine's kernel offers, asked directly (for `statewright doctor`): the Landlock ABI,
whether an unprivileged process can set up user and mount namespaces, whether seccomp filters
can be installed. The launcher decides the tier it uses (`probe.tier()`); these say why, and
what is missing when it says none. Linux only (elsewhere each answers "no"); never raises.

Not imported by the process hook (`ctypes`, `os.fork`).
"""

from __future__ import annotations

import os
import sys
from typing import Any

#: `landlock_create_ruleset` on x86_64 and aarch64 (the generic syscall table)
SYS_LANDLOCK_CREATE_RULESET = 444
LANDLOCK_CREATE_RULESET_VERSION = 1
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
PR_GET_SECCOMP = 21

_LINUX = sys.platform.startswith("linux")


def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version: 0 where Landlock is absent or disabled."""
    if not _LINUX:
        return 0
    try:
        import ctypes

        libc = _libc()
        libc.syscall.restype = ctypes.c_long
        abi = libc.syscall(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
                           ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return int(abi) if abi > 0 else 0


#: what the namespace probe's child reports by its exit status
_USERNS_STEPS = {1: "unshare(CLONE_NEWUSER|CLONE_NEWNS) was refused",
                 2: "the new user namespace's uid/gid maps could not be written",
                 3: "a mount in the new namespace was refused",
                 4: "the probe failed"}


def user_namespaces() -> tuple[bool, str]:
    """Whether this process's user can make a user and mount namespace and mount in it (what
    read-only binds need), and why not: probed in a forked child, which exits at once."""
    if not _LINUX:
        return False, f"no user namespaces on {sys.platform}"
    uid, gid = os.getuid(), os.getgid()
    try:
        pid = os.fork()
    except OSError as e:
        return False, f"could not fork a probe: {e.strerror}"
    if pid == 0:  # (the child: nothing but system calls, then _exit)
        code = 4
        try:
            code = _userns_child(uid, gid)
        finally:
            os._exit(code)
    try:
        _, status = os.waitpid(pid, 0)
    except OSError as e:
        return False, f"the probe was lost: {e.strerror}"
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        return True, "user and mount namespaces work" + (" (as root)" if uid == 0 else "")
    return False, _USERNS_STEPS.get(code, f"the probe ended with status {code}") + \
        _userns_hint()


def _userns_child(uid: int, gid: int) -> int:
    import ctypes

    libc = _libc()
    if libc.unshare(ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNS)) != 0:
        return 1
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"),
                           ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError:
        return 2
    if libc.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None) != 0:
        return 3
    return 0


def _userns_hint() -> str:
    """The system setting that refuses user namespaces, where one says so."""
    for path, bad, what in (
            ("/proc/sys/kernel/unprivileged_userns_clone", "0",
             "kernel.unprivileged_userns_clone is 0"),
            ("/proc/sys/user/max_user_namespaces", "0", "user.max_user_namespaces is 0"),
            ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1",
             "AppArmor restricts unprivileged user namespaces")):
        try:
            with open(path) as f:
                if f.read().strip() == bad:
                    return f" ({what})"
        except OSError:
            continue
    return ""


def seccomp() -> tuple[bool, str]:
    """Whether a seccomp filter can be installed here, and what this process is under now."""
    if not _LINUX:
        return False, f"no seccomp on {sys.platform}"
    try:
        import ctypes

        mode = _libc().prctl(ctypes.c_int(PR_GET_SECCOMP), 0, 0, 0, 0)
    except (OSError, AttributeError):
        return False, "prctl is not available"
    if mode < 0:
        return False, "the kernel was built without seccomp"
    if not os.path.exists("/proc/sys/kernel/seccomp/actions_avail"):
        return False, "the kernel has seccomp but no filter mode"
    if mode == 2:
        return True, "filters can be added (this process is already under one: a container?)"
    return True, "filters can be installed"
