"""Run the real Codex, Gemini CLI and Copilot CLI (npm, pinned: tests/hosts/npm) offline against a
project wired by the real `statewright install <host>`, each with a scripted stand-in of its
model API (standins.py).

Each `HostProject` is one git project with a home directory of its own (the host's user
config: the stand-in as its model provider, the project trusted), so nothing touches the
user's own files. `run(steps)` starts one headless session and returns what the host sent the
model, so tests assert what the model really saw.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cliproject import CliProject
from conftest import REPO, VENV_BIN, clean_env

from .standins import ChatStandIn, GeminiStandIn, ResponsesStandIn

NPM = REPO / "tests" / "hosts" / "npm" / "node_modules"
CODEX = NPM / "@openai" / "codex-linux-x64" / "vendor" / "x86_64-unknown-linux-musl" / "bin" / \
    "codex"
GEMINI = NPM / "@google" / "gemini-cli" / "bundle" / "gemini.js"
COPILOT = NPM / "@github" / "copilot-linux-x64" / "copilot"
BINARIES = {"codex": CODEX, "gemini": GEMINI, "copilot": COPILOT}
#: the model names the stand-ins answer as: ones each host knows, so it offers its usual tools
#: (Codex its `apply_patch`, Copilot its `create`/`edit`/`view`)
MODELS = {"codex": "gpt-5.5", "gemini": "gemini-2.5-pro", "copilot": "claude-sonnet-4.5"}
#: the hosts' own variables (keys, endpoints, homes) are never inherited by a test's host
_HOST_VARS = ("OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_", "COPILOT_", "GITHUB_", "GH_")
STANDINS = {"codex": ResponsesStandIn, "gemini": GeminiStandIn, "copilot": ChatStandIn}


@dataclass
class Session:
    returncode: int
    seconds: float
    stdout: str
    stderr: str
    standin: Any = field(repr=False)

    def results(self, marker: str = "") -> list[tuple[str, str]]:
        """(tool name as the model called it, the text the model got back), in order."""
        return self.standin.results(self.standin.conversations[marker])

    def everything_sent(self) -> str:
        return self.standin.everything_sent()


class HostProject(CliProject):
    #: Codex's own sandbox for the commands it runs (`-s`)
    codex_sandbox = "danger-full-access"

    def __init__(self, root: Path, host: str, *, workflows: dict[str, dict] | None = None,
                 form: str | None = None, install: bool = True) -> None:
        self.root = root
        self.host = host
        self.home = root.parent / f"{root.name}-home"
        root.mkdir(parents=True)
        self.home.mkdir()
        # Codex runs lines in a login shell, which sets PATH anew: the user's profile puts
        # statewright's programs on it, as a user with statewright installed has them
        (self.home / ".bash_profile").write_text(f'export PATH="{VENV_BIN}:$PATH"\n')
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / "workflows").mkdir()
        for doc in (workflows or {}).values():
            self.write_workflow(doc)
        if install:
            args = ["install", host, "--scope", "project"]
            if form:
                args += ["--hooks", form]
            r = self.cli(*args)
            assert "installed in" in r.stdout, r.stdout

    def env(self, **extra: str) -> dict[str, str]:
        # the hosts find statewright's programs on PATH (the project scope names no paths)
        path = f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
        env = {k: v for k, v in clean_env(HOME=str(self.home), PATH=path, **extra).items()
               if not k.startswith(_HOST_VARS) or k in extra}
        return env

    def cli_env(self) -> dict[str, str]:
        return self.env()

    # -- one headless session -----------------------------------------------------------------
    def run(self, steps: Any, *, env: dict[str, str] | None = None, timeout: float = 240,
            prompt: str = "Do the task.", extra_args: tuple[str, ...] = ()) -> Session:
        with STANDINS[self.host](steps) as api:
            cmd, host_env = getattr(self, f"_{self.host}")(api.url, prompt)
            t0 = time.perf_counter()
            r = subprocess.run([*cmd, *extra_args], cwd=self.root, capture_output=True,
                               text=True, timeout=timeout,
                               env=self.env(**host_env, **(env or {})))
            seconds = time.perf_counter() - t0
        return Session(r.returncode, seconds, r.stdout, r.stderr, api)

    def _codex(self, url: str, prompt: str) -> tuple[list[str], dict[str, str]]:
        home = self.home / ".codex"
        home.mkdir(exist_ok=True)
        (home / "config.toml").write_text(
            f'model = "{MODELS["codex"]}"\nmodel_provider = "standin"\n'
            "[model_providers.standin]\nname = \"standin\"\n"
            f'base_url = "{url}/v1"\nwire_api = "responses"\nsupports_websockets = false\n'
            f'[projects."{self.root}"]\ntrust_level = "trusted"\n')
        return ([str(CODEX), "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
                 "--json", "-s", self.codex_sandbox, "--enable", "multi_agent_v2", prompt],
                # (TMPDIR elsewhere: Codex makes the helpers its own sandbox runs only in a
                # CODEX_HOME outside the temp directory)
                {"CODEX_HOME": str(home), "CODEX_API_KEY": "dummy",
                 "TMPDIR": str(self._tmpdir())})

    def _tmpdir(self) -> Path:
        d = self.home / "tmp"
        d.mkdir(exist_ok=True)
        return d

    def _gemini(self, url: str, prompt: str) -> tuple[list[str], dict[str, str]]:
        settings = self.home / ".gemini" / "settings.json"
        settings.parent.mkdir(exist_ok=True)
        settings.write_text(json.dumps({
            "security": {"auth": {"selectedType": "gemini-api-key"},
                         "folderTrust": {"enabled": False}},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}))
        return (["node", str(GEMINI), "-p", prompt, "--approval-mode", "yolo",
                 "--output-format", "json", "-m", MODELS["gemini"]],
                {"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": url, "NO_COLOR": "1"})

    def _copilot(self, url: str, prompt: str) -> tuple[list[str], dict[str, str]]:
        home = self.home / ".copilot"
        home.mkdir(exist_ok=True)
        (home / "settings.json").write_text(json.dumps({"trustedFolders": [str(self.root)]}))
        return ([str(COPILOT), "-p", prompt, "--allow-all"],
                # (COPILOT_ALLOW_ALL: the folder counts as trusted, so its hooks load, as
                # --dangerously-bypass-hook-trust does for Codex)
                {"COPILOT_HOME": str(home), "COPILOT_OFFLINE": "true", "COPILOT_ALLOW_ALL": "true",
                 "COPILOT_PROVIDER_BASE_URL": url + "/v1", "COPILOT_PROVIDER_TYPE": "openai",
                 "COPILOT_MODEL": MODELS["copilot"], "COPILOT_PROVIDER_API_KEY": "dummy"})
