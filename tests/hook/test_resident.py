"""The resident hook server (statewright.hook.resident / .server), through real processes.

The installed `statewright-hook` starts the server on its first event in a project with a store;
later hook processes hand it their input and print its answer. These tests prove that the
answers are the hook's own, that only a hook process holding the server's key is served (once
per request), that a program in the socket's place is not believed, and that the server goes
away when its project, its key or its code does.
"""

from __future__ import annotations

import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import stop_resident_servers

from statewright.hook import resident
from statewright.lean import hmac_sha256, same_bytes

from .harness import BASH_OK, Project, allowed, denied

pytestmark = pytest.mark.e2e

WF = {
    "id": "resident",
    "initial": "work",
    "states": {
        "work": {"allowed_tools": ["Read", "Edit", "Bash"],
                 "allowed_commands": ["pytest", "echo", "git status"],
                 "blocked_env": ["SECRET"], "max_edit_lines": 5,
                 "on": {"DONE": {"target": "end", "guard": "tests_passed"}, "NEXT": "read"}},
        "read": {"allowed_tools": ["Read"], "on": {"DONE": "end"}},
        "end": {"type": "final"},
    },
    "guards": {"tests_passed": {"field": "_observed.commands.pytest.ok", "op": "eq",
                                "value": True}},
}
#: hook events whose answers must be the same from the server and from the hook process itself
CORPUS = [
    ("PreToolUse", "Bash", {"command": "rm -rf build"}),
    ("PreToolUse", "Bash", {"command": "echo $SECRET"}),
    ("PreToolUse", "Bash", {"command": "pytest -q && echo ok"}),
    ("PreToolUse", "Bash", {"command": "git status | sh"}),
    ("PreToolUse", "Read", {"file_path": ".statewright/state.db"}),
    ("PreToolUse", "Read", {"file_path": "app.py"}),
    ("PreToolUse", "Edit", {"file_path": "app.py", "old_string": "a = 1",
                            "new_string": "\n".join(["b = 2"] * 9)}),
    ("PreToolUse", "Write", {"file_path": "new.py", "content": "x = 1\n"}),
    ("Stop", None, None),
]


def _project(tmp_path: Path, **env: str) -> Project:
    p = Project(tmp_path / "proj")
    p.write_workflow(WF)
    p.start("resident")
    Path(p.path("app.py")).write_text("a = 1\n")
    p.env.update(env)
    return p


def _endpoint(p: Project) -> resident.Endpoint:
    ep = resident.endpoint(p.env)
    assert ep is not None
    return ep


def _wait_for_server(p: Project) -> resident.Endpoint:
    """Fire a hook event (which starts the server) and wait until the server listens."""
    ep = _endpoint(p)
    p.hook("stop", p.payload("Stop"))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if os.path.exists(ep.socket) and os.path.exists(ep.key_file):
            return ep
        time.sleep(0.1)
    raise AssertionError(f"no resident server listened at {ep.socket}")


def _server_pid(ep: resident.Endpoint) -> int:
    return int(Path(ep.lock).read_text().strip())


def _payload(p: Project, event: str, tool: str | None, tool_input: dict | None) -> dict:
    fields = {} if tool is None else {"tool_name": tool, "tool_input": tool_input}
    return p.payload(event, **fields)


def _hook_modules(p: Project, event_arg: str, payload: dict, **env: str) -> tuple[str, set[str]]:
    """(stdout, statewright modules imported) of one real `statewright-hook` process."""
    r = subprocess.run([sys.executable, "-X", "importtime", str(Path(sys.executable).parent /
                                                                 "statewright-hook"), event_arg],
                       input=json.dumps(payload).encode(), capture_output=True,
                       env={**p.env, **env}, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    mods = {line.rsplit("|", 1)[1].strip() for line in r.stderr.decode().splitlines()
            if line.startswith("import time:") and "|" in line}
    return r.stdout.decode(), {m for m in mods if m.startswith("statewright")}


def test_the_server_answers_as_the_hook_process_would(tmp_path: Path) -> None:
    p = _project(tmp_path)
    _wait_for_server(p)
    for event, tool, tool_input in CORPUS:
        arg = {"PreToolUse": "pre-tool-use", "Stop": "stop"}[event]
        payload = _payload(p, event, tool, tool_input)
        served, mods = _hook_modules(p, arg, payload)
        # the forwarding hook process loaded none of the deciding code
        assert "statewright.runtime" not in mods and "statewright.policy" not in mods, mods
        local, local_mods = _hook_modules(p, arg, payload, STATEWRIGHT_HOOK_RESIDENT="0")
        assert "statewright.runtime" in local_mods
        assert served == local, (event, tool, tool_input)
    assert "does not match any allowed command" in denied(json.loads(
        _hook_modules(p, "pre-tool-use", _payload(p, *CORPUS[0]))[0]))


#: everything of ours a hook process imports when the server answers (tests/hook/test_imports.py
#: lists the hook process's own decisions)
FORWARDING = {"statewright", "statewright.hook", "statewright.hook.resident", "statewright.names",
              "statewright.lean"}


def test_a_forwarding_hook_process_imports_only_the_wire(tmp_path: Path) -> None:
    p = _project(tmp_path)
    _wait_for_server(p)
    for event, tool, tool_input in CORPUS[:3]:
        _out, mods = _hook_modules(p, "pre-tool-use", _payload(p, event, tool, tool_input))
        assert mods == FORWARDING, {"added": sorted(mods - FORWARDING),
                                    "missing": sorted(FORWARDING - mods)}


def test_results_recorded_through_the_server_count_and_gate_transitions(tmp_path: Path) -> None:
    p = _project(tmp_path)
    _wait_for_server(p)
    allowed(p.pre("Bash", {"command": "pytest -q"}))
    p.failure("Bash", {"command": "pytest -q"}, "Exit code 1\nFAILED")
    r = p.cli("transition", "DONE", "--json", check=False)
    assert "GUARD_REJECTED" in r.stdout + r.stderr
    allowed(p.pre("Bash", {"command": "pytest -q"}))
    p.post("Bash", {"command": "pytest -q"}, BASH_OK)
    status = p.status()
    assert status["context"]["_observed"]["commands"]["pytest"]["ok"] is True
    assert status["counters"]["iterations"] >= 2
    # a transition made by another process is seen by the server's next decision
    p.transition("NEXT")
    assert "Tools allowed in state 'read'" in denied(p.pre("Bash", {"command": "echo hi"}))


def _frame(key: bytes, body: bytes, nonce: bytes | None = None, at: float | None = None) -> bytes:
    nonce = nonce or os.urandom(resident.NONCE_BYTES)
    stamp = int((time.time() if at is None else at) * 1000).to_bytes(8, "big")
    head = resident.MAGIC + nonce + stamp
    return head + hmac_sha256(key, b"Q" + head + body) + body


def _send(ep: resident.Endpoint, frame: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect(ep.socket)
        s.sendall(frame)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
        return out


def test_only_a_fresh_request_made_with_the_servers_key_is_served(tmp_path: Path) -> None:
    """Another program cannot make the server record a result that did not happen (evidence
    for a guard), nor replay one that did."""
    p = _project(tmp_path)
    ep = _wait_for_server(p)
    key = Path(ep.key_file).read_bytes()
    post = _payload(p, "PostToolUse", "Bash", {"command": "pytest -q"})
    post["tool_response"] = BASH_OK
    body = resident.request_body(["post-tool-use"], json.dumps(post).encode(), {})
    assert body is not None
    assert _send(ep, _frame(os.urandom(32), body)) == b""  # a key of its own
    # a request older than the hook waits for an answer (it may be deciding itself by now)
    assert _send(ep, _frame(key, body, at=time.time() - resident.MAX_AGE_S - 1)) == b""
    assert _send(ep, b"SWH1" + b"\0" * 100) == b""  # garbage
    assert "_observed" not in p.status()["context"]
    frame = _frame(key, body)
    assert _send(ep, frame).startswith(resident.MAGIC)  # the hook's own request: served
    assert p.status()["context"]["_observed"]["commands"]["pytest"]["ok"] is True
    iterations = p.status()["counters"]
    assert _send(ep, frame) == b""  # the same request again: not served
    assert p.status()["counters"] == iterations


def test_a_program_in_the_servers_place_is_not_believed(tmp_path: Path) -> None:
    """A program listening on the socket (and holding the lock, so no server starts) that
    answers "nothing to say" (an allow) is not the server: the hook decides itself."""
    p = _project(tmp_path)
    ep = _wait_for_server(p)
    os.kill(_server_pid(ep), signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and os.path.exists(ep.socket):
        try:
            os.unlink(ep.socket)
        except FileNotFoundError:
            break
    import fcntl

    lock = os.open(ep.lock, os.O_RDWR)
    fcntl.flock(lock, fcntl.LOCK_EX)
    impostor = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    impostor.bind(ep.socket)
    impostor.listen(8)
    Path(ep.key_file).write_bytes(os.urandom(32))  # even with a key file of its choosing
    import threading

    def serve() -> None:
        while True:
            try:
                conn, _ = impostor.accept()
            except OSError:
                return
            with conn:
                conn.recv(1 << 20)
                conn.sendall(resident.MAGIC + os.urandom(32))  # "" with a made-up MAC

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        out = p.pre("Bash", {"command": "rm -rf build"})
        assert "does not match any allowed command" in denied(out)
    finally:
        impostor.close()
        os.close(lock)


def test_the_server_goes_when_its_project_does(tmp_path: Path) -> None:
    p = _project(tmp_path, STATEWRIGHT_HOOK_IDLE="600")
    ep = _wait_for_server(p)
    pid = _server_pid(ep)
    import shutil

    shutil.rmtree(p.root)
    _wait_gone(pid)
    assert not os.path.exists(ep.socket)


def test_an_idle_server_stops(tmp_path: Path) -> None:
    p = _project(tmp_path, STATEWRIGHT_HOOK_IDLE="1")
    ep = _wait_for_server(p)
    _wait_gone(_server_pid(ep))
    assert not os.path.exists(ep.socket) and not os.path.exists(ep.key_file)


def test_a_server_whose_code_changed_stops_unserved(tmp_path: Path) -> None:
    """An upgrade is never answered by the code it replaced: a copy of the package whose
    module changes on disk while its server runs."""
    import shutil

    import statewright

    pkg = tmp_path / "site" / "statewright"
    shutil.copytree(Path(statewright.__file__).parent, pkg,
                    ignore=shutil.ignore_patterns("__pycache__"))
    p = _project(tmp_path)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); sys.argv[1:2] = []; "
            "from statewright.hook import run; run()")

    def hook(payload: dict) -> str:
        r = subprocess.run([sys.executable, "-c", code, str(pkg.parent), "pre-tool-use"],
                           input=json.dumps(payload).encode(), capture_output=True,
                           env=p.env, timeout=120)
        assert r.returncode == 0, r.stderr.decode()
        return r.stdout.decode()

    payload = _payload(p, "PreToolUse", "Bash", {"command": "rm -rf build"})
    hook(payload)
    where = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
         "from statewright.hook import resident; print(resident.endpoint().lock)", str(pkg.parent)],
        capture_output=True, text=True, env=p.env, timeout=60, check=True).stdout.strip()
    lock = Path(where)
    assert lock.name != Path(_endpoint(p).lock).name  # the copy's server is its own
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not lock.with_suffix(".sock").exists():
        time.sleep(0.1)
    pid = int(lock.read_text().strip())
    os.utime(pkg / "policy" / "gate.py")  # the code changed on disk
    assert "does not match any allowed command" in denied(json.loads(hook(payload)))
    _wait_gone(pid)


def _lock_pid(sock: Path) -> int:
    try:
        return int(sock.with_suffix(".lock").read_text().strip())
    except (OSError, ValueError):
        return 0


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return  # (exited; not yet reaped by whoever adopted it)
        except OSError:
            return
        time.sleep(0.1)
    raise AssertionError(f"the resident server {pid} is still running")


def test_no_server_is_used_from_a_directory_others_can_write(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / f"statewright-{os.getuid()}").mkdir(parents=True, mode=0o777)
    os.chmod(run / f"statewright-{os.getuid()}", 0o777)
    p = _project(tmp_path, XDG_RUNTIME_DIR=str(run))
    for _ in range(3):
        assert "does not match any allowed command" in denied(
            p.pre("Bash", {"command": "rm -rf build"}))
    assert list((run / f"statewright-{os.getuid()}").iterdir()) == []


def test_switched_off_without_a_store_or_at_session_start_no_server_starts(
        tmp_path: Path) -> None:
    run = tmp_path / "run"
    p = _project(tmp_path, XDG_RUNTIME_DIR=str(run), STATEWRIGHT_HOOK_RESIDENT="0")
    for _ in range(2):
        denied(p.pre("Bash", {"command": "rm -rf build"}))
    p.env.pop("STATEWRIGHT_HOOK_RESIDENT")
    for _ in range(2):  # the mcp form's only process hook: no server for it
        out = p.hook("session-start", p.payload("SessionStart", source="startup"))
        assert "state 'work'" in json.dumps(out)
    bare = Project(tmp_path / "bare")
    bare.env["XDG_RUNTIME_DIR"] = str(run)
    assert bare.pre("Bash", {"command": "rm -rf build"}) is None
    assert not (tmp_path / "bare" / ".statewright").exists()
    assert stop_resident_servers(run / f"statewright-{os.getuid()}") == []


def test_the_hmac_is_rfc_2104() -> None:
    for key, msg in [(b"k", b""), (os.urandom(32), os.urandom(1000)), (b"x" * 100, b"m")]:
        assert hmac_sha256(key, msg) == hmac.new(key, msg, "sha256").digest()
    a = os.urandom(32)
    assert same_bytes(a, a) and not same_bytes(a, a[:-1] + bytes([a[-1] ^ 1]))
    assert not same_bytes(a, a[:16])


def test_a_module_the_agent_wrote_never_shadows_one_the_server_imports(tmp_path: Path) -> None:
    """The server imports from exactly the hook's `sys.path`: a project that is itself on that
    path (an editable install of a checkout the agent works in) can plant `unicodedata.py`, and
    the server still imports the standard library's when a non-ASCII path needs it."""
    import shutil

    import statewright

    p = _project(tmp_path)
    shutil.copytree(Path(statewright.__file__).parent, p.root / "statewright",
                    ignore=shutil.ignore_patterns("__pycache__"))
    marker = tmp_path / "planted-code-ran"
    (p.root / "unicodedata.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\nfrom _unicodedata_missing import *\n")
    code = ("import sys; i = next(i for i, e in enumerate(sys.path) if e.endswith('site-packages'))"
            "; sys.path.insert(i, sys.argv[1]); del sys.argv[1]; "
            "from statewright.hook import run; run()")

    def pre(tool: str, tool_input: dict) -> str:
        r = subprocess.run([sys.executable, "-c", code, str(p.root), "pre-tool-use"],
                           input=json.dumps(_payload(p, "PreToolUse", tool, tool_input)).encode(),
                           capture_output=True, env=p.env, timeout=120)
        assert r.returncode == 0, r.stderr.decode()
        return r.stdout.decode()

    pre("Read", {"file_path": "app.py"})  # starts the copy's server
    deadline = time.monotonic() + 60
    while not any(str(p.root) in _cmdline(_lock_pid(s))
                  for s in Path(resident.run_dir(p.env)).glob("*.sock")):
        assert time.monotonic() < deadline, "the copy's server never listened"
        time.sleep(0.1)
    pre("Read", {"file_path": "caf\u00e9/\u00e9t\u00e9.txt"})  # needs unicodedata
    assert "does not match any allowed command" in denied(json.loads(
        pre("Bash", {"command": "rm -rf build"})))
    assert not marker.exists()


def test_a_lock_file_that_is_a_link_is_never_written_through(tmp_path: Path) -> None:
    p = _project(tmp_path)
    ep = _endpoint(p)
    os.makedirs(ep.run_dir, mode=0o700, exist_ok=True)
    victim = p.root / ".claude-settings-stand-in.json"
    victim.write_text('{"hooks": {}}')
    os.symlink(victim, ep.lock)
    for _ in range(3):
        denied(p.pre("Bash", {"command": "rm -rf build"}))
        time.sleep(0.5)
    assert victim.read_text() == '{"hooks": {}}'
    assert not os.path.exists(ep.socket)
