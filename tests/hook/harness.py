"""Drive the installed `statewright-hook` and `statewright` processes against a temp project,
exactly as Claude Code and a human would (real hook JSON on stdin, real store on disk)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from cliproject import CliProject
from conftest import EXAMPLES, bin_path, clean_env

SESSION = "c0ffee00-1111-4222-8333-444455556666"
#: what Claude Code sends as a Bash call's `tool_response` (no output)
BASH_OK = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}


class Project(CliProject):
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        if not (root / "workflows").exists():
            shutil.copytree(EXAMPLES, root / "workflows")
        self.env = clean_env(CLAUDE_PROJECT_DIR=str(root))

    # -- the human side: the real CLI (`CliProject`) ------------------------------------------
    def transition(self, event: str, data: dict | None = None) -> dict:
        args = ["transition", event, "--json"]
        if data is not None:
            args += ["--data", json.dumps(data)]
        return json.loads(self.cli(*args).stdout)

    # -- the agent side: the real hook --------------------------------------------------------
    def payload(self, event: str, session: str = SESSION, **fields: Any) -> dict:
        return {"session_id": session, "transcript_path": "/tmp/transcript.jsonl",
                "cwd": str(self.root), "permission_mode": "default",
                "hook_event_name": event, **fields}

    def run_hook(self, args: list[str], stdin: bytes, env: dict | None = None,
                 exe: str = "statewright-hook") -> tuple[int, str, str]:
        r = subprocess.run([bin_path(exe), *args], input=stdin, capture_output=True,
                           env=env or self.env, timeout=120)
        out, err = r.stdout.decode(), r.stderr.decode()
        assert "Traceback" not in err and "Traceback" not in out, err
        return r.returncode, out, err

    def hook(self, event_arg: str, payload: dict | bytes, env: dict | None = None) -> dict | None:
        stdin = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        rc, out, _err = self.run_hook([event_arg], stdin, env)
        assert rc == 0
        return json.loads(out) if out.strip() else None

    def pre(self, tool: str, tool_input: dict, session: str = SESSION, **extra: Any) -> dict | None:
        return self.hook("pre-tool-use", self.payload("PreToolUse", session, tool_name=tool,
                                                      tool_input=tool_input,
                                                      tool_use_id="toolu_01", **extra))

    def post(self, tool: str, tool_input: dict, response: Any, session: str = SESSION) -> dict | None:
        return self.hook("post-tool-use", self.payload("PostToolUse", session, tool_name=tool,
                                                       tool_input=tool_input,
                                                       tool_response=response,
                                                       tool_use_id="toolu_01"))

    def run_line(self, line: str, env: dict | None = None, *, rewritten: bool = False,
                 record: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        """`line` as the host runs it: the hook asked (it must allow), the text it answers with
        (the rewritten line, else the line) run by `bash -c` in the project, and (`record`)
        the result reported to the hook. `rewritten`: the hook must have rewritten it."""
        out = self.pre("Bash", {"command": line})
        allowed(out)
        if rewritten:
            assert out is not None, "the line was expected to run under the sandbox"
        text = out["hookSpecificOutput"]["updatedInput"]["command"] if out else line
        r = subprocess.run(["bash", "-c", text], cwd=self.root, env=env or self.env,
                           capture_output=True, text=True, timeout=timeout)
        if record:
            self.post("Bash", {"command": line}, BASH_OK)
        return r

    def failure(self, tool: str, tool_input: dict, error: str, session: str = SESSION,
                **extra: Any) -> dict | None:
        """PostToolUseFailure, as Claude Code sends it for a call that failed (for Bash: a line
        that exited non-zero, `error` starting with `Exit code N`)."""
        return self.hook("post-tool-use-failure",
                         self.payload("PostToolUseFailure", session, tool_name=tool,
                                      tool_input=tool_input, error=error,
                                      tool_use_id="toolu_01", **extra))

    def path(self, rel: str) -> str:
        return str(self.root / rel)


def denied(out: dict | None) -> str:
    """The refusal reason; fails if the answer is not a PreToolUse deny."""
    assert out is not None, "expected a refusal, the call was allowed"
    hso = out["hookSpecificOutput"]
    assert hso["hookEventName"] == "PreToolUse"
    assert hso["permissionDecision"] == "deny", out
    assert hso["permissionDecisionReason"]
    return hso["permissionDecisionReason"]


def allowed(out: dict | None) -> None:
    """Allowed: nothing printed, or only a rewritten input. Never a permission decision: an
    `allow` would skip the host's own rules and prompts (statewright only narrows)."""
    if out is None:
        return
    hso = out["hookSpecificOutput"]
    assert hso["hookEventName"] == "PreToolUse" and "updatedInput" in hso, out
    assert "permissionDecision" not in hso, out


def context(out: dict | None, event: str) -> str:
    assert out is not None, f"expected additionalContext for {event}"
    hso = out["hookSpecificOutput"]
    assert hso["hookEventName"] == event
    return hso["additionalContext"]
