"""`statewright doctor`'s kernel section: the tier sandboxed lines run under on this machine
(`sandbox.probe.tier()`, the launcher's own answer), what the kernel offers (`sandbox.facts`),
and what each state setting (`sandbox`, `network`, `unix_sockets`) means here."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

from ..sandbox import facts, probe

#: what each tier binds, in a few words
_TIER_TEXT = {
    probe.NAMESPACES: "the namespaces tier (user, mount and PID namespaces with read-only binds, "
                      "Landlock and seccomp on top)",
    probe.LANDLOCK: "the Landlock tier (Landlock and seccomp; while a sandboxed line runs, the "
                    "project's top level and the directories on the way to a protected path are "
                    "frozen: nothing there can be created, removed or renamed)",
}
#: the lines the kernel tier is for (DESIGN: binding by the kernel)
_LINES = ("lines that can run code or write paths the analysis cannot see, and every line in "
          "a state with blocked_env,")


def settings(tier: probe.Tier, seccomp_ok: bool) -> dict[str, Any]:
    """What `sandbox`, `network: false` and `unix_sockets: false` mean on a machine with `tier`
    (a pure function: `statewright doctor` and its tests)."""
    if tier.available:
        run = f"{_LINES} run under {_TIER_TEXT.get(tier.kind, tier.kind)}"
        sandbox = {"auto": run, "required": run, "off": "the analysis alone"}
    else:
        sandbox = {"auto": "the analysis alone (no kernel tier here)",
                   "required": f"{_LINES} are refused (no kernel tier here)",
                   "off": "the analysis alone"}
    if tier.kind == probe.NAMESPACES:
        network = "enforced: sandboxed lines get no network (a network namespace of their own)"
    elif tier.kind == probe.LANDLOCK and tier.landlock_abi >= 4:
        network = ("partly enforced: TCP is refused (Landlock ABI >= 4), UDP still reaches the "
                   "network")
    elif tier.kind == probe.LANDLOCK:
        network = f"not enforced: this kernel's Landlock (ABI {tier.landlock_abi}) has no TCP rules"
    else:
        network = "not enforced: no kernel tier"
    if tier.available and seccomp_ok:
        unix = ("enforced: sandboxed code cannot make a Unix socket (seccomp), so no server "
                "outside can be asked to act for it; socketpair still works")
    elif tier.available:
        unix = "not enforced: seccomp filters cannot be installed here"
    else:
        unix = "not enforced: no kernel tier"
    return {"sandbox": sandbox, "network_false": network, "unix_sockets_false": unix}


def disagreements(tier: probe.Tier, abi: int, userns_ok: bool, seccomp_ok: bool) -> list[str]:
    """Where the tier the launcher recorded (once per boot) and what this process's kernel
    offers now disagree: a sandboxed line would fail to start (nested in another sandbox, a
    setting changed since)."""
    out = []
    recorded = f"the launcher's recorded tier ({tier.kind})"
    if tier.kind == probe.NAMESPACES and not userns_ok:
        out.append(f"{recorded} needs user namespaces, which this process is refused now "
                   "(inside another sandbox?)")
    if tier.available and abi < 2:
        out.append(f"{recorded} needs Landlock ABI 2 or later; this process finds ABI {abi}")
    if tier.available and not seccomp_ok:
        out.append(f"{recorded} needs seccomp filters, which cannot be installed here")
    return out


def kernel_report() -> tuple[list[str], dict[str, Any]]:
    """(the section's lines, its JSON data)."""
    probe.forget()  # (what the machine gives now, not what an earlier process found)
    tier = probe.tier()
    abi = facts.landlock_abi()
    userns_ok, userns_why = facts.user_namespaces()
    seccomp_ok, seccomp_why = facts.seccomp()
    seatbelt = None
    if sys.platform == "darwin":
        from ..sandbox.seatbelt import SANDBOX_EXEC

        seatbelt = {"sandbox_exec": os.access(SANDBOX_EXEC, os.X_OK),
                    "why": "the Seatbelt profile is generated and unit-tested but untested on a "
                           "Mac: no kernel tier is used yet"}
    meaning = settings(tier, seccomp_ok)
    warnings = disagreements(tier, abi, userns_ok, seccomp_ok)
    data = {
        "platform": sys.platform,
        "kernel": platform.release(),
        "tier": {"kind": tier.kind, "landlock_abi": tier.landlock_abi, "why": tier.why},
        "landlock_abi": abi,
        "user_namespaces": {"works": userns_ok, "why": userns_why},
        "seccomp": {"available": seccomp_ok, "why": seccomp_why},
        "seatbelt": seatbelt,
        "settings": meaning,
        "warnings": warnings,
    }
    tier_line = f"tier: {tier.kind}"
    if tier.available:
        tier_line += f" (Landlock ABI {tier.landlock_abi})"
    elif tier.why:
        tier_line += f": {tier.why}"
    lines = [f"platform: {sys.platform} {platform.release()}", tier_line,
             f"Landlock: ABI {abi}" if abi else "Landlock: not available",
             f"user namespaces: {userns_why}" if userns_ok
             else f"user namespaces: refused: {userns_why}",
             ("seccomp: " if seccomp_ok else "seccomp: unavailable: ") + seccomp_why]
    lines += [f"warning: {w}" for w in warnings]
    if not tier.available and abi >= 2:
        lines.append(f"the kernel offers Landlock ABI {abi}, but no kernel tier is used: "
                     f"{tier.why}")
    if seatbelt is not None:
        lines.append("Seatbelt: " + ("/usr/bin/sandbox-exec present; " if seatbelt["sandbox_exec"]
                                     else "/usr/bin/sandbox-exec missing; ") + seatbelt["why"])
    for mode in ("auto", "required", "off"):
        lines.append(f'sandbox "{mode}": {meaning["sandbox"][mode]}')
    lines.append(f"network false: {meaning['network_false']}")
    lines.append(f"unix_sockets false: {meaning['unix_sockets_false']}")
    return lines, data
