"""A `Profile` as a macOS Seatbelt policy (SBPL), run by `/usr/bin/sandbox-exec`.

Generated and unit-tested here; not yet run on a Mac (docs/policy.md says so). The policy is
default-deny; Seatbelt takes the last matching rule, so each broad allow comes first and the
denies that narrow it after:

- processes may fork and exec; signals and process information only within the same sandbox
  (no `ps eww`-style reading of another process's environment, no killing statewright's own);
- every file may be read except `hidden` (the store, statewright's keys);
- files may be written under the project root, the temp directories and a few devices
  (`/dev/null`, the terminal, `/dev/fd/N`), except `read_only` and `hidden`: carved out of each
  writable root (`require-not`) and denied again after it;
- a protected path, and every directory on the way to it, may not be removed, renamed or
  created (`file-write-unlink`, `file-write-create`: `mv tests t2`, or a link put where a
  protected path that does not exist yet would be);
- the network per `network`; binding and connecting Unix sockets per `unix_sockets` (making
  one, as `socketpair` does, always), and never to a socket below a hidden path; name
  resolution's socket (mDNSResponder) with the network.

Paths never appear in the policy text: each is a `-D NAME=PATH` parameter, canonicalised
(`/tmp` is `/private/tmp` on macOS) so that no quoting in the text is needed and no path can
change its meaning. The environment is scrubbed by `/usr/bin/env -u NAME` before
`sandbox-exec`, so the sandboxed command never sees a blocked variable.
"""

from __future__ import annotations

import os

from .profile import Profile

#: pinned: a `sandbox-exec` found on PATH could be anything the agent put there
SANDBOX_EXEC = "/usr/bin/sandbox-exec"
#: pinned for the same reason; BSD env takes `-u NAME`
ENV = "/usr/bin/env"

#: system services a command line needs (user and group names, logging, temp directories)
_MACH_BASE = ("com.apple.system.opendirectoryd.libinfo",
              "com.apple.system.opendirectoryd.membership", "com.apple.system.logger",
              "com.apple.logd", "com.apple.bsd.dirhelper", "com.apple.PowerManagement.control",
              "com.apple.system.notification_center")
#: and those the network needs (name resolution, TLS certificates)
_MACH_NETWORK = ("com.apple.SystemConfiguration.DNSConfiguration",
                 "com.apple.SystemConfiguration.configd", "com.apple.networkd",
                 "com.apple.SecurityServer", "com.apple.trustd.agent", "com.apple.ocspd",
                 "com.apple.dnssd.service")
#: sysctls that describe the machine (not other processes' arguments or environments:
#: `kern.procargs2` is left out)
_SYSCTLS = ("hw.activecpu", "hw.byteorder", "hw.cachelinesize_compat", "hw.cpufamily",
            "hw.cputype", "hw.logicalcpu", "hw.logicalcpu_max", "hw.machine", "hw.memsize",
            "hw.model", "hw.ncpu", "hw.nperflevels", "hw.pagesize", "hw.pagesize_compat",
            "hw.physicalcpu", "hw.physicalcpu_max", "hw.tbfrequency_compat", "hw.vectorunit",
            "kern.argmax", "kern.hostname", "kern.maxfilesperproc", "kern.maxproc",
            "kern.ngroups", "kern.osproductversion", "kern.osrelease", "kern.ostype",
            "kern.osversion", "kern.usrstack64", "kern.version", "machdep.cpu.brand_string",
            "sysctl.proc_cputype", "vm.loadavg")
_SYSCTL_PREFIXES = ("hw.optional.", "hw.perflevel", "kern.proc.pid.", "kern.proc.pgrp.",
                    "machdep.cpu.")
#: devices any command may write (what is written goes nowhere, or to its own terminal or
#: streams)
_DEVICES = ("/dev/null", "/dev/zero", "/dev/tty", "/dev/ptmx", "/dev/dtracehelper")
_DEVICE_PATTERNS = ("^/dev/fd/[0-9]+$", "^/dev/ttys[0-9]+$")


def canonical(path: str) -> str:
    """`path` absolute and with symlinks resolved (a path that does not exist yet: its nearest
    existing ancestor resolved); Seatbelt matches the real path a call reaches."""
    return os.path.realpath(os.path.abspath(path))


def temp_dirs() -> tuple[str, ...]:
    """The temp directories a sandboxed command may write: `$TMPDIR` (per user on macOS),
    `/tmp` and `/var/tmp`, canonical."""
    out: list[str] = []
    for d in (os.environ.get("TMPDIR") or "", "/tmp", "/var/tmp"):
        if d and os.path.isabs(d):
            c = canonical(d)
            if c not in out and c != "/":
                out.append(c)
    return tuple(out)


class _Params:
    """The `-D` parameters of one policy: each path once, under a name made of its role."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []
        self._by_path: dict[tuple[str, str], str] = {}
        self._count: dict[str, int] = {}

    def name(self, role: str, path: str) -> str:
        got = self._by_path.get((role, path))
        if got is None:
            n = self._count.get(role, 0)
            self._count[role] = n + 1
            got = self._by_path[(role, path)] = f"{role}_{n}" if role != "ROOT" else role
            self.items.append((got, path))
        return got


def sbpl_string(text: str) -> str:
    """`text` as an SBPL (Scheme) string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _param(name: str) -> str:
    return f"(param {sbpl_string(name)})"


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _ancestors(path: str) -> list[str]:
    """The directories on the way to `path`, nearest first, `/` left out."""
    out = []
    d = os.path.dirname(path)
    while d and d != "/":
        out.append(d)
        d = os.path.dirname(d)
    return out


def policy(profile: Profile, temps: tuple[str, ...] | None = None
           ) -> tuple[str, list[tuple[str, str]]]:
    """(the SBPL text, its `-D` parameters as (name, canonical path)) for `profile`; `temps`:
    the writable temp directories (default: `temp_dirs()`)."""
    params = _Params()
    root = params.name("ROOT", canonical(profile.root))
    writable = [(root, canonical(profile.root))]
    for t in temp_dirs() if temps is None else temps:
        c = canonical(t)
        if all(c != p for _, p in writable):
            writable.append((params.name("TMP", c), c))
    ro = [(params.name("RO", p), p)
          for p in dict.fromkeys(canonical(x) for x in profile.read_only)]
    hidden = [(params.name("HIDDEN", p), p)
              for p in dict.fromkeys(canonical(x) for x in profile.hidden)]
    protected = ro + hidden
    out = ["(version 1)", "(deny default)", ""]
    out += ["; processes: their own sandbox only (no signals to, no information about, others)",
            "(allow process-exec)", "(allow process-fork)",
            "(allow signal (target same-sandbox))",
            "(allow process-info* (target same-sandbox))",
            "(allow user-preference-read)", "(allow ipc-posix-sem)", "(allow ipc-posix-shm)",
            "(allow mach-lookup", *[f"  (global-name {sbpl_string(n)})" for n in _MACH_BASE], ")",
            "(allow sysctl-read", *[f"  (sysctl-name {sbpl_string(n)})" for n in _SYSCTLS],
            *[f"  (sysctl-name-prefix {sbpl_string(n)})" for n in _SYSCTL_PREFIXES], ")",
            "(allow pseudo-tty)",
            "(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))",
            "; a Unix socket may be made (socketpair); binding and connecting one is filtered",
            "(allow system-socket (socket-domain AF_UNIX))",
            ""]
    out += ["; reads: everything but the hidden paths", "(allow file-read*)"]
    if hidden:
        out += ["(deny file-read*", *[f"  (subpath {_param(n)})" for n, _ in hidden], ")"]
    out += ["", "; writes: the project and the temp directories, less what is protected"]
    out.append("(allow file-write*")
    for name, path in writable:
        carved = [n for n, p in protected if _inside(p, path) or _inside(path, p)]
        if not carved:
            out.append(f"  (subpath {_param(name)})")
            continue
        out.append(f"  (require-all (subpath {_param(name)})")
        out += [f"    (require-not (subpath {_param(n)}))" for n in carved]
        out[-1] += ")"
    out.append(")")
    out += ["(allow file-write-data file-ioctl",
            *[f"  (literal {sbpl_string(d)})" for d in _DEVICES],
            *[f"  (regex #{sbpl_string(r)})" for r in _DEVICE_PATTERNS], ")"]
    if protected:
        out += ["(deny file-write*", *[f"  (subpath {_param(n)})" for n, _ in protected], ")"]
        # (a protected path, or a directory on the way to it, renamed or removed takes the
        # protection with it; one created where a protected path does not exist yet could be
        # a link to anywhere)
        ups: list[str] = []
        for _, p in protected:
            for a in _ancestors(p):
                if a not in ups:
                    ups.append(a)
        out += ["; moves: neither a protected path nor a directory on the way to it",
                "(deny file-write-unlink file-write-create",
                *[f"  (subpath {_param(n)})" for n, _ in protected],
                *[f"  (literal {_param(params.name('UP', a))})" for a in ups], ")"]
    out += ["", "; network"]
    out += _network(profile, hidden) or ["; (none in this state)"]
    return "\n".join(out) + "\n", params.items


def _network(profile: Profile, hidden: list[tuple[str, str]]) -> list[str]:
    out: list[str] = []
    if profile.network:
        out += ["(allow system-socket (socket-domain AF_INET) (socket-domain AF_INET6))",
                '(allow network-outbound (remote ip "*:*"))',
                '(allow network-bind network-inbound (local ip "*:*"))',
                "(allow mach-lookup",
                *[f"  (global-name {sbpl_string(n)})" for n in _MACH_NETWORK], ")",
                "; name resolution asks mDNSResponder over its socket",
                '(allow network-outbound (remote unix-socket (path-literal '
                '"/private/var/run/mDNSResponder")))']
    if profile.unix_sockets:
        out += ["; Unix sockets: allowed in this state (a server outside may act for the code)",
                '(allow network-bind (local unix-socket (path-regex #"^/")))',
                '(allow network-outbound (remote unix-socket (path-regex #"^/")))']
        if hidden:
            out += ["(deny network-outbound",
                    *[f"  (remote unix-socket (subpath {_param(n)}))" for n, _ in hidden], ")"]
    return out


def argv(profile: Profile, temps: tuple[str, ...] | None = None) -> list[str]:
    """The argv prefix that runs a command under `profile` on macOS: append the program and
    its arguments. The environment is scrubbed before `sandbox-exec` (`scrub`), the pinned
    values set (`setenv`)."""
    text, params = policy(profile, temps)
    out = [ENV]
    for name in profile.scrub:
        out += ["-u", name]
    out += [f"{name}={value}" for name, value in profile.setenv]
    out += [SANDBOX_EXEC, "-p", text]
    for name, value in params:
        out += ["-D", f"{name}={value}"]
    return out
