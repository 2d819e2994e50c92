"""Where a process environment can be read (check 6, `blocked_env`, DESIGN section 4): which
paths are, or when searched hold, a process's environment, its memory or an open file
descriptor. One answer for every channel: the file tools (`policy.channels`) and the shell
(`shell.env` from the text alone, `policy.lines` on the file system).

Pure: the questions take absolute, normalised paths.
"""

from __future__ import annotations

#: entries of /proc that are not a process's directory and hold no environment, memory or
#: descriptor of one, so reading one or searching below it is fine (`cat /proc/cpuinfo`);
#: every other name there (a pid, `self`, `thread-self`, one a later kernel adds) counts as a
#: process's directory
PLAIN_PROC = frozenset({
    "acpi", "buddyinfo", "bus", "cgroups", "cmdline", "consoles", "cpuinfo", "crypto", "devices",
    "diskstats", "dma", "driver", "execdomains", "filesystems", "fs", "interrupts", "iomem",
    "ioports", "irq", "loadavg", "locks", "meminfo", "misc", "modules", "mounts", "mtrr", "net",
    "partitions", "pressure", "softirqs", "stat", "swaps", "sys", "sysvipc", "tty", "uptime",
    "version", "vmstat", "zoneinfo"})

#: the last component of a file that is a process's environment or memory
SECRET_FILES = ("environ", "mem")

#: entries of a process's directory that are links to a directory anywhere (its root, its
#: working directory): a search below one can reach /proc again
_DIR_LINKS = ("root", "cwd")


def environ_path(full: str, searches: bool) -> bool:
    """Whether `full` (absolute, normalised) is, or for a reader that `searches` below what it
    is given holds, a process environment, a process's memory or an open file descriptor of
    the reading process (whatever that is). The whole file system holds /proc."""
    if full.startswith("/dev/fd") or full in ("/dev/stdin", "/dev/stdout", "/dev/stderr"):
        return True
    if not full.startswith("/proc") or (len(full) > 5 and full[5] != "/"):
        return searches and full == "/"
    parts = [p for p in full[6:].split("/") if p]  # after "/proc/"
    if not parts:
        return searches  # /proc itself
    if parts[-1] in SECRET_FILES or "fd" in parts[1:] or "fdinfo" in parts[1:]:
        return True
    if parts[0] in PLAIN_PROC:
        return False
    if not searches:
        return False
    # a process's directory, one of its threads', or a path through its root or working
    # directory (a link to anywhere)
    return len(parts) == 1 or (len(parts) in (2, 3) and parts[1] == "task") or \
        any(p in _DIR_LINKS for p in parts[1:])


#: entries of a process's directory that are links into the file system as that process sees
#: it: its root, its working directory, its open files
_PROCESS_LINKS = frozenset({"root", "cwd", "fd", "map_files", "exe"})


def process_link(full: str) -> bool:
    """Whether `full` (absolute, normalised) goes through a link that names a file as some
    process sees it (`/proc/self/cwd/...`, `/proc/1/root/...`, `/dev/fd/3/...`, `/dev/stdin`):
    the process that runs the command is not the one deciding, so where it leads is unknown."""
    if full.startswith("/dev/"):
        return full.startswith("/dev/fd/") or full in ("/dev/fd", "/dev/stdin", "/dev/stdout",
                                                      "/dev/stderr")
    if not full.startswith("/proc/"):
        return False
    parts = full[6:].split("/")
    return parts[0] not in PLAIN_PROC and any(p in _PROCESS_LINKS for p in parts[1:])
