"""`statewright doctor`'s kernel section: the real command (as this user, as an unprivileged user,
and nested inside the launcher's own sandbox), its answers checked against independent reads
of the kernel (util-linux `unshare`, /proc), and what each state setting means per tier."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from statewright.cli.doctor_kernel import disagreements, settings
from statewright.sandbox.probe import LANDLOCK, NAMESPACES, NONE, Tier
from tests.conftest import REPO, bin_path, clean_env


def _doctor(project: Path, *args: str, prefix: tuple[str, ...] = (), **env: str
            ) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, bin_path("statewright"), "doctor", "--project", str(project), *args],
                          capture_output=True, text=True, timeout=120, cwd=project,
                          env=clean_env(HOME=str(project), **env))


def _kernel_abi() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    v = libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(v), 0)


def _unshare_works(prefix: tuple[str, ...] = ()) -> bool:
    return subprocess.run([*prefix, shutil.which("unshare") or "/usr/bin/unshare", "-Urm", "true"],
                          capture_output=True, timeout=60).returncode == 0


def _check_kernel_data(k: dict, userns: bool) -> None:
    assert k["platform"] == sys.platform and k["kernel"] == os.uname().release
    assert k["landlock_abi"] == _kernel_abi()
    assert k["user_namespaces"]["works"] is userns, k["user_namespaces"]
    status = Path("/proc/self/status").read_text()
    assert k["seccomp"]["available"] is ("Seccomp:" in status and Path("/proc/sys/kernel/seccomp/actions_avail").exists())
    assert k["tier"]["kind"] in (NAMESPACES, LANDLOCK, NONE)
    assert set(k["settings"]["sandbox"]) == {"auto", "required", "off"}
    assert k["settings"]["sandbox"]["off"] == "the analysis alone"
    assert k["seatbelt"] is None  # (Linux)


def test_doctor_reports_the_kernel_as_json_and_text(tmp_path):
    p = _doctor(tmp_path, "--json")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    k = report["kernel"]
    _check_kernel_data(k, _unshare_works())
    tier = Tier(k["tier"]["kind"], k["tier"]["landlock_abi"], k["tier"]["why"])
    assert k["settings"] == settings(tier, k["seccomp"]["available"])
    text = _doctor(tmp_path)
    assert text.returncode == 0 and text.stderr == ""
    lines = text.stdout.splitlines()
    assert lines[0] == "Kernel"
    assert f"  platform: {sys.platform} {os.uname().release}" in lines
    assert any(line.startswith(f"  tier: {tier.kind}") for line in lines)
    assert f'  sandbox "required": {k["settings"]["sandbox"]["required"]}' in lines
    assert (f"  Landlock: ABI {k['landlock_abi']}" if k["landlock_abi"] else "  Landlock: not available") in lines
    assert not (tmp_path / ".statewright").exists()  # (a read-only command creates nothing in the project)


def test_doctor_as_an_unprivileged_user(tmp_path):
    setpriv = shutil.which("setpriv")
    assert setpriv, "util-linux setpriv is needed to run as another user"
    as_nobody = (setpriv, "--reuid=65534", "--regid=65534", "--clear-groups") if os.getuid() == 0 else ()
    tmp_path.chmod(0o777)
    p = _doctor(tmp_path, "--json", prefix=as_nobody)
    assert p.returncode == 0, p.stderr
    k = json.loads(p.stdout)["kernel"]
    assert k["user_namespaces"]["works"] is _unshare_works(as_nobody)
    assert "(as root)" not in k["user_namespaces"]["why"] or not as_nobody
    assert k["landlock_abi"] == _kernel_abi()


def test_doctor_inside_the_launchers_sandbox_sees_namespaces_refused(tmp_path):
    # the launcher built from the package's source, as the install builds it
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed to build the launcher"
    helper = tmp_path / "swbox"
    subprocess.run([cc, "-O2", "-o", str(helper), str(REPO / "statewright" / "sandbox" / "swbox.c")],
                   check=True, capture_output=True, timeout=300)
    project = tmp_path / "proj"
    project.mkdir()
    p = _doctor(project, "--json", prefix=(str(helper), "--root", str(project), "--"))
    assert p.returncode == 0, p.stderr
    k = json.loads(p.stdout)["kernel"]
    assert k["user_namespaces"] == {"works": False, "why": "unshare(CLONE_NEWUSER|CLONE_NEWNS) was refused"}
    assert k["seccomp"]["available"] is True and "already under one" in k["seccomp"]["why"]
    assert k["landlock_abi"] == _kernel_abi()  # (Landlock domains nest)
    tier = Tier(k["tier"]["kind"], k["tier"]["landlock_abi"], k["tier"]["why"])
    assert k["warnings"] == disagreements(tier, k["landlock_abi"], False, True)
    if tier.kind == NAMESPACES:
        assert "refused now" in k["warnings"][0]


# -- what each setting means, per tier -----------------------------------------------------------

def test_settings_under_the_namespaces_tier():
    s = settings(Tier(NAMESPACES, 7), True)
    assert "run under the namespaces tier" in s["sandbox"]["auto"] and s["sandbox"]["required"] == s["sandbox"]["auto"]
    assert s["network_false"].startswith("enforced") and s["unix_sockets_false"].startswith("enforced")


def test_settings_under_the_landlock_tier():
    s = settings(Tier(LANDLOCK, 7), True)
    assert "Landlock tier" in s["sandbox"]["auto"] and "frozen" in s["sandbox"]["auto"]
    assert s["network_false"].startswith("partly enforced: TCP")
    old = settings(Tier(LANDLOCK, 3), False)
    assert old["network_false"].startswith("not enforced") and "ABI 3" in old["network_false"]
    assert old["unix_sockets_false"].startswith("not enforced: seccomp")


def test_settings_without_a_kernel_tier():
    s = settings(Tier(NONE, 0, "no Landlock"), True)
    assert s["sandbox"]["auto"].startswith("the analysis alone")
    assert s["sandbox"]["required"].endswith("are refused (no kernel tier here)")
    assert s["network_false"] == s["unix_sockets_false"] == "not enforced: no kernel tier"


def test_disagreements():
    assert disagreements(Tier(NAMESPACES, 7), 7, True, True) == []
    assert disagreements(Tier(NONE, 0, "x"), 0, False, False) == []
    assert len(disagreements(Tier(NAMESPACES, 7), 0, False, False)) == 3
    assert disagreements(Tier(LANDLOCK, 7), 7, False, True) == []  # (Landlock needs no namespaces)
