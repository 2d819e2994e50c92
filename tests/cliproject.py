"""The human side of a test project, shared by the harnesses that drive a host or the hook: the
real `statewright` CLI run against the project (`--project ROOT`), with the environment the
harness gives it (`cli_env`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import bin_path, clean_env


class CliProject:
    root: Path

    def cli_env(self) -> dict[str, str]:
        """The environment the CLI runs with (a harness with a home of its own says so)."""
        return clean_env()

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        r = subprocess.run([bin_path("statewright"), *args, "--project", str(self.root)],
                           capture_output=True, text=True, env=self.cli_env(), timeout=120)
        if check and r.returncode != 0:
            raise AssertionError(f"statewright {' '.join(args)} failed: {r.stderr}")
        return r

    def write_workflow(self, doc: dict) -> None:
        (self.root / "workflows" / f"{doc['id']}.json").write_text(json.dumps(doc, indent=1))

    def start(self, name: str, *extra: str) -> dict:
        return json.loads(self.cli("start", name, "--json", *extra).stdout)

    def status(self, session: str | None = None) -> dict:
        args = ["status", "--json"] + (["--session", session] if session else [])
        return json.loads(self.cli(*args).stdout)

    def history(self) -> list[dict]:
        return json.loads(self.cli("history", "--json").stdout)
