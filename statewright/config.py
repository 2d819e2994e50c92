"""Locations and project configuration (DESIGN.md section 5). Stdlib only: the hook uses it.

- project root: explicit `--project`, else `$CLAUDE_PROJECT_DIR`, else the nearest ancestor of the
  working directory holding `.statewright/` (not a Python virtual environment),
  `statewright.json` or `.git`, else the working directory;
- store: `<root>/.statewright/state.db`, or `$STATEWRIGHT_HOME/state.db`;
- workflow search path: `<root>/workflows/`, `<root>/.statewright/workflows/`, the config's
  `workflows` dirs, each dir of `$STATEWRIGHT_WORKFLOWS`, then the shipped examples.

Start-up cost matters here (every hook process reads the config): the hook path works on `str`
paths with `os.path` (`project_root_dir`, `Config.root_dir`, `Config.store_file`); the `Path`
API (`find_project_root`, `Config.root`, `Config.workflow_dirs`) is kept for everything else and
imports `pathlib` only when used.
"""

from __future__ import annotations

import os

from .errors import INVALID_ARGUMENTS, STORE_ERROR, StatewrightError
from .lean import TYPE_CHECKING, Record, loads, set_field
from .names import CONFIG_FILE, STATE_DIR, STORE_FILE, state_dir_str

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

_CONFIG_KEYS = {"$schema", "mcpServers", "workflows", "fail_open", "shell_tools", "store",
                "project"}
#: where the store is, instead of `<root>/.statewright/state.db` (a PostgreSQL URL; teams)
STORE_ENV = "STATEWRIGHT_STORE"
_STORE_SCHEMES = ("postgresql://", "postgres://")


def _path(p: str) -> Path:
    from pathlib import Path

    return Path(p)


def package_data_dir() -> Path:
    """Where the schema and example workflows live: inside the wheel, or the source checkout."""
    here = os.path.dirname(os.path.realpath(__file__))
    data = os.path.join(here, "_data")
    return _path(data if os.path.isdir(data) else os.path.dirname(here))


#: the published JSON schemas (in `schema/`; the wheel carries that folder as package data)
WORKFLOW_SCHEMA = "workflow-schema.json"
CONFIG_SCHEMA = "config-schema.json"


def schema_path(name: str = WORKFLOW_SCHEMA) -> Path:
    """A published schema: `schema/<name>` of the source tree, or its copy in the wheel."""
    return package_data_dir() / "schema" / name


def examples_dir() -> Path:
    return package_data_dir() / "workflows"


def project_root_dir(project: str | os.PathLike[str] | None = None,
                     cwd: str | os.PathLike[str] | None = None) -> str:
    """The project root (DESIGN section 5) as an absolute, resolved `str`."""
    if project:
        return os.path.realpath(os.path.expanduser(os.fspath(project)))
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    if env:
        return os.path.realpath(os.path.expanduser(env))
    start = os.path.realpath(os.fspath(cwd) if cwd else os.getcwd())
    d = start
    while True:
        if os.path.isfile(os.path.join(d, CONFIG_FILE)) or \
                os.path.exists(os.path.join(d, ".git")) or \
                is_store_dir(os.path.join(d, STATE_DIR)):  # (.git: a file in a worktree)
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return start
        d = parent


def is_venv(path: str) -> bool:
    """A Python virtual environment (it holds `pyvenv.cfg`)."""
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))


def is_store_dir(path: str) -> bool:
    """A `.statewright/` directory that can be a project's store: a directory that is not a
    virtual environment (a venv created as `~/.statewright` would make `$HOME` a project)."""
    return os.path.isdir(path) and not is_venv(path)


def refuse_venv_store(store_dir: str, store_file: str) -> None:
    """STORE_ERROR before a store would be created inside a virtual environment."""
    if not os.path.exists(store_file) and is_venv(store_dir):
        raise StatewrightError(STORE_ERROR, f"{store_dir} is a Python virtual environment, not "
                               "a project's store; install statewright elsewhere or name the "
                               "project with --project")


def find_project_root(project: str | os.PathLike[str] | None = None,
                      cwd: str | os.PathLike[str] | None = None) -> Path:
    return _path(project_root_dir(project, cwd))




def active_marker_dir() -> str:
    """Where the active-run markers live (`runtime.marker`): outside every project, so taking a
    project's store away does not take them too."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                            "state")
    return os.path.join(base, "statewright", "active")


class Config(Record):
    """The project's configuration (`statewright.json`), an immutable record."""

    root_dir: str
    _root: Path | None
    mcp_servers: dict[str, dict[str, Any]]
    workflows: tuple[str, ...]
    fail_open: bool
    shell_tools: dict[str, str]
    store: str | None
    project: str | None

    __slots__ = ("_root", "fail_open", "mcp_servers", "project", "root_dir", "shell_tools",
                 "store", "workflows")
    _fields = __match_args__ = ("root", "mcp_servers", "workflows", "fail_open", "shell_tools",
                                "store", "project")

    def __init__(self, root: str | os.PathLike[str],
                 mcp_servers: dict[str, dict[str, Any]] | None = None,
                 workflows: tuple[str, ...] = (), fail_open: bool = False,
                 shell_tools: dict[str, str] | None = None, store: str | None = None,
                 project: str | None = None) -> None:
        set_field(self, "root_dir", os.fspath(root))
        set_field(self, "_root", None)  # the Path, built on first use
        set_field(self, "mcp_servers", {} if mcp_servers is None else mcp_servers)
        set_field(self, "workflows", workflows)
        set_field(self, "fail_open", fail_open)
        set_field(self, "shell_tools", {} if shell_tools is None else shell_tools)
        set_field(self, "store", store)  # the config's `store`: a PostgreSQL URL, or None
        set_field(self, "project", project)

    @property
    def root(self) -> Path:
        root = self._root
        if root is None:
            root = _path(self.root_dir)
            set_field(self, "_root", root)
        return root

    @property
    def store_dir_str(self) -> str:
        return state_dir_str(self.root_dir)

    @property
    def store_file(self) -> str:
        return os.path.join(state_dir_str(self.root_dir), STORE_FILE)

    @property
    def store_url(self) -> str | None:
        """The shared store's URL: `$STATEWRIGHT_STORE`, else the config's `store`; None: the
        project's own SQLite file (the default)."""
        env = os.environ.get(STORE_ENV)
        if env is not None and env.strip():
            if not env.startswith(_STORE_SCHEMES):
                raise StatewrightError(INVALID_ARGUMENTS, f"${STORE_ENV} must be a PostgreSQL "
                                       "URL (postgresql://...)")
            return env.strip()
        return self.store

    @property
    def project_name(self) -> str:
        """The project's name in a shared store: the config's `project`, else the name of the
        root directory (two checkouts of one repository share their runs)."""
        return self.project or os.path.basename(self.root_dir.rstrip(os.sep)) or "/"


    def workflow_dirs(self) -> list[Path]:
        """The search path, in priority order (earlier wins on a duplicate id)."""
        root = self.root
        dirs = [root / "workflows", root / STATE_DIR / "workflows"]
        dirs += [(root / w).resolve() for w in self.workflows]
        for part in os.environ.get("STATEWRIGHT_WORKFLOWS", "").split(os.pathsep):
            if part.strip():
                dirs.append(_path(part).expanduser().resolve())
        dirs.append(examples_dir())
        seen: set[Path] = set()
        out: list[Path] = []
        for d in dirs:
            r = d.resolve() if d.exists() else d
            if r not in seen:
                seen.add(r)
                out.append(d)
        return out


def load_config(root: str | os.PathLike[str]) -> Config:
    """Read `<root>/statewright.json` if present. Bad config is an INVALID_ARGUMENTS error."""
    path = os.path.join(os.fspath(root), CONFIG_FILE)
    if not os.path.isfile(path):
        return Config(root=root)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        raw = loads(text)
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise StatewrightError(INVALID_ARGUMENTS, f"{path}: cannot read config: {exc}") from None
    problems: list[str] = []
    if not isinstance(raw, dict):
        raise StatewrightError(INVALID_ARGUMENTS, f"{path}: the config must be a JSON object")
    for key in raw:
        if key not in _CONFIG_KEYS:
            problems.append(f"/{key}: unknown key "
                            f"(expected one of {', '.join(sorted(_CONFIG_KEYS))})")
    servers = raw.get("mcpServers", {})
    if not isinstance(servers, dict) or not all(isinstance(v, dict) for v in servers.values()):
        problems.append(
            "/mcpServers: must be an object of server objects (the shape of .mcp.json)")
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
    store = raw.get("store")
    if store is not None and not (isinstance(store, str) and store.startswith(_STORE_SCHEMES)):
        problems.append("/store: must be a PostgreSQL URL (postgresql://...); leave it out for "
                        "the project's own SQLite store")
        store = None
    project = raw.get("project")
    if project is not None and not (isinstance(project, str) and project.strip()):
        problems.append("/project: must be a non-empty name")
        project = None
    if problems:
        raise StatewrightError(INVALID_ARGUMENTS, f"{path}: " + "; ".join(problems))
    return Config(root=root, mcp_servers=servers, workflows=tuple(workflows),
                  fail_open=fail_open, shell_tools=dict(shell_tools), store=store,
                  project=project)


#: id(config) -> (config, .mcp.json's stat, when, roots): `mcp_server_roots(max_age=...)`
_ROOTS: dict[int, tuple[Config, Any, float, dict[str, tuple[str, ...]]]] = {}


def mcp_server_roots(config: Config, max_age: float = 0.0) -> dict[str, tuple[str, ...]]:
    """For each MCP server the project wires (`statewright.json` `mcpServers`, which the proxy
    forwards, and `.mcp.json`, which Claude Code calls directly), the directories it may
    resolve a relative path against: its working directory and every directory named on its
    command line (a filesystem server resolves `notes.txt` against its allowed directories,
    not against the agent's cwd). DESIGN section 4 "Paths": a path is judged against each.

    `max_age` (seconds): the answer for the same config is reused that long while `.mcp.json`
    is unchanged (its stat), instead of resolving every directory again on each call (serve
    judges every forwarded call with them). 0: computed afresh."""
    mcp = os.path.join(config.root_dir, ".mcp.json")
    if max_age <= 0:
        return _server_roots(config, mcp)
    from time import monotonic

    try:
        st = os.stat(mcp)
        sig: Any = (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        sig = None
    now = monotonic()
    hit = _ROOTS.get(id(config))
    if hit is not None and hit[0] is config and hit[1] == sig and now - hit[2] < max_age:
        return hit[3]
    roots = _server_roots(config, mcp)
    if len(_ROOTS) > 16:
        _ROOTS.clear()
    _ROOTS[id(config)] = (config, sig, now, roots)
    return roots


def _server_roots(config: Config, mcp: str) -> dict[str, tuple[str, ...]]:
    servers: dict[str, Any] = {}
    if os.path.isfile(mcp):
        try:
            with open(mcp, encoding="utf-8") as fh:
                raw = loads(fh.read())
            if isinstance(raw, dict) and isinstance(raw.get("mcpServers"), dict):
                servers.update(raw["mcpServers"])
        except (OSError, ValueError):
            pass
    servers.update(config.mcp_servers)
    out: dict[str, tuple[str, ...]] = {}
    for name, spec in servers.items():
        if isinstance(name, str) and isinstance(spec, dict):
            out[name] = _server_dirs(spec, config.root_dir)
    return out


def _server_dirs(spec: dict[str, Any], root: str) -> tuple[str, ...]:
    cwd = spec.get("cwd") if isinstance(spec.get("cwd"), str) else None
    base = os.path.join(root, os.path.expanduser(_env_refs(cwd))) if cwd else root
    dirs = [os.path.realpath(base)]
    args = spec.get("args")
    for a in args if isinstance(args, list) else ():
        if not isinstance(a, str) or not a or a.startswith("-"):
            continue
        d = os.path.join(base, os.path.expanduser(_env_refs(a)))
        if os.path.isdir(d):
            r = os.path.realpath(d)
            if r not in dirs:
                dirs.append(r)
    return tuple(dirs)


def _env_refs(value: str) -> str:
    return expand_env_refs(value, os.environ)


def expand_env_refs(value: str, environ: Mapping[str, str]) -> str:
    """`${VAR}` / `${VAR:-default}` expanded as Claude Code expands `.mcp.json` (an unset
    variable is empty; the default replaces an unset or empty one)."""
    if "${" not in value:
        return value
    import re

    def sub(m: Any) -> str:
        got = environ.get(m.group(1))
        if got is None or (got == "" and m.group(2) is not None):
            return m.group(2) if m.group(2) is not None else ""
        return got

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}", sub, value)
