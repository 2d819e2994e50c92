"""Locations and project configuration (DESIGN.md section 5). Stdlib only: the hook uses it.

- project root: explicit `--project`, else `$CLAUDE_PROJECT_DIR`, else the nearest ancestor of the
  working directory holding `.statewright/` or `statewright.json`, else the working directory;
- store: `<root>/.statewright/state.db`, or `$STATEWRIGHT_HOME/state.db`;
- workflow search path: `<root>/workflows/`, `<root>/.statewright/workflows/`, the config's
  `workflows` dirs, each dir of `$STATEWRIGHT_WORKFLOWS`, then the shipped examples.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import INVALID_ARGUMENTS, StatewrightError

CONFIG_FILE = "statewright.json"
STATE_DIR = ".statewright"
STORE_FILE = "state.db"
_CONFIG_KEYS = {"$schema", "mcpServers", "workflows", "fail_open", "shell_tools"}


def package_data_dir() -> Path:
    """Where the schema and example workflows live: inside the wheel, or the source checkout."""
    here = Path(__file__).resolve().parent
    data = here / "_data"
    return data if data.is_dir() else here.parent


def schema_path() -> Path:
    d = package_data_dir()
    p = d / "workflow-schema.json"
    return p if p.is_file() else d / "schema" / "workflow-schema.json"


def examples_dir() -> Path:
    return package_data_dir() / "workflows"


def find_project_root(project: str | os.PathLike[str] | None = None,
                      cwd: str | os.PathLike[str] | None = None) -> Path:
    if project:
        return Path(project).expanduser().resolve()
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    if env:
        return Path(env).expanduser().resolve()
    start = Path(cwd or os.getcwd()).resolve()
    for d in (start, *start.parents):
        if (d / STATE_DIR).is_dir() or (d / CONFIG_FILE).is_file():
            return d
    return start


def state_dir(root: Path) -> Path:
    home = os.environ.get("STATEWRIGHT_HOME")
    return Path(home).expanduser().resolve() if home else root / STATE_DIR


def store_path(root: Path) -> Path:
    return state_dir(root) / STORE_FILE


@dataclass(frozen=True)
class Config:
    root: Path
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    workflows: tuple[str, ...] = ()
    fail_open: bool = False
    shell_tools: dict[str, str] = field(default_factory=dict)

    @property
    def store_dir(self) -> Path:
        return state_dir(self.root)

    @property
    def store_path(self) -> Path:
        return store_path(self.root)

    def workflow_dirs(self) -> list[Path]:
        """The search path, in priority order (earlier wins on a duplicate id)."""
        dirs = [self.root / "workflows", self.root / STATE_DIR / "workflows"]
        dirs += [(self.root / w).resolve() for w in self.workflows]
        for part in os.environ.get("STATEWRIGHT_WORKFLOWS", "").split(os.pathsep):
            if part.strip():
                dirs.append(Path(part).expanduser().resolve())
        dirs.append(examples_dir())
        seen: set[Path] = set()
        out = []
        for d in dirs:
            r = d.resolve() if d.exists() else d
            if r not in seen:
                seen.add(r)
                out.append(d)
        return out


def load_config(root: Path) -> Config:
    """Read `<root>/statewright.json` if present. Bad config is an INVALID_ARGUMENTS error."""
    path = root / CONFIG_FILE
    if not path.is_file():
        return Config(root=root)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StatewrightError(INVALID_ARGUMENTS, f"{path}: cannot read config: {exc}") from None
    problems = []
    if not isinstance(raw, dict):
        raise StatewrightError(INVALID_ARGUMENTS, f"{path}: the config must be a JSON object")
    for key in raw:
        if key not in _CONFIG_KEYS:
            problems.append(f"/{key}: unknown key (expected one of {', '.join(sorted(_CONFIG_KEYS))})")
    servers = raw.get("mcpServers", {})
    if not isinstance(servers, dict) or not all(isinstance(v, dict) for v in servers.values()):
        problems.append("/mcpServers: must be an object of server objects (the shape of .mcp.json)")
        servers = {}
    workflows = raw.get("workflows", [])
    if not isinstance(workflows, list) or not all(isinstance(w, str) for w in workflows):
        problems.append("/workflows: must be a list of directory paths")
        workflows = []
    fail_open = raw.get("fail_open", False)
    if not isinstance(fail_open, bool):
        problems.append("/fail_open: must be true or false")
        fail_open = False
    shell_tools = raw.get("shell_tools", {})
    if not isinstance(shell_tools, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in shell_tools.items()
    ):
        problems.append("/shell_tools: must map tool names to the argument that holds the command")
        shell_tools = {}
    if problems:
        raise StatewrightError(INVALID_ARGUMENTS, f"{path}: " + "; ".join(problems))
    return Config(root=root, mcp_servers=servers, workflows=tuple(workflows),
                  fail_open=fail_open, shell_tools=dict(shell_tools))
