"""serve's file watcher (`runtime.filewatch`, real watchdog) and the proxy's hot path: the
store's own commits -- two per forwarded call -- must not wake the watcher, while a file the
agent or another process writes still does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from statewright.policy.types import ToolCall, ToolResult
from statewright.runtime import Runtime
from statewright.runtime.filewatch import FileWatcher

from .harness import make_project

WORKFLOW = {"id": "w", "initial": "work",
            "states": {"work": {"allowed_tools": ["mcp__every__echo"], "on": {"DONE": "end"}},
                       "end": {"type": "final"}}}


class Seen(FileWatcher):
    """The watcher, keeping every path it is told about."""

    def __init__(self, rt: Runtime, session: str) -> None:
        super().__init__(rt, session)
        self.paths: list[str] = []

    def changed(self, path: str) -> None:
        self.paths.append(path)
        super().changed(path)


def _wait_for(seen: Seen, name: str) -> None:
    deadline = time.monotonic() + 10
    while not any(p.endswith(name) for p in seen.paths):
        assert time.monotonic() < deadline, f"the watcher never saw {name}: {seen.paths}"
        time.sleep(0.02)


def test_store_commits_do_not_wake_the_watcher_but_written_files_do(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", {}, {"w": WORKFLOW})
    rt = Runtime.open(project=str(root), resident=True)
    rt.load_workflow("w", "s")
    seen = Seen(rt, "s")
    seen.start()
    try:
        call = ToolCall("mcp__every__echo", {"message": "hi"}, source="proxy")
        for _ in range(20):
            assert rt.authorize("s", call).allowed
            rt.record("s", ToolResult("mcp__every__echo", {"message": "hi"}, output_bytes=2))
        (root / "notes.txt").write_text("written and closed\n")
        _wait_for(seen, "notes.txt")  # (one inotify queue: the commits' events came first)
        store = os.path.realpath(rt.store_dir)
        assert [p for p in seen.paths if p.startswith(store)] == []
        # another process appending while it keeps the file open: seen when it closes it
        subprocess.run([sys.executable, "-c", "import sys\nwith open(sys.argv[1], 'a') as f:\n"
                        "    f.write('x'); f.flush(); f.write('y')", str(root / "log.txt")],
                       check=True)
        _wait_for(seen, "log.txt")
        # a file moved into place (how editors and `sed -i` save)
        (root / "tmp.json").write_text(json.dumps({"a": 1}))
        (root / "tmp.json").rename(root / "config.json")
        _wait_for(seen, "config.json")
    finally:
        seen.stop()
        rt.store.close()
