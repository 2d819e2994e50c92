"""What self-protection protects (DESIGN section 4, check 1): statewright's store, the workflow
files in use, the configuration that could switch enforcement off (`statewright.json`,
`.mcp.json`, Claude Code's settings), and the facts about them every decision needs.

Stdlib only, and no regular expression for ASCII text (`StoreMarkers`): a Read decision
imports this.
"""

from __future__ import annotations

import os

from ...config import active_marker_dir
from ...lean import TYPE_CHECKING, environ_get, lru_cache
from ...names import CONFIG_FILE, STATE_DIR
from ..paths import _real_root, project_relative

if TYPE_CHECKING:  # pragma: no cover
    import re
    from typing import Any

#: config files that switch enforcement off if rewritten (project-relative)
#: (`.mcp.json` names the `statewright` MCP server whose tools the hook leaves to the proxy:
#: pointing it at another program would take those tools out of enforcement)
CONFIG_FILES = (CONFIG_FILE, ".claude/settings.json", ".claude/settings.local.json",
                ".mcp.json")
#: the user's own Claude Code configuration (hooks, MCP servers of every scope, plugins)
HOME_CONFIG_FILES = ("~/.claude.json", "~/.claude/settings.json", "~/.claude/settings.local.json")
#: the other hosts' configuration directories in the project (Codex, Gemini CLI, Copilot CLI):
#: their settings and hook files wire statewright in and can switch every hook off
#: (`disableAllHooks`, a removed hook entry), and a hook planted there runs at the host's next
#: call outside any sandbox. Protected whole, as `.claude/` is (project-relative)
HOST_CONFIG_DIRS = (".codex", ".gemini", ".github/hooks", ".github/copilot")
#: the same hosts' per-user configuration directories: (the variable that moves one, its default)
HOME_HOST_CONFIG_DIRS = (("CODEX_HOME", "~/.codex"), ("", "~/.gemini"),
                         ("COPILOT_HOME", "~/.copilot"))


@lru_cache(maxsize=64)
def store_markers(store_dir: str) -> tuple[str, ...]:
    base = os.path.basename(os.path.normpath(store_dir)) or STATE_DIR
    return tuple(dict.fromkeys([base, STATE_DIR]))


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

    __slots__ = ("ascii", "needles", "newline", "store_dir")

    def __init__(self, store_dir: str) -> None:
        parts = (*store_markers(store_dir), os.path.normpath(store_dir))
        self.store_dir = store_dir
        low = list(dict.fromkeys(p.lower() for p in parts))
        # (a needle that holds another is found only where that one is: left out)
        self.needles = tuple(n for n in low if not any(m != n and m in n for m in low))
        self.ascii = all(p.isascii() for p in parts)
        # (no mention can span a newline unless a marker holds one: `any_of`)
        self.newline = any("\n" in p for p in parts)

    def any_of(self, texts: list[str]) -> bool:
        """Whether `search` finds a mention in one of `texts`: one search of them joined by
        newlines (a mention cannot span one, and `state.db` after one is as after the start),
        rather than one search each."""
        if self.newline:
            return any(self.search(t) for t in texts)
        return self.search("\n".join(texts))

    def search(self, text: str) -> bool:
        if not (self.ascii and text.isascii()):
            return _marker_re(self.store_dir).search(text) is not None
        low = text.lower()
        for n in self.needles:
            if n in low:
                return True
        if "state.db" not in low:
            return False
        i = low.find("state.db")
        while i != -1:
            if i == 0 or low[i - 1] not in _WORD_CHARS:
                return True
            i = low.find("state.db", i + 1)
        return False


@lru_cache(maxsize=64)
def markers_of(store_dir: str) -> StoreMarkers:
    return StoreMarkers(store_dir)


def is_protected(full: str, protected: frozenset[str],
                 folded: frozenset[str] | None = None) -> bool:
    """Whether the resolved `full` is one of the `protected` paths in any spelling a file
    system may take for it: as is, NFC or NFD (macOS; a front end that maps one to the other),
    case-folded (a case-insensitive file system). (`folded`: `CtxFacts.folded`, when the
    caller has it.)"""
    if full in protected:
        return True
    if folded is None:
        folded = _protected_folded(protected)
    if full.casefold() in folded:
        return True
    if full.isascii():
        return False
    from ..paths import unicode_forms

    return any(f in protected or f.casefold() in folded for f in unicode_forms(full))


def inside(path: str, directory: str) -> bool:
    d = directory.rstrip(os.sep)
    return path == d or path.startswith(d + os.sep)


def protected_paths(ctx: Any) -> frozenset[str]:
    return _protected(ctx.project_root, ctx.protected_files)


def _protected(project_root: str, files: Any) -> frozenset[str]:
    home = environ_get("HOME")  # (`~/.claude/settings.json` is where HOME says)
    try:
        return _protected_cached(project_root, files, home)
    except TypeError:  # a set or list rather than a frozenset
        return _protected_cached(project_root, frozenset(files), home)


@lru_cache(maxsize=64)
def _protected_cached(project_root: str, files: Any, home: object) -> frozenset[str]:
    root = os.path.realpath(project_root)
    out = {os.path.realpath(p) for p in files}
    out.update(os.path.join(root, f) for f in CONFIG_FILES)
    out.update(os.path.realpath(os.path.expanduser(f)) for f in HOME_CONFIG_FILES)
    return frozenset(out)


@lru_cache(maxsize=64)
def _protected_folded(protected: frozenset[str]) -> frozenset[str]:
    return frozenset(p.casefold() for p in protected)


def host_config_dirs(project_root: str) -> tuple[str, ...]:
    """The real paths of the other hosts' configuration directories (`HOST_CONFIG_DIRS` in the
    project, `HOME_HOST_CONFIG_DIRS` where `HOME` and the hosts' variables put them, and the
    defaults too, so a variable set for this process alone moves nothing out of protection)."""
    return _host_config_dirs(project_root, environ_get("HOME"), environ_get("CODEX_HOME"),
                             environ_get("COPILOT_HOME"))


@lru_cache(maxsize=64)
def _host_config_dirs(project_root: str, home: object, codex: object, copilot: object
                      ) -> tuple[str, ...]:
    root = _real_root(project_root)
    out = [os.path.join(root, d) for d in HOST_CONFIG_DIRS]
    for var, default in HOME_HOST_CONFIG_DIRS:
        out.append(os.path.realpath(os.path.expanduser(default)))
        moved = environ_get(var) if var else None
        if isinstance(moved, str) and moved.strip():
            out.append(os.path.realpath(os.path.expanduser(moved)))
    return tuple(dict.fromkeys(d.rstrip(os.sep) for d in out if d and d != os.sep))


def _home_claude() -> str:
    return _home_claude_of(environ_get("HOME"))


@lru_cache(maxsize=16)
def _home_claude_of(home: object) -> str:
    return os.path.realpath(os.path.expanduser("~/.claude"))


@lru_cache(maxsize=64)
def protected_relative(project_root: str, protected: frozenset[str]) -> frozenset[str | None]:
    return frozenset(project_relative(p, project_root) for p in protected)


def program_paths() -> tuple[str, ...]:
    """The real paths of the programs the host runs for statewright (DESIGN section 4, check
    1): the installed package, the `statewright` and `statewright-hook` scripts (and the
    hook's native client), and the
    virtual environment they run in when there is one (its interpreter, site-packages and
    `.pth` files decide what `import statewright` loads). Found from this process, which is
    one of those programs; with the active-run markers' directory, which follows the
    environment (`XDG_STATE_HOME`, `HOME`) as `runtime.marker.marker_path` does."""
    return _program_paths(environ_get("XDG_STATE_HOME"), environ_get("HOME"))


@lru_cache(maxsize=4)
def _program_paths(xdg: object, home: object) -> tuple[str, ...]:
    import sys

    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    out = [here]  # .../statewright (the package: installed, or the source of an editable one)
    bindir = os.path.dirname(os.path.abspath(sys.executable))
    for name in ("statewright", "statewright-hook", "statewright-hook-native"):
        out.append(os.path.realpath(os.path.join(bindir, name)))
    if sys.prefix != sys.base_prefix:  # a virtual environment
        out.append(os.path.realpath(sys.prefix))
    # the active-run markers (`runtime.marker`): removing one would hide a taken-away store
    out.append(os.path.realpath(active_marker_dir()))
    return tuple(dict.fromkeys(p.rstrip(os.sep) for p in out if p and p != os.sep))


def program_prefixes() -> tuple[str, ...]:
    """`program_paths()` each with a trailing separator (for one `str.startswith` test)."""
    return _prefixes(program_paths())


@lru_cache(maxsize=4)
def _prefixes(paths: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(p + os.sep for p in paths)


@lru_cache(maxsize=64)
def real_store(store_dir: str) -> str:
    return os.path.realpath(store_dir)


@lru_cache(maxsize=64)
def _store_facts(store_dir: str) -> tuple[str, str, StoreMarkers]:
    store = real_store(store_dir).rstrip(os.sep) or os.sep
    return store, store + os.sep, markers_of(store_dir)


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
        "host_dirs",
        "markers",
        "path_verdicts",
        "protected",
        "real_root",
        "real_store",
        "real_store_prefix",
        "sensitive_verdicts",
        "store",
        "store_prefix",
        "write_verdicts",
    )

    def __init__(self, project_root: str, store_dir: str, protected: frozenset[str]) -> None:
        self.real_root = _real_root(project_root)
        self.host_dirs = host_config_dirs(project_root)
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
        # verdicts of pure, text-only questions about paths already resolved, under these facts
        # (`protect.files.path_violation`, `protect.scope.write_target_problem`): what the file
        # system says is never kept, only what follows from the text of the resolutions
        self.path_verdicts: dict[tuple[Any, ...], str | None] = {}
        self.write_verdicts: dict[tuple[str, str, str], str | None] = {}
        self.sensitive_verdicts: dict[tuple[str, str], str | None] = {}  # `scope.sensitive`


def remember(verdicts: dict[Any, str | None], key: Any, why: str | None) -> str | None:
    """Keep `why` in `verdicts` (a `CtxFacts` memo of a pure function of `key`); returns it."""
    if len(verdicts) >= 4096:
        verdicts.clear()
    verdicts[key] = why
    return why


@lru_cache(maxsize=64)
def _ctx_facts(project_root: str, store_dir: str, protected_files: Any, home: object
               ) -> CtxFacts:
    # (`home`: the `HOME` the facts are of, `~/.claude` and the home config files among them)
    return CtxFacts(project_root, store_dir, _protected(project_root, protected_files))


#: [(GateContext, HOME, CtxFacts)] of the last decision (one store: a thread never sees half
#: of it)
_LAST_CTX: list[tuple[Any, Any, Any]] = [(None, None, None)]


def decision_facts(ctx: Any) -> CtxFacts:
    """`CtxFacts` of `ctx` under the `HOME` of now (the home config files and `~/.claude` are
    protected where it puts them): asked by the gate once at the start of every decision, so
    the facts its checks read (`ctx_facts`) are never those of another `HOME`. By identity
    when `ctx` is the context of the last decision (a `GateContext` is immutable; one with a
    mutable `protected_files` is never kept) and `HOME` is the same, else by value."""
    home = environ_get("HOME")
    last = _LAST_CTX[0]
    if last[0] is ctx and last[1] == home:
        return last[2]
    pf = ctx.protected_files
    if type(pf) is frozenset:
        facts = _ctx_facts(ctx.project_root, ctx.store_dir, pf, home)
        _LAST_CTX[0] = (ctx, home, facts)
        return facts
    _LAST_CTX[0] = (None, None, None)  # (nothing kept for this context)
    return _ctx_facts(ctx.project_root, ctx.store_dir, frozenset(pf), home)


def ctx_facts(ctx: Any) -> CtxFacts:
    """`CtxFacts` of `ctx`: those of the decision under way (`decision_facts`, by identity),
    else under the `HOME` of now."""
    last = _LAST_CTX[0]
    if last[0] is ctx:
        return last[2]
    return decision_facts(ctx)
