"""Run the real Claude Code CLI (npm, pinned) offline against a project wired by the real
`statewright install claude`, with a scripted stand-in of the Messages API (standin.py).

Each `Host` is one project with its own Claude Code config dir, so nothing touches the user's
own files. `run(steps)` starts one headless session (`claude -p`) and returns what the host
sent the model (tool results, hook context), so tests assert what the model really saw.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cliproject import CliProject
from conftest import REPO, clean_env

from .standin import Conversation, StandIn, Step

CLAUDE = REPO / "tests" / "host" / "npm" / "node_modules" / "@anthropic-ai" / "claude-code" / \
    "bin" / "claude.exe"
FS_JS = REPO / "tests" / "npm" / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / \
    "dist" / "index.js"
FORMS = ("mcp", "process")
SW = "mcp__statewright__"  # how the host names the proxy's tools
DEFAULT_TOOLS = ("Bash", "Read", "Write", "Edit", "mcp__statewright")


@dataclass
class Session:
    returncode: int
    seconds: float
    events: list[dict[str, Any]]
    stderr: str
    main: Conversation
    standin: StandIn = field(repr=False)
    #: seconds from the host's spawn to the model's first request (the session has started)
    started: float | None = None

    def results(self) -> list[tuple[str, str, bool]]:
        """(tool name, text, is_error) of every tool result the model got, in order."""
        return [(r.name, r.text, r.is_error) for r in self.main.results()]

    def everything_sent(self) -> str:
        """All the host sent to the model, every conversation (to prove a secret never went)."""
        return json.dumps([c.requests for c in self.standin.conversations.values()])


class Host(CliProject):
    def __init__(self, root: Path, form: str, *, servers: dict[str, Any] | None = None,
                 workflows: dict[str, dict] | None = None, scope: str = "local",
                 path: str | None = None) -> None:
        self.root = root
        self.form = form
        self.path = path  # PATH for the host (None: this process's)
        self.config = root.parent / f"{root.name}-claude-config"
        root.mkdir(parents=True)
        self.config.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / "workflows").mkdir()
        for doc in (workflows or {}).values():
            self.write_workflow(doc)
        if servers:
            (root / "statewright.json").write_text(json.dumps({"mcpServers": servers}))
        r = self.cli("install", "claude", "--hooks", form, "--scope", scope)
        assert "installed in" in r.stdout, r.stdout

    @classmethod
    def existing(cls, root: Path, form: str, path: str | None = None) -> Host:
        """A project already on disk (a clone), with a Claude Code config of its own."""
        host = cls.__new__(cls)
        host.root, host.form, host.path = root, form, path
        host.config = root.parent / f"{root.name}-claude-config"
        host.config.mkdir()
        return host

    def env(self, **extra: str) -> dict[str, str]:
        if self.path is not None:
            extra = {"PATH": self.path, **extra}
        return clean_env(CLAUDE_CONFIG_DIR=str(self.config), HOME=str(self.config), **extra)

    def cli_env(self) -> dict[str, str]:
        return clean_env(CLAUDE_CONFIG_DIR=str(self.config), HOME=str(self.config))

    def run(self, steps: list[Step] | dict[str, list[Step]], *,
            allowed_tools: tuple[str, ...] = DEFAULT_TOOLS, prompt: str = "Do the task.",
            env: dict[str, str] | None = None, timeout: float = 240,
            extra_args: tuple[str, ...] = ()) -> Session:
        with StandIn(steps) as api:
            cmd = [str(CLAUDE), "-p", prompt, "--output-format", "stream-json", "--verbose",
                   *extra_args]
            if allowed_tools:
                cmd += ["--allowedTools", ",".join(allowed_tools)]
            t0, m0 = time.perf_counter(), time.monotonic()
            r = subprocess.run(cmd, cwd=self.root, capture_output=True, text=True, timeout=timeout,
                               env=self.env(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="sk-test",
                                            DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1",
                                            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                                            **(env or {})))
            seconds = time.perf_counter() - t0
        events = []
        for line in r.stdout.splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                pass
        started = None if api.first_request_at is None else api.first_request_at - m0
        return Session(r.returncode, seconds, events, r.stderr, api.main, api, started)


def fs_server(root: Path) -> dict[str, Any]:
    return {"command": "node", "args": [str(FS_JS), str(root)]}
