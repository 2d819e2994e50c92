"""init, schema, check's input, runs/history at 80 columns, serve's notes: the installed
`statewright` console script in scratch projects."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import socket
import subprocess
import time
from pathlib import Path

import jsonschema
import pytest

from tests.cli.helpers import one_error_line, sw
from tests.conftest import REPO, bin_path, clean_env


def _git_project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    return root, home


# -- init ----------------------------------------------------------------------------------------

def test_init_writes_a_valid_starter_and_wires_claude_code_idempotently(tmp_path):
    root, home = _git_project(tmp_path)
    sub = root / "src"
    sub.mkdir()
    p = sw("init", cwd=sub, HOME=str(home))  # from a subdirectory: the project root is found
    assert p.returncode == 0, p.stderr
    wf = root / "workflows" / "starter.json"
    assert wf.is_file() and "created" in p.stdout
    v = sw("validate", str(wf), "--json", "--strict")
    report = json.loads(v.stdout)
    assert v.returncode == 0 and report["errors"] == 0 and report["warnings"] == 0, v.stdout
    # the installer's default scope and files (local: .claude/settings.local.json, ~/.claude.json)
    settings = list((root / ".claude").glob("settings*.json"))
    assert settings and any('"PreToolUse"' in f.read_text() for f in settings)
    assert any(line.startswith("statewright installed in ") for line in p.stdout.splitlines())
    wiring = {f: f.read_text() for f in [*settings, *root.glob(".mcp*.json"),
                                         *home.glob(".claude*.json")]}
    before = wf.read_text()
    again = sw("init", cwd=root, HOME=str(home))
    assert again.returncode == 0 and "unchanged" in again.stdout, again
    assert wf.read_text() == before
    assert {f: f.read_text() for f in wiring} == wiring
    started = sw("start", "starter", "--project", str(root), "--json")
    assert json.loads(started.stdout)["state"] == "plan"


def test_init_never_overwrites_a_changed_workflow_without_force(tmp_path):
    root, home = _git_project(tmp_path)
    wf = root / "workflows" / "starter.json"
    wf.parent.mkdir()
    wf.write_text('{"id": "starter", "mine": true}\n')
    p = sw("init", "--project", str(root), "--no-install", HOME=str(home))
    assert p.returncode == 0 and "--force" in p.stdout  # kept, and said so
    assert wf.read_text() == '{"id": "starter", "mine": true}\n'
    forced = sw("init", "--project", str(root), "--force", "--no-install", HOME=str(home))
    assert forced.returncode == 0 and "overwrote" in forced.stdout
    assert json.loads(wf.read_text())["initial"] == "plan"
    assert not (root / ".claude").exists()  # --no-install
    named = sw("init", "--project", str(root), "--name", "mine", "--no-install")
    assert named.returncode == 0 and json.loads(
        (root / "workflows" / "mine.json").read_text())["id"] == "mine"
    bad = sw("init", "--project", str(root), "--name", "../x", "--no-install")
    one_error_line(bad, "INVALID_ARGUMENTS")


# -- schema --------------------------------------------------------------------------------------

def test_schema_prints_and_writes_the_published_schemas(tmp_path):
    p = sw("schema")
    assert p.returncode == 0
    assert json.loads(p.stdout) == json.loads((REPO / "schema" / "workflow-schema.json").read_text())
    out = tmp_path / "config-schema.json"
    w = sw("schema", "--config", "--output", str(out))
    assert w.returncode == 0 and w.stdout == ""
    assert json.loads(out.read_text()) == json.loads(
        (REPO / "schema" / "config-schema.json").read_text())
    one_error_line(sw("schema", "-o", str(tmp_path / "no" / "dir" / "x.json")), "INVALID_ARGUMENTS")


CONFIGS = [
    ({}, True),
    ({"mcpServers": {"fs": {"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}}}}, True),
    ({"mcpServers": {"web": {"type": "http", "url": "https://example.org/mcp",
                             "headers": {"Authorization": "Bearer x"}}}}, True),
    ({"workflows": ["flows"], "fail_open": False, "shell_tools": {"mcp__x__run": "cmd"}}, True),
    ({"$schema": "./config-schema.json"}, True),
    ({"fail_opne": True}, False),
    ({"fail_open": "yes"}, False),
    ({"workflows": "flows"}, False),
    ({"shell_tools": {"mcp__x__run": 1}}, False),
    ({"mcpServers": []}, False),
]


@pytest.mark.parametrize(("config", "ok"), CONFIGS, ids=[json.dumps(c) for c, _ in CONFIGS])
def test_config_schema_agrees_with_the_config_loader(tmp_path, config, ok):
    from statewright.config import CONFIG_SCHEMA, load_config, schema_path
    from statewright.errors import StatewrightError

    schema = json.loads(schema_path(CONFIG_SCHEMA).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    schema_ok = jsonschema.Draft202012Validator(schema).is_valid(config)
    (tmp_path / "statewright.json").write_text(json.dumps(config))
    try:
        load_config(tmp_path)
        loader_ok = True
    except StatewrightError:
        loader_ok = False
    assert schema_ok == loader_ok == ok


# -- check: the input from stdin or a file -------------------------------------------------------

def test_check_reads_the_input_from_stdin_or_a_file(project):
    sw("start", "tdd-feature", "--project", str(project))
    args = ("check", "Bash", "--project", str(project), "--json")
    inline = sw(*args[:2], '{"command": "ls"}', *args[2:])
    piped = sw(*args, stdin='{"command": "ls"}')
    dash = sw(*args[:2], "-", *args[2:], stdin='{"command": "ls"}')
    f = project / "input.json"
    f.write_text('{"command": "ls"}')
    from_file = sw(*args, "--input-file", str(f))
    answers = [json.loads(p.stdout) for p in (inline, piped, dash, from_file)]
    assert all(a == answers[0] for a in answers)
    assert answers[0]["allowed"] is False and answers[0]["state"] == "planning"
    assert {p.returncode for p in (inline, piped, dash, from_file)} == {1}
    allowed = sw("check", "Read", "--project", str(project), stdin='{"file_path": "x"}')
    assert allowed.returncode == 0 and "ALLOWED" in allowed.stdout
    one_error_line(sw(*args[:2], '{"a": 1}', *args[2:4], "--input-file", str(f)),
                   "INVALID_ARGUMENTS")
    empty = sw(*args[:4], stdin="")
    assert "stdin is not valid JSON" in one_error_line(empty, "INVALID_ARGUMENTS")


# -- runs and history at 80 columns --------------------------------------------------------------

def test_runs_and_history_fit_80_columns_with_whole_run_ids(project):
    long_session = "c0ffee00-1111-4222-8333-444455556666"
    ids = []
    for i in range(3):
        s = sw("start", "tdd-feature", "--project", str(project), "--session",
               f"{long_session}-{i}", "--json")
        ids.append(json.loads(s.stdout)["run_id"])
    for ev, data in (("READY", '{"failing_test": "a_very_long_test_name_that_goes_on_and_on"}'),
                     ("TEST_WRITTEN", "{}")):
        sw("transition", ev, "--data", data, "--project", str(project), "--session",
           f"{long_session}-0")
    runs = sw("runs", "--all", "--project", str(project), COLUMNS="80")
    assert runs.returncode == 0
    assert all(len(line) <= 80 for line in runs.stdout.splitlines()), runs.stdout
    for rid in ids:
        assert re.search(rf"^{rid}\s", runs.stdout, re.M), runs.stdout
    limited = sw("runs", "--all", "--limit", "1", "--project", str(project))
    assert sum(rid in limited.stdout for rid in ids) == 1 and "not shown" in limited.stdout
    assert len(json.loads(sw("runs", "--all", "--json", "--limit", "2",
                             "--project", str(project)).stdout)) == 2
    hist = sw("history", ids[0], "--project", str(project), COLUMNS="80")
    lines = hist.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), hist.stdout
    assert ids[0] in lines[0] and "digest" not in hist.stdout
    assert len(lines) == 3 + 3  # title, header, rule, then one line per event
    assert any("READY from planning" in line and "writing_test" in line for line in lines)
    details = sw("history", ids[0], "--details", "--project", str(project))
    assert "a_very_long_test_name_that_goes_on_and_on" in details.stdout
    assert '"digest"' in details.stdout
    last = sw("history", ids[0], "--limit", "1", "--json", "--project", str(project))
    assert [h["kind"] for h in json.loads(last.stdout)] == ["transitioned"]


# -- serve: what a person at a terminal is told --------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _first_stderr_lines(cmd: list[str], stdin, n: int, cwd: Path) -> list[str]:
    """The first `n` lines the process writes on stderr (read from the raw pipe: a buffered
    reader could hold the second line while select() waits for more), then stop it."""
    proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=clean_env(), cwd=cwd)
    fd = proc.stderr.fileno()
    try:
        data = b""
        deadline = time.monotonic() + 90
        while data.count(b"\n") < n and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                data += chunk
        return data.decode().splitlines()[:n]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stderr.close()


def test_serve_on_a_terminal_says_it_speaks_mcp_on_stdio(tmp_path):
    leader, follower = pty.openpty()
    try:
        lines = _first_stderr_lines([bin_path("statewright"), "serve"], follower, 1, tmp_path)
    finally:
        os.close(leader)
        os.close(follower)
    assert len(lines) == 1 and "MCP on stdio" in lines[0] and "install claude" in lines[0]


def test_serve_without_a_terminal_says_nothing_before_mcp(tmp_path):
    p = subprocess.run([bin_path("statewright"), "serve"], input="", capture_output=True,
                       text=True, env=clean_env(), cwd=tmp_path, timeout=120)
    assert "MCP on stdio" not in p.stderr and p.stdout == ""


def test_serve_http_prints_its_url_and_warns_beyond_loopback(tmp_path):
    port = _free_port()
    lines = _first_stderr_lines([bin_path("statewright"), "serve", "--http", f"127.0.0.1:{port}"],
                                subprocess.DEVNULL, 1, tmp_path)
    assert lines == [f"statewright serve: MCP (streamable HTTP) at http://127.0.0.1:{port}/mcp"]
    port = _free_port()
    lines = _first_stderr_lines([bin_path("statewright"), "serve", "--http", f"0.0.0.0:{port}"],
                                subprocess.DEVNULL, 2, tmp_path)
    assert lines[0].endswith(f"http://0.0.0.0:{port}/mcp")
    assert lines[1].startswith("warning: ") and "no token is required" in lines[1]
    # what is exposed, and both ways to close it
    assert "acts as session 'default'" in lines[1] and "statewright's own tools" in lines[1]
    assert "bind 127.0.0.1" in lines[1] and "statewright token create" in lines[1]
