"""The write scope shared by the edit tools and shell output redirects (DESIGN section 4,
check 1): inside the project, never into git metadata, Claude settings, a file statewright is
enforcing or the store. A planted `.git/hooks/pre-commit`, `.git/config` `core.fsmonitor` or
Claude setting would make an allowed command run anything."""

from __future__ import annotations

import os

from ...lean import TYPE_CHECKING
from .store import HOST_CONFIG_DIRS, ctx_facts, is_protected, remember

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..types import GateContext

#: project-relative prefixes no tool or redirect may write into (git metadata, the hosts'
#: settings: Claude Code's and the other hosts' `HOST_CONFIG_DIRS`)
SENSITIVE_PREFIXES = (".git/", ".claude/", *(d + "/" for d in HOST_CONFIG_DIRS))
#: the same directories, named themselves
_SENSITIVE_DIRS = frozenset(p.rstrip("/") for p in SENSITIVE_PREFIXES)
#: conventional directories of git hooks (`core.hooksPath`: husky, githooks)
HOOK_DIRS = frozenset({".husky", ".githooks", ".git-hooks"})
#: configuration files that make a package manager or tool run a command of their choosing
#: (`.npmrc` `script-shell` / `node-options=--require`, `.yarnrc.yml` `yarnPath`)
CODE_CONFIG_FILES = frozenset({".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs"})
#: modules Python tools import at start-up (`python -m pytest`, `python -m json.tool`, pip,
#: site): a file of that name at the project's top directory, first on `sys.path` for
#: `python -m`, would run instead
SHADOWED_MODULES = frozenset({
    "site", "sitecustomize", "usercustomize", "encodings", "codecs", "abc", "os", "io",
    "stat", "posixpath", "genericpath", "runpy", "pkgutil", "importlib", "json", "re",
    "enum", "functools", "collections", "types", "typing", "warnings", "argparse",
    "subprocess", "shutil", "tempfile", "pytest", "_pytest", "pluggy", "pip", "setuptools",
    "pkg_resources", "inspect", "dis", "tokenize", "token", "linecache", "traceback",
    "operator", "keyword", "reprlib", "weakref", "copyreg", "sre_compile", "sre_parse",
    "contextlib", "pathlib", "fnmatch", "glob", "textwrap", "string", "locale", "platform",
    "sysconfig", "zipimport", "unittest", "doctest", "logging", "shlex", "signal", "struct",
    "heapq", "bisect", "random", "hashlib", "base64", "datetime", "time", "math", "decimal",
    "uuid", "tomllib", "configparser", "dataclasses", "ast", "pprint", "difflib", "threading",
    "queue", "socket", "select", "selectors", "errno", "atexit", "gc", "copy", "itertools",
    "mypy", "ruff", "black", "coverage", "pytest_cov", "py", "attr", "attrs", "packaging"})


def sensitive(rel: str, full: str, ctx: GateContext) -> str | None:
    """Why writing the project-relative `rel` (resolved: `full`) is refused: git metadata,
    Claude settings, a file statewright enforces, the store."""
    fx = ctx_facts(ctx)
    key = (rel, full)  # (text alone: kept per context)
    verdicts = fx.sensitive_verdicts
    if key in verdicts:
        return verdicts[key]
    return remember(verdicts, key, _sensitive(rel, full, fx))


def _sensitive(rel: str, full: str, fx: Any) -> str | None:
    if rel in _SENSITIVE_DIRS or rel.startswith(SENSITIVE_PREFIXES):
        return f"`{rel}` is a sensitive location (git metadata / a coding host's settings)"
    why = planted_code(rel)
    if why:
        return f"`{rel}` {why}"
    if is_protected(full, fx.protected, fx.folded):
        return f"`{rel}` is a file statewright is enforcing"
    if full == fx.real_store or full.startswith(fx.real_store_prefix):
        return f"`{rel}` is inside statewright's store"
    return None


def planted_code(rel: str) -> str | None:
    """Why a file at project-relative `rel` would be code that allowed commands run without
    being asked to (escape class 5, docs/policy.md): the git metadata of any repository
    (hooks, config: a nested or planted repository), an installed package's directory or
    start-up file (`*.pth`, `sitecustomize.py`: every Python run imports them), the tools of
    `node_modules/.bin`, a configuration file that makes a package manager run a command, or a
    module at the top of the project that shadows one an allowed tool imports."""
    parts = rel.split("/")
    if ".git" in parts:
        return "is git metadata (a repository's hooks and config run code)"
    if parts[0] in HOOK_DIRS:
        return "is a directory of git hooks (git runs them on commit, merge, checkout)"
    if "site-packages" in parts or "dist-packages" in parts or rel.endswith(".pth") or \
            parts[-1] in ("sitecustomize.py", "usercustomize.py"):
        return "is where installed Python packages live (every Python run loads it)"
    if "node_modules" in parts and ".bin" in parts:
        return "is an installed program of node_modules (npm scripts run it)"
    if parts[-1] in CODE_CONFIG_FILES:
        return "configures which commands a package manager runs"
    if len(parts) == 1 and parts[0].endswith(".py") and parts[0][:-3] in SHADOWED_MODULES:
        return (f"would shadow the module `{parts[0][:-3]}` that Python tools import from "
                "the project's top directory")
    if len(parts) == 2 and parts[1] == "__init__.py" and parts[0] in SHADOWED_MODULES:
        return f"would shadow the package `{parts[0]}` that Python tools import"
    return None


def holds_protected(full: str, ctx: GateContext) -> str | None:
    """A written target that is a directory holding the store or a protected file (`pytest
    --basetemp=.` empties its directory first)."""
    pre = full.rstrip(os.sep) + os.sep
    fx = ctx_facts(ctx)
    if fx.real_store.startswith(pre) or pre in fx.holders:
        return f"`{full}` holds statewright's store or a file statewright is enforcing"
    return None


def write_target_problem(p: str, full: str, rel: str | None, ctx: GateContext) -> str | None:
    """Why an edit tool may not write `p`: outside the project, or somewhere `sensitive`."""
    if rel is None:
        return f"`{p}` is outside the project; edit tools may only write inside it"
    key = (p, full, rel)  # (text alone: kept per context)
    verdicts = ctx_facts(ctx).write_verdicts
    if key in verdicts:
        return verdicts[key]
    why = sensitive(rel, full, ctx)
    return remember(verdicts, key, f"`{p}`: {why}" if why else None)
