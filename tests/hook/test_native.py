"""The process-form hook's native client, `statewright-hook-native`, through real processes.

The installed client is fed the real hook payloads (Claude Code's, and the golden payloads
captured from Codex, Gemini CLI and Copilot CLI) and must print what the Python hook prints,
byte for byte: forwarded to a real resident server, and handed to the Python hook wherever it
cannot forward (no server, a hung one, one that dies mid-answer, a forged answer, bad input).

To see which process answered, the client runs from a directory of its own (a copy of the
installed client beside a copy of the `statewright-hook` script that notes each start in a
file): an event the client forwarded started no Python at all.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import VENV_BIN, clean_env, stop_resident_servers

from statewright.hook import resident
from statewright.lean import sha256

from .harness import Project
from .test_host_payloads import WF as HOSTS_WF
from .test_host_payloads import golden

pytestmark = pytest.mark.e2e

NATIVE = VENV_BIN / "statewright-hook-native"
#: a locale that Python does not coerce (the naming variables stay as the test sets them)
LOCALE = {"LC_ALL": "C.UTF-8"}

WF = {
    "id": "native",
    "initial": "work",
    "states": {
        "work": {"allowed_tools": ["Read", "Edit", "Bash", "Write"],
                 "allowed_commands": ["pytest", "echo", "git status"],
                 "blocked_env": ["SECRET"], "max_edit_lines": 5, "on": {"NEXT": "end"}},
        "end": {"type": "final"},
    },
}

#: (host, event argument, golden file or Claude Code payload fields)
CLAUDE = [
    ("pre-tool-use", {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "rm -rf build"}}),
    ("pre-tool-use", {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "echo $SECRET"}}),
    ("pre-tool-use", {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "echo ok"}}),
    ("post-tool-use", {"hook_event_name": "PostToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "echo ok"},
                       "tool_response": {"stdout": "ok\n", "stderr": "", "interrupted": False,
                                         "isImage": False}}),
    ("pre-tool-use", {"hook_event_name": "PreToolUse", "tool_name": "Read",
                      "tool_input": {"file_path": ".statewright/state.db"}}),
    ("pre-tool-use", {"hook_event_name": "PreToolUse", "tool_name": "Edit",
                      "tool_input": {"file_path": "app.py", "old_string": "a = 1",
                                     "new_string": "\n".join(["b = 2"] * 9)}}),
    ("pre-tool-use", {"hook_event_name": "PreToolUse", "tool_name": "WebFetch",
                      "tool_input": {"url": "https://example.com"}}),
    ("user-prompt-submit", {"hook_event_name": "UserPromptSubmit", "prompt": "go on"}),
    ("stop", {"hook_event_name": "Stop", "stop_hook_active": False}),
]
HOSTS = {
    # (the first event starts the server: not SessionStart, which never does)
    "codex": ["UserPromptSubmit", "SessionStart", "PreToolUse-Bash", "PostToolUse-Bash",
              "PreToolUse-apply_patch", "PostToolUse-apply_patch",
              "PreToolUse-collaborationspawn_agent", "PreToolUse-subagent-Bash", "Stop"],
    "gemini": ["BeforeAgent", "BeforeTool-run_shell_command",
               "AfterTool-run_shell_command", "BeforeTool-write_file", "AfterTool-write_file",
               "BeforeTool-replace", "BeforeTool-read_file", "AfterAgent"],
    "copilot": ["userPromptSubmitted", "sessionStart", "preToolUse-bash", "postToolUse-bash",
                "preToolUse-create", "postToolUse-create", "preToolUse-edit",
                "preToolUse-view", "agentStop"],
}


# -- the client in a directory of its own ------------------------------------------------------

class Client:
    """A copy of the installed client beside a `statewright-hook` that notes its starts."""

    def __init__(self, base: Path) -> None:
        self.bin = base / "bin"
        self.bin.mkdir(parents=True)
        self.marks = base / "python-starts"
        shutil.copy2(NATIVE, self.bin / "statewright-hook-native")
        shebang, rest = (VENV_BIN / "statewright-hook").read_text().split("\n", 1)
        note = f"open({str(self.marks)!r}, 'a').write('started\\n')\n"
        (self.bin / "statewright-hook").write_text(f"{shebang}\n{note}{rest}")
        (self.bin / "statewright-hook").chmod(0o755)

    @property
    def native(self) -> Path:
        return self.bin / "statewright-hook-native"

    @property
    def python(self) -> Path:
        """The Python hook the client hands over to (its answers are the ones to match: the
        hook's own directory is one a sandboxed line may not change, so it is in them)."""
        return self.bin / "statewright-hook"

    def python_starts(self) -> int:
        try:
            return len(self.marks.read_text().splitlines())
        except FileNotFoundError:
            return 0

    def facts_file(self, state_dir: Path) -> Path:
        ident = sha256(str(self.bin.resolve()).encode()).hexdigest()[:32]
        return state_dir / f"hook-native-{ident}.facts"


def run(program: Path | str, args: list[str], stdin: bytes, env: dict[str, str],
        cwd: Path | None = None) -> tuple[int, bytes, bytes, float]:
    t0 = time.monotonic()
    r = subprocess.run([str(program), *args], input=stdin, capture_output=True, env=env,
                       cwd=cwd, timeout=120)
    assert b"Traceback" not in r.stderr + r.stdout, r.stderr.decode()
    return r.returncode, r.stdout, r.stderr, time.monotonic() - t0


def wait_for_server(ep: resident.Endpoint) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if os.path.exists(ep.socket) and os.path.exists(ep.key_file):
            return
        time.sleep(0.05)
    raise AssertionError(f"no resident server listened at {ep.socket}")


def make_project(root: Path, host: str | None) -> Project:
    p = Project(root)
    p.write_workflow(HOSTS_WF if host else WF)
    p.start(HOSTS_WF["id"] if host else WF["id"])
    (p.root / "app.py").write_text("a = 1\n")
    (p.root / "new.txt").write_text("one\ntwo\n")
    p.env.update(LOCALE)
    return p


def events(p: Project, host: str | None) -> list[tuple[list[str], bytes]]:
    """The sequence of (arguments, stdin) one session sends."""
    if host is None:
        return [([arg], json.dumps(p.payload(fields["hook_event_name"], **fields)).encode())
                for arg, fields in CLAUDE]
    out = []
    for name in HOSTS[host]:
        data = golden(host, f"{name}.json", p.root)
        event = data.get("hook_event_name") or name.split("-")[0]
        out.append(([f"--host={host}", event], json.dumps(data).encode()))
        if name.lower().endswith(("pretooluse-bash", "beforetool-run_shell_command")):
            # the same call with a line the state does not allow
            args = data.get("tool_input") or data["toolArgs"]
            args["command"] = "rm -rf build"
            out.append(([f"--host={host}", event], json.dumps(data).encode()))
    return out


def replay(p: Project, program: Path | str, host: str | None) -> list[tuple[int, bytes]]:
    """The session's events through `program`; the first one starts the resident server,
    which the rest find listening."""
    answers = []
    ep = resident.endpoint(p.env)
    assert ep is not None
    for i, (args, stdin) in enumerate(events(p, host)):
        rc, out, _err, _t = run(program, args, stdin, p.env)
        # (what differs between two projects: their paths and run ids)
        out = out.replace(str(p.root).encode(), b"<root>")
        answers.append((rc, re.sub(rb"run_[0-9a-f]{12}", b"<run>", out)))
        if i == 0:
            wait_for_server(ep)
    return answers


@pytest.fixture
def client(tmp_path: Path) -> Client:
    assert NATIVE.is_file(), "make venv builds the native client where a C compiler is"
    return Client(tmp_path / "client")


@pytest.fixture
def runs() -> Iterator[None]:
    yield
    stop_resident_servers(Path(resident.run_dir(os.environ)))


# -- the same answers ---------------------------------------------------------------------------

@pytest.mark.parametrize("host", [None, "codex", "gemini", "copilot"])
def test_the_client_answers_as_the_python_hook_does(tmp_path: Path, client: Client,
                                                    host: str | None, runs: None) -> None:
    """A whole session's events, through the Python hook in one project and through the
    native client in another made alike: the same bytes and exit statuses, and the client
    started Python only for the first event (no server, no facts yet)."""
    py = make_project(tmp_path / "a" / "proj", host)
    expected = replay(py, client.python, host)
    stop_resident_servers(Path(resident.run_dir(os.environ)))
    native = make_project(tmp_path / "b" / "proj", host)
    before = client.python_starts()
    got = replay(native, client.native, host)
    assert got == expected
    assert any(b"deny" in out for _rc, out in got)  # (the corpus refuses, as it allows)
    assert client.python_starts() == before + 1, "every event after the first was forwarded"


def test_without_a_server_every_event_goes_to_the_python_hook(tmp_path: Path,
                                                              client: Client) -> None:
    p = make_project(tmp_path / "proj", None)
    p.env["STATEWRIGHT_HOOK_RESIDENT"] = "0"
    n = 0
    for args, stdin in events(p, None):
        expected = run(client.python, args, stdin, p.env)
        got = run(client.native, args, stdin, p.env)
        assert got[:3] == expected[:3], args
        n += 1
    assert client.python_starts() == 2 * n  # (n of them the Python hook's own)


def test_a_project_without_a_store_is_the_python_hooks(tmp_path: Path, client: Client) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    env = clean_env(CLAUDE_PROJECT_DIR=str(root), **LOCALE)
    stdin = json.dumps({"session_id": "s", "cwd": str(root), "hook_event_name": "PreToolUse",
                        "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}).encode()
    expected = run(client.python, ["pre-tool-use"], stdin, env)
    assert run(client.native, ["pre-tool-use"], stdin, env)[:3] == \
        expected[:3]
    assert client.python_starts() == 2


def test_codex_without_a_project_variable_forwards_from_its_directory(
        tmp_path: Path, client: Client, runs: None) -> None:
    """Codex names no project for its hooks: the client finds it from the working directory
    as the Python hook does, and forwards to the same server."""
    p = make_project(tmp_path / "proj", "codex")
    env = {k: v for k, v in p.env.items() if k != "CLAUDE_PROJECT_DIR"}
    sub = p.root / "src"
    sub.mkdir()
    seq = events(p, "codex")
    prog = client.native
    run(prog, *seq[0], env, cwd=sub)
    ep = resident.endpoint({**env, "CLAUDE_PROJECT_DIR": str(p.root)})
    assert ep is not None
    wait_for_server(ep)
    for args, stdin in seq[2:4]:
        expected = run(client.python, args, stdin,
                       {**env, "STATEWRIGHT_HOOK_RESIDENT": "0"}, cwd=sub)
        before = client.python_starts()
        got = run(prog, args, stdin, env, cwd=sub)
        assert client.python_starts() == before
        assert got[:3] == expected[:3]


def test_pythons_locale_coercion_names_the_same_server(tmp_path: Path, client: Client,
                                                      runs: None) -> None:
    """Without any locale set, Python sets LC_CTYPE in its own environment at start, which
    names the server: the client does as Python does, and still forwards."""
    p = make_project(tmp_path / "proj", None)
    env = {k: v for k, v in p.env.items() if not k.startswith(("LC_", "LANG"))}
    (args, stdin), *rest = events(p, None)
    prog = client.native
    run(prog, args, stdin, env)
    ep = resident.endpoint({**env, "LC_CTYPE": "C.UTF-8"})
    assert ep is not None
    wait_for_server(ep)
    before = client.python_starts()
    for args, stdin in rest[:3]:
        run(prog, args, stdin, env)
    assert client.python_starts() == before


# -- when the server fails --------------------------------------------------------------------

class FakeServer:
    """Something listening at the server's socket, with a key file beside the store, that
    does `behaviour(conn, request)` with each connection."""

    def __init__(self, ep: resident.Endpoint, behaviour: Any, key: bytes | None = None) -> None:
        os.makedirs(ep.run_dir, mode=0o700, exist_ok=True)
        if os.path.exists(ep.socket):
            os.unlink(ep.socket)
        self.key = key or os.urandom(resident.KEY_BYTES)
        fd = os.open(ep.key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, self.key)
        os.close(fd)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(ep.socket)
        self.sock.listen(8)
        self.behaviour = behaviour
        self.conns: list[socket.socket] = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            data = b""
            while chunk := conn.recv(65536):
                data += chunk
            self.behaviour(self, conn, data)

    def close(self) -> None:
        self.sock.close()
        for c in self.conns:
            c.close()


def _hang(_srv: FakeServer, _conn: socket.socket, _data: bytes) -> None:
    pass  # (the connection stays open, unanswered)


def _cut(_srv: FakeServer, conn: socket.socket, _data: bytes) -> None:
    conn.sendall(resident.MAGIC + b"\x01" * 10)  # part of an answer, then gone
    conn.close()


def _forge(srv: FakeServer, conn: socket.socket, data: bytes) -> None:
    from statewright.lean import hmac_sha256

    nonce = data[len(resident.MAGIC):len(resident.MAGIC) + resident.NONCE_BYTES]
    out = b""  # "nothing to say": the call would run
    conn.sendall(resident.MAGIC + hmac_sha256(b"k" * 32, b"A" + nonce + out) + out)
    conn.close()


def _prepared(tmp_path: Path, client: Client, host: str | None) -> tuple[Project,
                                                                           resident.Endpoint]:
    """A project whose facts the client knows (as after its first event), with no server."""
    p = make_project(tmp_path / "proj", host)
    ep = resident.endpoint(p.env)
    assert ep is not None
    from statewright.hook.resident import installation_facts

    facts = client.facts_file(Path(ep.state_dir))
    facts.write_bytes("\0".join(installation_facts()).encode())
    facts.chmod(0o600)
    return p, ep


@pytest.mark.parametrize("host", ["gemini", "copilot", "codex"])
def test_a_hung_server_is_refused_within_the_deadline(tmp_path: Path, client: Client,
                                                      host: str) -> None:
    """The deadline runs from the client's start; past it the Python hook refuses at once, in
    the host's form, with the same bytes as the Python hook's own deadline."""
    p, ep = _prepared(tmp_path, client, host)
    p.env["STATEWRIGHT_HOOK_DEADLINE"] = "2"  # (a variable that names another server)
    ep = resident.endpoint(p.env)
    assert ep is not None
    srv = FakeServer(ep, _hang)
    try:
        pre = next(e for e in events(p, host) if "re" in e[0][1] and "Tool" in e[0][1])
        post = next(e for e in events(p, host) if "ost" in e[0][1] or "After" in e[0][1])
        rc, out, _err, took = run(client.native, *pre, p.env)
        assert rc == 0 and b"did not decide in time" in out and 2 <= took < 8, (out, took)
        assert client.python_starts() == 1
        expected = run(client.python, *pre, p.env)
        assert (rc, out) == expected[:2]
        # an event that never refuses ends with nothing to say
        rc, out, _err, took = run(client.native, *post, p.env)
        assert (rc, out) == (0, b"") and took < 8
    finally:
        srv.close()


@pytest.mark.parametrize("behaviour", [_cut, _forge], ids=["cut", "forged"])
def test_an_answer_that_is_not_the_servers_is_decided_by_the_python_hook(
        tmp_path: Path, client: Client, behaviour: Any) -> None:
    """A server that dies mid-answer, or a program answering in its place without its key:
    the Python hook decides itself (never asks again: the server may have served it)."""
    p, ep = _prepared(tmp_path, client, None)
    srv = FakeServer(ep, behaviour)
    try:
        expected = {}
        for args, stdin in events(p, None)[:3]:
            expected[stdin] = run(client.python, args, stdin,
                                  {**p.env, "STATEWRIGHT_HOOK_RESIDENT": "0"})
        asked = len(srv.conns)
        for args, stdin in events(p, None)[:3]:
            got = run(client.native, args, stdin, p.env)
            assert got[:3] == expected[stdin][:3]
        assert len(srv.conns) == asked + 3  # (asked once each: the Python hook did not ask)
        assert client.python_starts() == 6  # (3 of them the Python hook's own)
    finally:
        srv.close()


def test_a_killed_server_is_replaced(tmp_path: Path, client: Client, runs: None) -> None:
    """A server killed outright leaves its socket: the connect is refused, the Python hook
    decides and starts another, which the client then forwards to."""
    p = make_project(tmp_path / "proj", None)
    seq = events(p, None)
    prog = client.native
    run(prog, *seq[0], p.env)
    ep = resident.endpoint(p.env)
    assert ep is not None
    wait_for_server(ep)
    os.kill(int(Path(ep.lock).read_text()), signal.SIGKILL)
    time.sleep(0.2)
    expected = run(client.python, *seq[0], {**p.env,
                                                           "STATEWRIGHT_HOOK_RESIDENT": "0"})
    assert run(prog, *seq[0], p.env)[:3] == expected[:3]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        before = client.python_starts()
        assert run(prog, *seq[0], p.env)[:3] == expected[:3]
        if client.python_starts() == before:
            break
        time.sleep(0.2)
    else:
        raise AssertionError("no new server was forwarded to")


@pytest.mark.parametrize("stdin", [b"", b"not json", b"\xff\xfe{", b"[1, 2]",
                                   b'{"hook_event_name": "PreToolUse"}'])
def test_bad_input_is_answered_as_the_python_hook_answers_it(tmp_path: Path, client: Client,
                                                             stdin: bytes, runs: None) -> None:
    p = make_project(tmp_path / "proj", None)
    prog = client.native
    run(prog, *events(p, None)[0], p.env)
    ep = resident.endpoint(p.env)
    assert ep is not None
    wait_for_server(ep)
    for args in (["pre-tool-use"], ["--host=gemini", "BeforeTool"], ["no-such-event"]):
        expected = run(client.python, args, stdin, p.env)
        got = run(prog, args, stdin, p.env)
        assert got[:3] == expected[:3], args
        assert args[0] == "no-such-event" or b"deny" in got[1]


# -- what the client trusts -------------------------------------------------------------------

def test_without_the_python_hook_beside_it_the_client_refuses(tmp_path: Path) -> None:
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy2(NATIVE, alone / "statewright-hook-native")
    p = make_project(tmp_path / "proj", None)
    p.env["PATH"] = f"{VENV_BIN}{os.pathsep}{p.env.get('PATH', '')}"  # (never looked up there)
    rc, out, err, _t = run(alone / "statewright-hook-native", *events(p, None)[0], p.env)
    assert rc == 2 and out == b"" and b"refused" in err


def test_files_others_could_have_written_are_not_used(tmp_path: Path, client: Client,
                                                      runs: None) -> None:
    """A key or facts file that is a link, or that another user could write, and a run
    directory others can enter: the client does not forward (the Python hook decides, by its
    own checks), and never prints what such a server says."""
    p, ep = _prepared(tmp_path, client, None)
    srv = FakeServer(ep, _forge)
    args, stdin = events(p, None)[0]
    expected = run(client.python, args, stdin,
                   {**p.env, "STATEWRIGHT_HOOK_RESIDENT": "0"})
    try:
        key = Path(ep.key_file)
        facts = client.facts_file(Path(ep.state_dir))
        for spoil, undo in [
            (lambda: key.chmod(0o622), lambda: key.chmod(0o600)),
            (lambda: facts.chmod(0o666), lambda: facts.chmod(0o600)),
            (lambda: (facts.rename(facts.with_suffix(".real")),
                      facts.symlink_to(facts.with_suffix(".real"))),
             lambda: (facts.unlink(), facts.with_suffix(".real").rename(facts))),
            (lambda: os.chmod(ep.run_dir, 0o755), lambda: os.chmod(ep.run_dir, 0o700)),
        ]:
            spoil()
            asked = len(srv.conns)
            try:
                got = run(client.native, args, stdin, p.env)
            finally:
                undo()
            assert got[:3] == expected[:3]
            assert len(srv.conns) == asked or b"deny" in got[1]
    finally:
        srv.close()


def _closed_stdout_run(program: Path, args: list[str], stdin: bytes,
                       env: dict[str, str]) -> tuple[int, bytes]:
    """(exit status, stderr) of a run whose stdout nobody reads any more."""
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([str(program), *args], input=stdin, stdout=w,
                              stderr=subprocess.PIPE, env=env, timeout=120)
    finally:
        os.close(w)
    assert b"Traceback" not in proc.stderr
    return proc.returncode, proc.stderr


def test_an_answer_that_cannot_be_written_is_the_python_hooks_to_fail(
        tmp_path: Path, client: Client, runs: None) -> None:
    """The host stopped reading: the client hands the server's reply to the Python hook, which
    fails as it fails itself (a refusal: exit 2 and the reason on stderr)."""
    p = make_project(tmp_path / "proj", None)
    seq = events(p, None)
    run(client.native, *seq[0], p.env)
    ep = resident.endpoint(p.env)
    assert ep is not None
    wait_for_server(ep)
    expected = _closed_stdout_run(client.python, *seq[0], p.env)
    before = client.python_starts()
    got = _closed_stdout_run(client.native, *seq[0], p.env)
    assert got == expected and got[0] == 2
    assert client.python_starts() == before + 1


def test_the_hand_over_variable_alone_never_makes_the_hook_print_its_input(
        tmp_path: Path, client: Client, runs: None) -> None:
    """`emit` says stdin holds the server's answer: the Python hook believes it only with the
    server's MAC over the nonce, so an environment that carries the variable (set by anyone
    but the client) cannot make it print what it reads."""
    p = make_project(tmp_path / "proj", None)
    args, stdin = events(p, None)[0]
    run(client.native, args, stdin, p.env)
    ep = resident.endpoint(p.env)
    assert ep is not None
    wait_for_server(ep)
    forged = os.urandom(16) + resident.MAGIC + os.urandom(32) + b"{}"
    for value in ("emit=0", "emit=0,deadline=99999999999999"):
        rc, out, _err, _t = run(client.python, args, forged, {**p.env,
                                                              "STATEWRIGHT_HOOK_NATIVE": value})
        assert rc == 0 and b'"permissionDecision": "deny"' in out and b"{}" != out.strip()
