"""Self-protection (DESIGN.md section 4, check 1): the store and the workflows in use.

The agent must not write, delete, move or read the store directory (`.statewright/` or
`$STATEWRIGHT_HOME`), nor change a workflow file in use or statewright's own configuration
(`statewright.json`, whose `fail_open` would switch enforcement off, and Claude Code's
`.claude/settings*.json`, which holds the hooks).
"""

from __future__ import annotations

import os

from ._lazy import CACHE_MAX_LINE as _CACHE_MAX_LINE
from ._lazy import LazyRe, lru_cache
from .paths import _real_root, project_relative, real_path, relative_to_root

TYPE_CHECKING = False  # (not `typing.TYPE_CHECKING`: `typing` costs ~10 ms to import)
if TYPE_CHECKING:  # pragma: no cover
    import re
    from typing import Any

    from .shell import Command, ShellAnalysis, Word

# What a non-shell decision needs is imported here; `.shell` (tree-sitter, dataclass-like
# records), `re` and `fnmatch` only by the functions that need them: the shell checks below
# run on an analysis, so `.shell` (which imports `re` and `fnmatch`) is loaded by then.


def _fnmatchcase(name: str, pattern: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern)

STORE_FILE = "state.db"
#: config files that switch enforcement off if rewritten (project-relative)
#: (`.mcp.json` names the `statewright` MCP server whose tools the hook leaves to the proxy:
#: pointing it at another program would take those tools out of enforcement)
CONFIG_FILES = ("statewright.json", ".claude/settings.json", ".claude/settings.local.json",
                ".mcp.json")
#: the user's own Claude Code configuration (hooks, MCP servers of every scope, plugins)
HOME_CONFIG_FILES = ("~/.claude.json", "~/.claude/settings.json", "~/.claude/settings.local.json")
#: argument names of MCP tools that hold paths
PATH_KEYS = {"path", "paths", "source", "destination", "file_path", "notebook_path", "filePath",
             "directory", "dir", "root", "cwd", "target", "file", "filename", "files", "src",
             "dest", "from", "to", "old_path", "new_path", "relative_workspace_path",
             "target_file", "repo_path"}
#: commands that only read the files they are given
READ_ONLY = {"cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "wc", "ls",
             "diff", "cmp", "file", "stat", "md5sum", "sha256sum", "sha1sum", "jq", "bat",
             "git", "echo", "printf", "test", "[", "realpath", "readlink", "basename",
             "dirname", "nl", "sort", "uniq", "cut", "tr", "column", "hexdump", "xxd", "od",
             "strings", "python", "python3", "node", "pytest", "npm", "statewright", "cd",
             "pushd", "popd", "pwd"}
#: commands that act on whole trees (or move/link them) when given a directory
_TREE_CMDS = {"rm", "mv", "cp", "rsync", "tar", "zip", "chmod", "chown", "chgrp", "ln",
              "shred", "scp", "rmdir", "install", "truncate", "dd", "unlink", "srm", "wipe",
              "find", "git", "setfacl", "chattr", "mount", "bsdtar", "7z", "cpio", "pax",
              "sqlite3", "rclone", "trash", "gio", "busybox"}


def store_markers(store_dir: str) -> tuple[str, ...]:
    base = os.path.basename(os.path.normpath(store_dir)) or ".statewright"
    return tuple(dict.fromkeys([base, ".statewright"]))


@lru_cache(maxsize=64)
def _marker_re(store_dir: str) -> re.Pattern[str]:
    import re

    parts = [re.escape(m) for m in store_markers(store_dir)]
    parts.append(r"(?<![A-Za-z0-9_-])state\.db")
    ab = os.path.normpath(store_dir)
    parts.append(re.escape(ab))
    return re.compile("|".join(parts), re.IGNORECASE)


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


class StoreMarkers:
    """What `_marker_re(store_dir)` finds, without compiling it (nor importing `re`) for
    ASCII text: a case-insensitive mention of the store's name, of `.statewright`, of
    `state.db` not glued to a preceding name character, or of the store's path.

    For ASCII text and ASCII markers, case-insensitive matching is `str.lower()` equality
    (Unicode case folding only relates ASCII letters to non-ASCII ones, such as `ſ` to `s`);
    anything else is searched with the regular expression itself."""

    __slots__ = ("ascii", "needles", "store_dir")

    def __init__(self, store_dir: str) -> None:
        parts = (*store_markers(store_dir), os.path.normpath(store_dir))
        self.store_dir = store_dir
        self.needles = tuple(dict.fromkeys(p.lower() for p in parts))
        self.ascii = all(p.isascii() for p in parts)

    def search(self, text: str) -> bool:
        if not (self.ascii and text.isascii()):
            return _marker_re(self.store_dir).search(text) is not None
        low = text.lower()
        for n in self.needles:
            if n in low:
                return True
        i = low.find("state.db")
        while i != -1:
            if i == 0 or low[i - 1] not in _WORD_CHARS:
                return True
            i = low.find("state.db", i + 1)
        return False


@lru_cache(maxsize=64)
def _markers(store_dir: str) -> StoreMarkers:
    return StoreMarkers(store_dir)


def _inside(path: str, directory: str) -> bool:
    d = directory.rstrip(os.sep)
    return path == d or path.startswith(d + os.sep)


def resolved(p: str, root: str, cwd: str | None, shell: bool = False) -> str:
    """Absolute, symlink-free form of `p`. Memoised for the duration of one decision only
    (see `gate`), so a link created later is always seen. `shell`: `p` is an unquoted shell
    word already expanded (a quoted `~` stays a plain name), so no `~` expansion here."""
    base = cwd or root
    key = (p, base, shell)
    memo = _MEMO.get("paths")
    if memo is not None:
        full = memo.get(key)
        if full is not None:
            return full
    if not shell and p[:1] == "~":
        p = os.path.expanduser(p)
    # os.path.join, inlined (hot path)
    if p[:1] == os.sep:
        joined = p
    elif base[-1:] == os.sep:
        joined = base + p
    else:
        joined = base + os.sep + p
    full = real_path(joined, _real_root(root))
    if memo is not None:
        memo[key] = full
    return full


_MEMO: dict[str, dict] = {}


def protected_paths(ctx: Any) -> frozenset[str]:
    return _protected(ctx.project_root, ctx.protected_files)


def _protected(project_root: str, files: Any) -> frozenset[str]:
    try:
        return _protected_cached(project_root, files)
    except TypeError:  # a set or list rather than a frozenset
        return _protected_cached(project_root, frozenset(files))


@lru_cache(maxsize=64)
def _protected_cached(project_root: str, files: Any) -> frozenset[str]:
    root = os.path.realpath(project_root)
    out = {os.path.realpath(p) for p in files}
    out.update(os.path.join(root, f) for f in CONFIG_FILES)
    out.update(os.path.realpath(os.path.expanduser(f)) for f in HOME_CONFIG_FILES)
    return frozenset(out)


@lru_cache(maxsize=64)
def _protected_folded(protected: frozenset[str]) -> frozenset[str]:
    return frozenset(p.casefold() for p in protected)


@lru_cache(maxsize=16)
def _home_claude() -> str:
    return os.path.realpath(os.path.expanduser("~/.claude"))


@lru_cache(maxsize=64)
def _protected_rel(project_root: str, protected: frozenset[str]) -> frozenset[str | None]:
    return frozenset(project_relative(p, project_root) for p in protected)


@lru_cache(maxsize=64)
def real_store(store_dir: str) -> str:
    return os.path.realpath(store_dir)


@lru_cache(maxsize=64)
def _store_facts(store_dir: str) -> tuple[str, str, StoreMarkers]:
    store = real_store(store_dir).rstrip(os.sep) or os.sep
    return store, store + os.sep, _markers(store_dir)


class CtxFacts:
    """What every decision needs to know about a `GateContext` that does not change while a
    process runs (each is what the per-value caches above already keep for the process's
    life: the project root's, store's and protected files' real paths), gathered once so a
    decision reads attributes instead of calling half a dozen caches. Nothing here is about
    the path being decided: that is resolved afresh on every decision."""

    __slots__ = (
        "folded",
        "holders",
        "home_claude",
        "home_claude_prefix",
        "markers",
        "protected",
        "real_root",
        "real_store",
        "real_store_prefix",
        "store",
        "store_prefix",
    )

    def __init__(self, project_root: str, store_dir: str, protected: frozenset[str]) -> None:
        self.real_root = _real_root(project_root)
        self.store, self.store_prefix, self.markers = _store_facts(store_dir)
        self.protected = protected
        self.folded = _protected_folded(protected)
        # `any(f.startswith(d + "/") for f in protected)` is `d + "/" in holders`
        self.holders = frozenset(f[:i + 1] for f in protected
                                 for i in range(len(f)) if f[i] == os.sep)
        self.real_store = real_store(store_dir)
        self.real_store_prefix = self.real_store + os.sep
        hc = _home_claude().rstrip(os.sep)
        self.home_claude, self.home_claude_prefix = hc, hc + os.sep


@lru_cache(maxsize=64)
def _ctx_facts(project_root: str, store_dir: str, protected_files: Any) -> CtxFacts:
    return CtxFacts(project_root, store_dir, _protected(project_root, protected_files))


_LAST_CTX: list = [None, None]  # [GateContext, CtxFacts] of the last decision


def ctx_facts(ctx: Any) -> CtxFacts:
    """`CtxFacts` of `ctx`: by identity when it is the context of the last decision (a
    `GateContext` is immutable; one with a mutable `protected_files` is never kept), else by
    value."""
    last = _LAST_CTX
    if last[0] is ctx:
        return last[1]
    pf = ctx.protected_files
    if type(pf) is frozenset:
        facts = _ctx_facts(ctx.project_root, ctx.store_dir, pf)
        last[0], last[1] = ctx, facts
        return facts
    return _ctx_facts(ctx.project_root, ctx.store_dir, frozenset(pf))


def path_violation(p: str, ctx: Any, cwd: str | None, write: bool, tree: bool = False
                   ) -> str | None:
    """Why touching path `p` is refused (None if it is fine).

    `write`: the call may change, move or delete what `p` names. Then, besides the store, the
    workflows in use and statewright's/Claude Code's configuration (compared case-insensitively,
    for case-insensitive file systems) are refused, and anything under `~/.claude/` (the
    user's hooks, settings and plugins). `tree`: the tool moves, renames or deletes what it
    names; then a directory holding the store or one of those files is refused too (moving
    `workflows/` away, editing the copy and moving it back would swap the workflow in use)."""
    if not isinstance(p, str) or not p:
        return None
    fx = ctx_facts(ctx)
    full = resolved(p, ctx.project_root, cwd)
    store = fx.store
    if full == store or full.startswith(fx.store_prefix) or fx.markers.search(p):
        return f"`{p}` is inside statewright's store ({ctx.store_dir}), which agents may not touch"
    if write:
        if full in fx.protected or full.casefold() in fx.folded:
            return f"`{p}` is a workflow or configuration file statewright is enforcing"
        if full == fx.home_claude or full.startswith(fx.home_claude_prefix):
            return f"`{p}` is Claude Code's own configuration (~/.claude), which holds its hooks"
        pre = full.rstrip(os.sep) + os.sep
        if (tree and store.startswith(pre)) or pre in fx.holders:
            return (f"`{p}` holds statewright's store or a file statewright is enforcing; "
                    "it may not be changed, moved or deleted as a whole")
    return None


def glob_violation(pattern: str, ctx: Any) -> str | None:
    """Why a file-name glob (the Glob tool's `pattern`, Grep's `glob`) could list or search
    the store: a component that could match the store's name, or a final component that
    could match `state.db` below a wildcard directory (`*/state.d?`, `**/*.db`)."""
    if not isinstance(pattern, str) or not pattern:
        return None
    comps = [c for c in pattern.replace("\\", "/").split("/") if c and c != "."]
    markers = store_markers(ctx.store_dir)
    wild_dir = False
    for i, comp in enumerate(comps):
        low = comp.lower()
        if "{" in low:
            low = _BRACES_RE.sub("*", low)
        wild = any(ch in low for ch in "*?[")
        if not wild and (low in (m.lower() for m in markers) or
                         (i == len(comps) - 1 and low == STORE_FILE)):
            return f"the pattern `{pattern}` names statewright's store"
        if wild and not set(low) <= {"*"}:
            if any(_fnmatchcase(m.lower(), low) for m in markers):
                return f"the pattern `{pattern}` could match statewright's store"
        if i == len(comps) - 1 and (wild_dir or i == 0) and wild and \
                _fnmatchcase(STORE_FILE, low):
            return f"the pattern `{pattern}` could match statewright's store file"
        if wild:
            wild_dir = True
    return None


_BRACES_RE = LazyRe(r"\{[^{}]*\}")


def tool_paths(args: dict[str, Any]) -> list[str]:
    """Every path-like argument of a tool call: the strings under a path-like key, at any
    depth of the input (`{"options": {"path": ...}}`, `{"paths": [{"file": ...}]}`)."""
    out: list[str] = []
    known = _PATH_KEY_MEMO
    for k, v in args.items():
        if type(v) is str:
            pk = known.get(k)
            if pk is None:
                pk = _is_path_key(k)
                if type(k) is str:
                    if len(known) >= 4096:
                        known.clear()
                    known[k] = pk
            if pk:
                out.append(v)
        elif _is_path_key(k):
            _add_paths(v, out)
        elif isinstance(v, (dict, list)):
            _nested_paths(v, out, 1)
    return out


_PATH_KEY_MEMO: dict[str, bool] = {}  # `_is_path_key` of argument names (text only)


def _nested_paths(v: Any, out: list[str], depth: int) -> None:
    if depth > 16:
        raise ValueError("the tool input is nested too deeply to check its paths")
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(k, str) and _is_path_key(k):
                _add_paths(x, out, depth + 1)
            elif isinstance(x, (dict, list)):
                _nested_paths(x, out, depth + 1)
    elif isinstance(v, list):
        for x in v:
            if isinstance(x, (dict, list)):
                _nested_paths(x, out, depth + 1)


def _add_paths(v: Any, out: list[str], depth: int = 0) -> None:
    """Every string inside the value of a path argument, however it is nested (a front end
    that flattens or coerces an odd shape must not reach a path that was never checked)."""
    if depth > 16:
        raise ValueError("the tool input is nested too deeply to check its paths")
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _add_paths(x, out, depth + 1)
    elif isinstance(v, dict):
        for v2 in v.values():
            _add_paths(v2, out, depth + 1)


@lru_cache(maxsize=1024)
def _is_path_key(k: str) -> bool:
    return k in PATH_KEYS or k.lower().endswith(("path", "paths", "file", "dir"))


# -- shell -------------------------------------------------------------------------------------


def _word_could_name(w: Word, names: tuple[str, ...]) -> bool:
    """Could this word (glob or partly dynamic) expand to a path with a component in `names`?"""
    if not (w.glob or w.dynamic):
        return False
    for comp in w.pattern.split("/"):
        if not comp or set(comp) <= {"*"}:
            continue
        for n in names:
            if _fnmatchcase(n, comp) or _fnmatchcase(n.lower(), comp.lower()):
                return True
    return False


def _is_ancestor_arg(w: Word, ctx: Any, cwd: str) -> bool:
    if w.tilde or w.value.startswith("~"):
        return True
    if not w.literal:
        return w.pattern in ("*", "/*") and w.dynamic  # a whole-word variable could be `.`
    full = os.path.normpath(os.path.join(cwd, w.value))
    store = os.path.normpath(ctx.store_dir)
    return _inside(store, full)


def _recursive(c: Command) -> bool:
    vals = [a.value for a in c.args]
    n = c.name
    if n in ("rm", "cp", "chmod", "chown", "chgrp", "setfacl", "scp", "srm", "shred", "trash"):
        return any(v in ("--recursive", "-R") or (v.startswith("-") and not v.startswith("--")
                                                    and ("r" in v or "R" in v or "a" in v))
                   for v in vals)
    if n == "find":
        return any(v in ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0",
                         "-fprintf", "-fls") for v in vals)
    if n == "git":
        return "clean" in vals or "rm" in vals or ("stash" in vals and "-a" in vals)
    return n in _TREE_CMDS


def _line_key_ok(analysis: ShellAnalysis) -> bool:
    """Whether per-line results may be cached by the line's text (the analysis is then the
    cached one `shell.analyze` returns for that text)."""
    return len(analysis.source) <= _CACHE_MAX_LINE


@lru_cache(maxsize=256)
def _static_by_line(source: str, store_dir: str) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    from .shell import analyze

    return _static_violations(analyze(source), store_dir)


def _static_violations(analysis: ShellAnalysis, store_dir: str
                       ) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """What self-protection can tell from the text alone: (reasons, commands whose arguments
    need the file system or the working directory checked, with their facts)."""
    out: list[str] = []
    rx = _markers(store_dir)
    markers = store_markers(store_dir) + (STORE_FILE,)
    if rx.search(analysis.source):
        out.append("the command names statewright's store")
    elif analysis.problems:
        tok = loose_mention(analysis.source, markers)
        if tok is not None:
            out.append(f"`{tok}` could name statewright's store in a line that cannot be "
                       f"fully analysed ({analysis.problems[0]})")
    for w in analysis.words:
        if rx.search(w.value):
            out.append(f"`{w.text}` names statewright's store")
        elif (w.glob or w.dynamic) and _word_could_name(w, markers):
            out.append(f"`{w.text}` could expand to statewright's store")
    todo: list[Any] = []
    for c in analysis.commands:
        if c.stdin_text and rx.search(c.stdin_text):
            out.append(f"`{c.name}` is fed text naming statewright's store")
        if not c.name_literal:
            continue
        name = c.name
        args = c.args
        vals = [a.value for a in args]
        if name == "git" and "clean" in vals and any(
                v.startswith("-") and not v.startswith("--") and ("x" in v or "X" in v)
                for v in vals):
            out.append("`git clean -x` would delete statewright's store")
        recursive = _recursive(c)
        find_here = name == "find" and recursive and (
            not args or all(v.startswith(("-", "(", "!")) for v in vals[:1]))
        # the arguments worth a look: not options; for read-only commands only when the
        # command acts on whole trees
        writes = name not in READ_ONLY
        check = ()
        if recursive or writes or name == "ln":
            check = tuple(a for a in args if not (a.literal and a.value.startswith("-")))
        if check or find_here:
            todo.append((c, recursive, writes, check, find_here))
    return tuple(dict.fromkeys(out)), tuple(todo)


def _line_cwds(analysis: ShellAnalysis, cwd: str) -> tuple[list[str], bool]:
    """The directories a relative path in the line may be resolved against, and whether a
    directory change could not be followed (non-literal `cd`, `pushd`, `popd`)."""
    cwds = [cwd]
    lost = False
    if analysis.changes_dir:
        cur = cwd
        for c in analysis.commands:
            if not c.name_literal or c.name not in ("cd", "pushd", "popd"):
                continue
            if c.name == "cd" and len(c.args) == 1 and c.args[0].literal:
                cur = os.path.normpath(os.path.join(cur, c.args[0].value))
                if cur not in cwds:
                    cwds.append(cur)
            else:
                lost = True
    return cwds, lost


def shell_violations(analysis: ShellAnalysis, ctx: Any, cwd: str | None) -> list[str]:
    """Self-protection for a shell line: every reason it could touch the store or a protected
    file, or run statewright's human-only CLI."""
    cwd = cwd or ctx.project_root
    if _line_key_ok(analysis):
        static, todo = _static_by_line(analysis.source, ctx.store_dir)
    else:
        static, todo = _static_violations(analysis, ctx.store_dir)
    out = list(static)
    needs_fs = todo or analysis.redirects
    if needs_fs:
        protected = protected_paths(ctx)
        store = real_store(ctx.store_dir)
        cwds, lost = _line_cwds(analysis, cwd)
    for c, recursive, writes, check, find_here in todo:
        name = c.name
        if find_here and _inside(store, os.path.normpath(cwd)):
            out.append("`find` with an action from above the store would reach it")
        for a in check:
            if recursive and any(_is_ancestor_arg(a, ctx, d) for d in cwds):
                out.append(f"`{name} {a.text}` would reach statewright's store")
            if not a.literal or not a.value:
                continue
            if writes:
                for d in cwds:
                    why = _protected_arg(c, a, recursive, ctx, d, protected)
                    if why:
                        out.append(why)
                        break
                if lost and _basename(a.value) in _protected_names(protected):
                    out.append(f"`{name}` would change `{a.value}`, which may be a file "
                               "statewright is enforcing (the line changes directory)")
            if name == "ln":
                full = resolved(a.value, ctx.project_root, cwd, shell=True)
                if _inside(full, store) or full in protected:
                    out.append(f"`ln {a.value}` would link to statewright's files")
    out += cli_violations(analysis, cwd)
    for r in analysis.redirects:
        if r.output and r.target is not None and r.target.literal:
            full = resolved(r.target.value, ctx.project_root, cwd, shell=True)
            if full in protected or _inside(full, store) or (
                    r.fd is None and r.op.startswith("-") and _inside(store, full)):
                out.append(f"`{r.op} {r.target.value}` would write a file statewright is "
                           "enforcing")
    return list(dict.fromkeys(out))


def _protected_arg(c: Command, a: Word, recursive: bool, ctx: Any, cwd: str,
                   protected: frozenset[str]) -> str | None:
    full = resolved(a.value, ctx.project_root, cwd, shell=True)
    if full in protected:
        return f"`{c.name}` would change `{a.value}`, a file statewright is enforcing"
    if c.name in _TREE_CMDS and c.name != "ln" and (recursive or c.name == "mv"):
        rel = relative_to_root(full, ctx.project_root)
        if rel is not None:
            prefix = "" if rel == "." else rel + "/"
            if any(r and r != "." and r.startswith(prefix)
                   for r in _protected_rel(ctx.project_root, protected)):
                return f"`{c.name} {a.text}` would change a file statewright is enforcing"
    return None


@lru_cache(maxsize=64)
def _protected_names(protected: frozenset[str]) -> frozenset[str]:
    return frozenset(os.path.basename(p).lower() for p in protected)


# -- statewright's own CLI -----------------------------------------------------------------------
#
# The CLI acts as the human: `approve`, `reject`, `force-state`, `pause`, `resume`, `start`,
# `install`, `hook`, `serve` would let an agent wave its own work through. Only the read-only
# commands and `transition` (what the statewright_transition tool does) may be run by an agent,
# however the CLI is reached: bare, by path (`.venv/bin/statewright`), through a wrapper or a
# runner (`env`, `sudo`, `xargs`, `uv run`, `pipx run`, ...), as `python -m statewright`, as
# Python code importing the package, or as `statewright-hook` fed hand-made JSON.

#: `statewright <command>` an agent may run (read-only, plus firing an event)
CLI_AGENT_COMMANDS = frozenset({"status", "check", "validate", "list", "show", "graph",
                                "history", "runs", "transition", "--help", "-h", "--version"})
#: known human-only commands (named in reasons; anything not in CLI_AGENT_COMMANDS is refused)
CLI_HUMAN_COMMANDS = frozenset({"approve", "reject", "force-state", "pause", "resume", "start",
                                "install", "hook", "serve"})
_CLI_NAMES = ("statewright", "statewright-hook")
#: commands that run another program given as an argument (first statewright/python word wins)
_RUNNERS = frozenset({
    "uv", "uvx", "pipx", "poetry", "pdm", "hatch", "rye", "pixi", "conda", "mamba",
    "micromamba", "tox", "nox", "npx", "bunx", "pnpm", "yarn", "npm", "env", "sudo", "doas",
    "exec", "command", "builtin", "nohup", "time", "setsid", "timeout", "nice", "ionice",
    "stdbuf", "taskset", "chrt", "prlimit", "cpulimit", "strace", "ltrace", "valgrind",
    "faketime", "firejail", "unbuffer", "xargs", "parallel", "watch", "flock", "busybox",
    "tmux", "screen", "at", "batch", "systemd-run", "dbus-run-session", "xvfb-run", "direnv",
    "dotenv", "op", "doppler", "infisical", "chronic", "ts", "caffeinate", "script", "su",
    "runuser", "sg", "ssh", "docker", "podman", "nsenter", "unshare", "entr", "inotifywait",
    "fswatch", "watchexec", "nodemon", "coproc"})
#: commands that only print or search text: a mention of the CLI in their arguments is talk,
#: not a call (`git commit -m "..."`, `grep "statewright approve" docs`)
_TEXT_ONLY = frozenset({"echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack",
                        "ls", "cat", "head", "tail", "wc", "diff", "sort", "uniq", "cut", "tr",
                        "jq", "yq", "less", "more", "true", "false", ":", "test", "[", "[[",
                        "cd", "pwd", "unset", "mkdir", "touch"})
#: git commands that run nothing given on the command line (unlike rebase --exec, bisect run,
#: submodule foreach, difftool --extcmd, filter-branch)
_GIT_TALK = frozenset({"commit", "tag", "notes", "log", "grep", "show", "diff", "status", "add",
                       "branch", "checkout", "switch", "restore", "blame", "shortlog",
                       "describe", "rev-parse", "ls-files", "mv", "rm", "stash", "fetch",
                       "pull", "push", "init", "clone", "reset", "revert", "cherry-pick"})
_PY_RE = LazyRe(r"(?:python|pypy)[0-9.]*(?:[-_]?dbg)?|py")
#: the CLI called with a human-only command, or the package imported, inside some code text
_CLI_CALL_RE = LazyRe(
    r"(?i)statewright-hook|statewright(?:\.cli|\.__main__)?[\s'\"\\,()\[\]{}]+(?:-[^\s'\"]*"
    r"[\s'\"\\,()\[\]{}]+)*(?:approve|reject|force-state|force_state|pause|resume|start|install|"
    r"hook|serve)(?![\w.\-/])|(?:import|from)\s+statewright\b|"
    r"statewright\.(?:runtime|hook|store|engine|proxy)\b")
_STATEWRIGHT_RE = LazyRe(r"(?i)(?<![A-Za-z0-9_])statewright")


def _basename(value: str) -> str:
    return value.rstrip("/").rsplit("/", 1)[-1].lower()


def _word_cli_name(w: Word, cwd: str) -> str | None:
    """'statewright' / 'statewright-hook' when the word names (or could name) the CLI;
    '*' when it is wholly dynamic (could be anything); None otherwise."""
    if w.literal:
        base = _basename(w.value)
        if base in _CLI_NAMES:
            return base
        if "/" in w.value:
            # a link to the CLI made by an earlier call (`ln -s .venv/bin/statewright sw`)
            _FS_USES[0] += 1  # this answer depends on the file system: not cached
            real = _basename(real_path(os.path.join(cwd, w.value)))
            if real in _CLI_NAMES:
                return real
        return None
    comp = w.pattern.rstrip("/").rsplit("/", 1)[-1].lower()
    if not comp or set(comp) <= {"*"}:
        return "*"
    for n in _CLI_NAMES:
        if _fnmatchcase(n, comp):
            return n
    return None


def _cli_args_problem(args: tuple[Word, ...], shown: str, fed_by_xargs: bool,
                      lenient: bool = False) -> str | None:
    """Why `statewright ARGS` is refused (None if an agent may run it).

    `lenient`: the program name is wholly dynamic (`$X approve`), so only a literal human-only
    command refuses it."""
    sub = None
    for a in args:
        if a.literal and a.value.startswith("-") and a.value not in ("--help", "-h",
                                                                      "--version"):
            if lenient:
                continue
            return (f"`{shown}`: options before the command are not for agents "
                    "(only `statewright COMMAND ...`)")
        sub = a
        break
    if lenient:
        if sub is not None and sub.literal and sub.value.lower() in CLI_HUMAN_COMMANDS:
            return (f"`{shown}` could run the human-only `statewright {sub.value}`")
        return None
    if sub is None:
        if fed_by_xargs:
            return f"`{shown}`: xargs would supply statewright's command"
        return None  # prints help
    if not sub.literal:
        return f"`{shown}`: statewright's command is not a literal word"
    if sub.value in CLI_AGENT_COMMANDS:
        return None
    return (f"`statewright {sub.value}` is for humans only (agents may run "
            "`statewright status/check/validate/list/show/graph/history/runs` and fire events "
            "with `statewright transition` or the statewright_transition tool)")


def _python_problem(args: tuple[Word, ...], c: Command, shown: str, line_mentions: bool,
                    cwd: str) -> str | None:
    """Why running Python with ARGS could reach statewright's CLI or package."""
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        v = a.value
        if not a.literal and not a.dynamic:  # a glob among the options
            i += 1
            continue
        if v == "-":
            break  # the script is stdin
        if v == "--":
            i += 1
            return _py_script(args[i:], c, shown, line_mentions, cwd) if i < n else None
        if v.startswith("--"):
            i += 2 if v == "--check-hash-based-pycs" else 1
            continue
        if v.startswith("-") and len(v) > 1:
            j = 1
            while j < len(v):
                ch = v[j]
                if ch in "cm":
                    rest = v[j + 1:]
                    from .shell import literal_word

                    val = (literal_word(rest) if rest else
                           args[i + 1] if i + 1 < n else None)
                    after = i + 1 if rest else i + 2
                    if val is None:
                        return None
                    if ch == "c":
                        if _STATEWRIGHT_RE.search(val.value) or (
                                not val.literal and line_mentions):
                            return f"`{shown}`: Python code that uses statewright"
                        return None
                    mod = val.value.lower()
                    if not val.literal:
                        if _fnmatchcase("statewright", val.pattern.lower()):
                            return f"`{shown}`: the module could be statewright"
                        return None
                    if mod in ("statewright", "statewright.cli", "statewright.__main__"):
                        return _cli_args_problem(args[after:], shown, False)
                    if mod.startswith("statewright"):
                        return f"`{shown}`: runs statewright's module `{val.value}` by hand"
                    return None
                if ch in "XW":
                    if j + 1 == len(v):
                        i += 1  # the value is the next word
                    break
                j += 1
            i += 1
            continue
        return _py_script(args[i:], c, shown, line_mentions, cwd)
    # commands come from stdin
    if line_mentions and c.stdin != "inherit":
        return f"`{shown}`: Python reads code that mentions statewright from its input"
    return None


def _py_script(rest: tuple[Word, ...], c: Command, shown: str, line_mentions: bool,
               cwd: str) -> str | None:
    script = rest[0]
    if script.literal and script.value == "-":
        if line_mentions and c.stdin != "inherit":
            return f"`{shown}`: Python reads code that mentions statewright from its input"
        return None
    name = _word_cli_name(script, cwd)
    if name == "statewright-hook":
        return f"`{shown}`: runs statewright's hook by hand"
    if name == "statewright":
        return _cli_args_problem(rest[1:], shown, False)
    low = script.value.lower().replace("\\", "/")
    if low.endswith("statewright/__main__.py") or "statewright/cli/" in low or \
            "statewright/hook/" in low:
        return f"`{shown}`: runs statewright's own code by hand"
    return None


def _invocation_problem(argv: tuple[Word, ...], c: Command, line_mentions: bool,
                        runner: bool, cwd: str) -> str | None:
    """Why argv (a command, or the part of a runner's argv from the program on) may not run."""
    shown = " ".join(w.text for w in argv)[:100]
    name = argv[0]
    if not name.literal and name.dynamic:
        low = name.pattern.lower()
        if "statewright" in low or "tatewright" in name.value.lower():
            # `statewright${IFS}approve`: word splitting can hand the CLI hidden arguments
            return (f"`{shown}`: a command name built at run time around statewright's CLI "
                    "could run any of its commands")
        if line_mentions and set(low) <= {"*"}:
            # `IFS=x; v=statewrightxapprove; $v`
            return (f"`{shown}`: a command name known only at run time, in a line that "
                    "mentions statewright")
    cli = _word_cli_name(name, cwd)
    if cli == "statewright-hook":
        return f"`{shown}`: runs statewright's hook by hand (fake hook input)"
    if cli == "statewright":
        return _cli_args_problem(argv[1:], shown, c.context == "xargs")
    if cli == "*":
        why = _cli_args_problem(argv[1:], shown, False, lenient=True)
        if why:
            return why
    if argv[0].literal and _PY_RE.fullmatch(_basename(argv[0].value)):
        return _python_problem(argv[1:], c, shown, line_mentions, cwd)
    if not argv[0].literal and not runner:
        # `$PY -c 'import statewright'`
        for a in argv[1:]:
            if a.value in ("-c", "-m") or a.value.startswith(("-c", "-m")):
                return _python_problem(argv[1:], c, shown, line_mentions, cwd)
    return None


def _talk(c: Command, base: str) -> bool:
    """Does this command only print or search text (so naming the CLI in it is harmless)?"""
    if not c.name_literal:
        return False
    if base == "git":
        sub = next((a.value for a in c.args if not a.value.startswith("-")), "")
        return sub in _GIT_TALK and not any(a.value.startswith(("-c", "--exec")) for a in c.args)
    return base in _TEXT_ONLY


_TOKEN_SPLIT_RE = LazyRe(r"[\s;|&()<>`=]+")
_BRACE_ANY_RE = LazyRe(r"\{[^{}]*\}")


def loose_mention(source: str, names: tuple[str, ...]) -> str | None:
    """For a line the parser could not fully read: a token that names or could glob/brace-
    expand to one of `names` (quotes and backslashes dropped, `{a,b}` taken as `*`)."""
    for tok in _TOKEN_SPLIT_RE.split(source):
        t = tok.replace("'", "").replace('"', "").replace("\\", "").replace("$", "").lower()
        if not t or set(t) <= set("*?/.~"):
            continue
        if any(n in t for n in names):
            return tok
        pat = _BRACE_ANY_RE.sub("*", t)
        for comp in pat.split("/"):
            if not comp or set(comp) <= set("*?"):
                continue
            for n in names:
                if _fnmatchcase(n, comp):
                    return tok
    return None


_FS_USES = [0]  # bumped whenever a CLI check had to look at the file system
_CLI_CACHE: dict[str, tuple[str, ...]] = {}


def cli_violations(analysis: ShellAnalysis, cwd: str) -> list[str]:
    """Self-protection against running statewright's human-only CLI (or its hook, or its
    package) from a shell line. Applies in every state.

    The answer for a line that needed no file-system look-up (no command name or script given
    by path) depends on its text alone and is cached by text."""
    if not _line_key_ok(analysis):
        return _cli_violations(analysis, cwd)
    hit = _CLI_CACHE.get(analysis.source)
    if hit is not None:
        return list(hit)
    before = _FS_USES[0]
    out = _cli_violations(analysis, cwd)
    if _FS_USES[0] == before:
        if len(_CLI_CACHE) >= 256:
            _CLI_CACHE.clear()
        _CLI_CACHE[analysis.source] = tuple(out)
    return out


def _cli_violations(analysis: ShellAnalysis, cwd: str) -> list[str]:
    out: list[str] = []
    src = analysis.source
    if analysis.problems:
        tok = loose_mention(src, _CLI_NAMES)
        if tok is not None:
            out.append(f"`{tok}` could name statewright's CLI in a line that cannot be fully "
                       f"analysed ({analysis.problems[0]})")
            return out
    line_mentions = bool(_STATEWRIGHT_RE.search(src))
    if not line_mentions:
        for w in analysis.words:
            if "tatewright" in w.value.lower() or "tatewright" in w.pattern.lower():
                line_mentions = True
                break
    talk_only = bool(analysis.commands) and not analysis.problems
    for c in analysis.commands:
        if not c.argv:
            continue
        name = c.argv[0]
        base = _basename(name.value) if name.literal else ""
        if not _talk(c, base):
            talk_only = False
        if not name.literal or base in _CLI_NAMES or "/" in name.value or \
                _PY_RE.fullmatch(base):
            # (a plain name that is neither the CLI nor Python cannot be an invocation)
            why = _invocation_problem(c.argv, c, line_mentions, False, cwd)
            if why:
                out.append(why)
                continue
        if (line_mentions and base in ("pip", "pip3", "pipx", "uv")) or _PY_RE.fullmatch(base or "-"):
            vals_l = [w.value.lower() for w in c.argv]
            if "uninstall" in vals_l and any(v.startswith("statewright") for v in vals_l):
                out.append(f"`{c.text[:100]}` would uninstall statewright")
        if line_mentions and base in ("ln", "cp", "mv", "install", "rsync", "link") and any(
                w.literal and _basename(w.value) in _CLI_NAMES and "bin/" in w.value
                for w in c.argv[1:]):
            out.append(f"`{c.text[:100]}` would copy or link statewright's CLI under another "
                       "name")
        if line_mentions and base == "alias" and any("statewright" in w.value.lower() for w in c.argv[1:]):
            out.append(f"`{c.text[:100]}` would alias statewright's CLI")
        if base in _RUNNERS:
            for j in range(1, len(c.argv)):
                w = c.argv[j]
                if not w.literal:
                    if w.dynamic and "tatewright" in w.pattern.lower():
                        out.append(f"`{c.text[:100]}` hands `{name.text}` a word built at run "
                                   "time around statewright's CLI")
                        break
                    continue
                b = _basename(w.value)
                if b in _CLI_NAMES or _PY_RE.fullmatch(b) or (
                        "/" in w.value and _word_cli_name(w, cwd) in _CLI_NAMES):
                    why = _invocation_problem(c.argv[j:], c, line_mentions, True, cwd)
                    if why:
                        out.append(why)
                    break
            continue
        if not line_mentions:
            continue
        if not _talk(c, base):
            # an unknown program handed the CLI: refuse the known human-only commands
            vals = c.argv
            for j in range(1, len(vals)):
                w = vals[j]
                b = _basename(w.value) if w.literal else ""
                if b == "statewright-hook":
                    out.append(f"`{c.text[:100]}` hands statewright's hook to `{name.text}`")
                    break
                if b == "statewright":
                    why = _cli_args_problem(vals[j + 1:], c.text[:100], False, lenient=True)
                    if why:
                        out.append(why)
                        break
    if talk_only and any(r.output and r.target is not None and
                         r.target.value not in ("/dev/null", "/dev/stdout", "/dev/stderr")
                         for r in analysis.redirects):
        talk_only = False  # `echo 'statewright approve' > x.sh` writes a script
    if line_mentions and not out and not talk_only:
        # code handed to interpreters, shells fed text, opaque evaluators
        texts = [src] + [w.value for w in analysis.words] + [
            w.text for w in analysis.words if not w.literal] + [
            c.stdin_text for c in analysis.commands if c.stdin_text]
        joined = "\n".join(texts)
        if _CLI_CALL_RE.search(joined) or _CLI_CALL_RE.search(
                " ".join(w.value for w in analysis.words)):
            # `node -e "...execSync('statewright approve')"`, `echo statewright approve | sh`,
            # `perl -e 'system("statewright","approve")'`
            out.append("the line runs code that calls statewright's human-only CLI or its "
                       "package")
        elif analysis.problems:
            out.append("the line mentions statewright in code that cannot be analysed ("
                       + analysis.problems[0] + ")")
    return list(dict.fromkeys(out))
