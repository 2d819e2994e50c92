"""The launcher (`statewright/sandbox/swbox`), run for real: each mechanism it promises, on both
tiers this machine gives (`namespaces` and `landlock`), with the effect checked on disk.

A case is (what the command does, whether it must be refused); every refusal has its control
beside it (the same kind of work on a path the profile leaves alone)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from statewright.sandbox import Profile
from statewright.sandbox.launcher import argv, wrap
from statewright.sandbox.probe import HELPER, tier

SECRET = "swbox-secret-4242"
TIERS = ("namespaces", "landlock")


def project(tmp: Path) -> Path:
    root = tmp / "proj"
    for d in ("workflows", "src/pkg", ".statewright", ".claude", ".git/hooks", "tests"):
        (root / d).mkdir(parents=True)
    (root / "workflows" / "flow.json").write_text("{}\n")
    (root / ".statewright" / "state.db").write_text("store\n")
    (root / ".claude" / "settings.json").write_text("{}\n")
    (root / ".git" / "config").write_text("[core]\n")
    (root / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "README.md").write_text("readme\n")
    (root / "tests" / "test_a.py").write_text("def test(): pass\n")
    return root


def profile(root: Path, **kw) -> Profile:
    r = str(root)
    return Profile(r, read_only=(f"{r}/workflows", f"{r}/.claude", f"{r}/statewright.json",
                                 f"{r}/.git/hooks", f"{r}/.git/config", f"{r}/tests"),
                   hidden=(f"{r}/.statewright",), scrub=("SECRET_TOKEN",),
                   setenv=(("MODE", "sandboxed"),), **kw)


def run(root: Path, line: str, kind: str = "namespaces", **kw) -> subprocess.CompletedProcess:
    cmd = argv(profile(root, **kw))
    cmd[1:1] = ["--tier", "ns" if kind == "namespaces" else "landlock"]
    return subprocess.run([*cmd, "/bin/bash", "-c", line], cwd=root, capture_output=True,
                          text=True, timeout=60,
                          env={**os.environ, "SECRET_TOKEN": SECRET, "MODE": "outside"})


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


REFUSED = [
    "rm workflows/flow.json",
    "echo x >> workflows/flow.json",
    ": > workflows/flow.json",
    "mv workflows w2",
    "mv workflows/flow.json src/",
    "cp README.md workflows/new.json",
    "ln workflows/flow.json src/hard",
    "chmod 777 workflows/flow.json",
    "touch -d 2000-01-01 workflows/flow.json",
    "rm -rf .claude",
    "echo '{}' > .claude/settings.local.json",
    "echo x > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    "echo '[core] fsmonitor=x' >> .git/config",
    "rm tests/test_a.py",
    "sed -i s/pass/1/ tests/test_a.py",
    "cd src && rm ../workflows/flow.json",
    "cd workflows && rm flow.json",
    "python3 -c \"import os; os.rename('workflows', 'x')\"",
    "python3 -c \"open('workflows/flow.json', 'w')\"",
]


@pytest.mark.parametrize("kind", TIERS)
@pytest.mark.parametrize("line", REFUSED)
def test_protected_paths_cannot_change(tmp_path: Path, kind: str, line: str) -> None:
    root = project(tmp_path)
    before = snapshot(root)
    run(root, line, kind)
    after = snapshot(root)
    for rel in before:
        if rel.startswith(("workflows", ".claude", ".git", "tests", ".statewright")):
            assert after.get(rel) == before[rel], (line, rel)
    assert not (root / ".claude" / "settings.local.json").exists()
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    assert (root / "workflows").is_dir()


EVERYDAY = [
    ("echo x >> src/pkg/mod.py", "src/pkg/mod.py", "x = 1\nx\n"),
    ("sed -i s/1/2/ src/pkg/mod.py", "src/pkg/mod.py", "x = 2\n"),
    ("mkdir -p src/new && echo y > src/new/f.txt", "src/new/f.txt", "y\n"),
    ("echo more >> README.md", "README.md", "readme\nmore\n"),
    ("mv src/pkg/mod.py src/pkg/mod2.py", "src/pkg/mod2.py", "x = 1\n"),
]
#: everyday work the namespaces tier keeps and Landlock alone cannot (the top level frozen)
TOP_LEVEL = [
    ("sed -i s/readme/README/ README.md", "README.md", "README\n"),
    ("echo n > NOTES.md", "NOTES.md", "n\n"),
    ("mkdir build && echo o > build/out", "build/out", "o\n"),
    ("mv src src2", "src2/pkg/mod.py", "x = 1\n"),
]


@pytest.mark.parametrize("kind", TIERS)
@pytest.mark.parametrize("line,path,text", EVERYDAY)
def test_everyday_work_goes_through(tmp_path: Path, kind: str, line: str, path: str,
                                    text: str) -> None:
    root = project(tmp_path)
    r = run(root, line, kind)
    assert r.returncode == 0, r.stderr
    assert (root / path).read_text() == text


@pytest.mark.parametrize("line,path,text", TOP_LEVEL)
def test_the_top_level_stays_free_under_namespaces(tmp_path: Path, line: str, path: str,
                                                  text: str) -> None:
    root = project(tmp_path)
    r = run(root, line)
    assert r.returncode == 0, r.stderr
    assert (root / path).read_text() == text


@pytest.mark.parametrize("line", [s[0] for s in TOP_LEVEL])
def test_landlock_alone_freezes_the_top_level(tmp_path: Path, line: str) -> None:
    root = project(tmp_path)
    before = sorted(p.name for p in root.iterdir())
    assert run(root, line, "landlock").returncode != 0
    assert sorted(p.name for p in root.iterdir()) == before


@pytest.mark.parametrize("kind", TIERS)
def test_the_store_is_hidden_and_the_environment_scrubbed(tmp_path: Path, kind: str) -> None:
    root = project(tmp_path)
    r = run(root, "cat .statewright/state.db; echo \"[$SECRET_TOKEN] [$MODE]\"; "
                  "cat /proc/self/environ | tr '\\0' '\\n' | grep -c SECRET_TOKEN; "
                  "for p in /proc/[0-9]*/environ; do cat $p 2>/dev/null; done "
                  f"| grep -c {SECRET}", kind)
    assert "store" not in r.stdout
    assert "[] [sandboxed]" in r.stdout
    assert r.stdout.split()[-2:] == ["0", "0"], r.stdout


@pytest.mark.parametrize("kind", TIERS)
def test_no_signal_or_trace_outside(tmp_path: Path, kind: str) -> None:
    root = project(tmp_path)
    outside = subprocess.Popen(["sleep", "30"])
    try:
        r = run(root, f"kill -TERM {outside.pid}; echo rc=$?; "
                      f"cat /proc/{os.getpid()}/environ > /dev/null 2>&1; echo env=$?", kind)
        assert outside.poll() is None, "a process outside was signalled"
        assert "env=0" not in r.stdout, r.stdout
    finally:
        outside.kill()
        outside.wait()


@pytest.mark.parametrize("kind", TIERS)
def test_no_new_unix_socket_but_socketpair_works(tmp_path: Path, kind: str) -> None:
    root = project(tmp_path)
    py = ("import socket\n"
          "a, b = socket.socketpair(); print('pair ok')\n"
          "try:\n    socket.socket(socket.AF_UNIX).connect('/tmp/x.sock')\n"
          "except PermissionError: print('unix refused')\n"
          "except OSError as e: print('unix reached', e)\n")
    r = run(root, f"python3 -c \"{py}\"", kind)
    assert "pair ok" in r.stdout and "unix refused" in r.stdout, r.stdout + r.stderr
    r = run(root, f"python3 -c \"{py}\"", kind, unix_sockets=True)
    assert "unix reached" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("kind", TIERS)
def test_no_new_namespaces_no_io_uring_no_capabilities(tmp_path: Path, kind: str) -> None:
    root = project(tmp_path)
    r = run(root, "unshare -U true; echo u=$?; grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; "
                  "grep NoNewPrivs /proc/self/status", kind)
    assert "u=1" in r.stdout, r.stdout + r.stderr
    for cap in ("CapEff", "CapPrm", "CapBnd"):
        assert f"{cap}:\t0000000000000000" in r.stdout, r.stdout
    assert "NoNewPrivs:\t1" in r.stdout


@pytest.mark.parametrize("kind", TIERS)
def test_inherited_descriptors_are_closed(tmp_path: Path, kind: str) -> None:
    root = project(tmp_path)
    fd = os.open(root / "workflows" / "flow.json", os.O_WRONLY | os.O_APPEND)
    try:
        cmd = argv(profile(root))
        cmd[1:1] = ["--tier", "ns" if kind == "namespaces" else "landlock"]
        r = subprocess.run([*cmd, "/bin/bash", "-c", f"echo pwned >&{fd}; echo rc=$?"],
                           cwd=root, capture_output=True, text=True, pass_fds=(fd,), timeout=60)
    finally:
        os.close(fd)
    assert "rc=1" in r.stdout, r.stdout + r.stderr
    assert (root / "workflows" / "flow.json").read_text() == "{}\n"


@pytest.mark.parametrize("kind", TIERS)
def test_what_the_command_leaves_running_dies_with_it(tmp_path: Path, kind: str) -> None:
    root = project(tmp_path)
    r = run(root, "(sleep 2; echo late > src/late.txt) & "
                  "setsid bash -c 'sleep 2; echo late > src/late2.txt' & "
                  "nohup bash -c 'sleep 2; echo late > src/late3.txt' >/dev/null 2>&1 & "
                  "echo started", kind)
    assert "started" in r.stdout
    time.sleep(3)
    assert not list((root / "src").glob("late*")), "a process outlived the call"


@pytest.mark.parametrize("kind", TIERS)
def test_exit_status_and_output_are_the_commands(tmp_path: Path, kind: str) -> None:
    root = project(tmp_path)
    r = run(root, "echo out; echo err >&2; exit 7", kind)
    assert (r.returncode, r.stdout, r.stderr) == (7, "out\n", "err\n")
    r = run(root, "kill -9 $$", kind)
    assert r.returncode == 137


def test_a_protected_file_made_at_the_top_is_removed_after_the_call(tmp_path: Path) -> None:
    root = project(tmp_path)
    r = run(root, "echo '{\"fail_open\": true}' > statewright.json; cat statewright.json")
    assert "fail_open" in r.stdout  # (it existed during the call)
    assert not (root / "statewright.json").exists()
    assert "statewright sandbox: removed" in r.stderr and "statewright.json" in r.stderr


def test_network_off_keeps_loopback(tmp_path: Path) -> None:
    root = project(tmp_path)
    py = ("import socket\n"
          "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
          "c = socket.create_connection(s.getsockname()); print('loopback ok')\n"
          "try:\n    socket.create_connection(('192.0.2.1', 80), timeout=2)\n"
          "except OSError as e: print('out refused', type(e).__name__)\n")
    r = run(root, f"python3 -c \"{py}\"", network=False)
    assert "loopback ok" in r.stdout and "out refused" in r.stdout, r.stdout + r.stderr


def test_bad_arguments_are_refused_with_a_clear_line(tmp_path: Path) -> None:
    for args in (["--ro", "relative", "--", "true"], ["--bogus", "--", "true"], ["--ro"], []):
        r = subprocess.run([HELPER, *args], capture_output=True, text=True, timeout=30)
        assert r.returncode == 125 and r.stderr.startswith("statewright sandbox:"), (args, r)


def test_probe_names_the_tier() -> None:
    out = subprocess.run([HELPER, "--probe"], capture_output=True, text=True, timeout=30).stdout
    assert out.split()[0] in ("namespaces", "landlock", "none")
    assert tier().kind == out.split()[0]


def test_wrap_runs_through_bash_as_the_host_would(tmp_path: Path) -> None:
    root = project(tmp_path)
    outer = ("shopt -s expand_aliases; alias ll='ls -d'; greet() { echo hi-$1; }\n"
             + wrap(profile(root), "ll src; greet you; cd src/pkg && exit 4")
             + "\necho \"status=$? pwd=$PWD\"")
    r = subprocess.run(["bash", "-c", outer], cwd=root, capture_output=True, text=True,
                       timeout=60, env={**os.environ, "SECRET_TOKEN": SECRET})
    assert r.stdout.splitlines() == ["src", "hi-you",
                                     f"status=4 pwd={root.resolve()}/src/pkg"], r.stdout + r.stderr


def test_nested_in_a_sandbox_that_refuses_namespaces_it_falls_back_to_landlock(
        tmp_path: Path) -> None:
    """Inside another sandbox that refuses new user namespaces (Claude Code's own, emulated by
    an outer launcher, whose seccomp filter refuses them), the launcher falls back to Landlock
    alone and its rules still hold."""
    root = project(tmp_path)
    outer = [HELPER, "--root", str(root), "--"]
    inner = argv(profile(root))
    r = subprocess.run([*outer, *inner, "/bin/bash", "-c",
                        "rm workflows/flow.json; echo rm=$?; echo ok > src/x.txt; "
                        "cat /proc/self/status | grep -c Seccomp"],
                       cwd=root, capture_output=True, text=True, timeout=60)
    assert "rm=1" in r.stdout, r.stdout + r.stderr
    assert (root / "workflows" / "flow.json").read_text() == "{}\n"
    assert (root / "src" / "x.txt").read_text() == "ok\n"
    out = subprocess.run([*outer, HELPER, "--probe"], capture_output=True, text=True,
                         timeout=30).stdout
    assert out.startswith("landlock"), out
