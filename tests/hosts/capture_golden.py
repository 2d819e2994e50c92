"""Capture the golden hook payloads of tests/hosts/golden/ from the real hosts.

`python -m hosts.capture_golden` (from tests/, after `make node`): runs each pinned host
offline with a hook that only records its input, through the tool calls the tests replay, and
writes one file per (host, event, tool) to tests/hosts/golden/. Paths and ids are the run's;
tests/hook/test_host_payloads.py rewrites `cwd` to its own project before replaying them.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from .harness import HostProject
from .standins import Text, ToolUse

GOLDEN = Path(__file__).resolve().parent / "golden"
RECORDER = ("import json, os, sys; data = sys.stdin.read(); "
            "open(os.environ['GOLDEN_LOG'], 'a').write(json.dumps([sys.argv[1], data]) + '\\n')")

SCRIPTS = {
    "codex": {
        "": [ToolUse("exec_command", {"cmd": "echo hello"}),
             ToolUse("apply_patch", {"input": "*** Begin Patch\n*** Add File: new.txt\n+one\n"
                                              "+two\n*** End Patch\n"}),
             ToolUse("collaboration.spawn_agent", {"task_name": "helper", "fork_turns": "none",
                                                   "message": "[[sub]] run echo"}),
             ToolUse("collaboration.wait_agent", {"timeout_ms": 60000}),
             Text("done")],
        "[[sub]]": [ToolUse("exec_command", {"cmd": "echo from-sub"}), Text("sub done")],
    },
    "gemini": [ToolUse("run_shell_command", {"command": "echo hello"}),
               ToolUse("write_file", {"file_path": "new.txt", "content": "one\ntwo\n"}),
               ToolUse("replace", {"file_path": "new.txt", "old_string": "one",
                                   "new_string": "uno", "instruction": "rename"}),
               ToolUse("read_file", {"file_path": "new.txt"}),
               Text("done")],
    "copilot": [ToolUse("bash", {"command": "echo hello", "description": "greet"}),
                ToolUse("create", {"path": "@ROOT@/new.txt", "file_text": "one\ntwo\n"}),
                ToolUse("edit", {"path": "@ROOT@/new.txt", "old_str": "one", "new_str": "uno"}),
                ToolUse("view", {"path": "@ROOT@/new.txt"}),
                Text("done")],
}
EVENTS = {
    "codex": ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"],
    "gemini": ["SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"],
    "copilot": ["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse",
                "agentStop"],
}


def _wire(p: HostProject, log: Path) -> None:
    cmd = lambda ev: f"{sys.executable} -c \"{RECORDER}\" {ev}"  # noqa: E731
    if p.host == "copilot":
        d = p.root / ".github" / "hooks"
        d.mkdir(parents=True)
        (d / "golden.json").write_text(json.dumps({"version": 1, "hooks": {
            ev: [{"type": "command", "bash": cmd(ev), "timeoutSec": 30}]
            for ev in EVENTS["copilot"]}}))
        return
    d = p.root / (".codex" if p.host == "codex" else ".gemini")
    d.mkdir()
    hooks = {ev: [{"matcher": ".*" if p.host == "gemini" else "*",
                   "hooks": [{"type": "command", "command": cmd(ev), "timeout": 30000
                              if p.host == "gemini" else 30}]}] for ev in EVENTS[p.host]}
    name = "hooks.json" if p.host == "codex" else "settings.json"
    (d / name).write_text(json.dumps({"hooks": hooks}))


def capture(host: str) -> list[Path]:
    base = Path(tempfile.mkdtemp())
    p = HostProject(base / "proj", host, install=False)
    log = base / "golden.log"
    _wire(p, log)
    script = SCRIPTS[host]
    if host == "copilot":
        script = [ToolUse(s.name, {k: v.replace("@ROOT@", str(p.root)) if isinstance(v, str)
                                   else v for k, v in s.input.items()})
                  if isinstance(s, ToolUse) else s for s in script]  # type: ignore[union-attr]
    s = p.run(script, env={"GOLDEN_LOG": str(log)})
    assert s.returncode == 0, s.stderr
    out: list[Path] = []
    seen: set[str] = set()
    (GOLDEN / host).mkdir(parents=True, exist_ok=True)
    for line in log.read_text().splitlines():
        event, raw = json.loads(line)
        data = json.loads(raw)
        tool = data.get("tool_name") or data.get("toolName") or ""
        who = "subagent-" if data.get("agent_id") else ""
        name = f"{event}{'-' + who + tool if tool else ''}.json"
        if name in seen:
            continue
        seen.add(name)
        f = GOLDEN / host / name
        f.write_text(json.dumps(data, indent=1) + "\n")
        out.append(f)
    return out


if __name__ == "__main__":  # pragma: no cover
    for h in sys.argv[1:] or list(SCRIPTS):
        for f in capture(h):
            print(f)
