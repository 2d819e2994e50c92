"""Check 6, `blocked_env` (DESIGN section 4): no expansion of a blocked variable in any form,
no environment dump, no read of a process environment, no interpreter code naming it; and the
rewritten command that runs with the blocked variables unset (`updatedInput`)."""

from __future__ import annotations

import os

from ...lean import TYPE_CHECKING, LazyRe, fnmatchcase, lru_cache
from .. import programs
from ..procfs import environ_path
from ..programs.text import pattern_args
from ..types import word_texts
from .records import Verdict

if TYPE_CHECKING:  # pragma: no cover
    import re

    from .records import ShellAnalysis, Word

#: programs that run code given in their arguments or input (Python by any name: see
#: `programs.is_python`)
INTERPRETERS = {"python", "python2", "python3", "node", "nodejs", "deno", "bun", "perl", "ruby",
                 "php", "lua", "luajit", "Rscript", "R", "osascript", "awk", "gawk", "mawk", "nawk",
                 "jq", "tclsh", "wish", "pwsh", "powershell", "julia", "groovy", "scala", "java",
                 "jshell", "irb", "sed", "expect", "gdb"}
_DUMPS_ENV = programs.DUMPS_ENV
_ENV_API_RE = LazyRe(
    r"environ|getenv|ENVIRON|process\.env|%ENV|\$ENV|ENV\[|ENV\.|\bENV\b|Deno\.env|"
    r"Sys\.getenv|\$env:|System\.getenv|\benv\b|os\.Environ|printenv|/proc/")


@lru_cache(maxsize=256)
def _name_re(name: str) -> re.Pattern[str]:
    import re  # (here: only a line that mentions a blocked name needs it, ~6 ms to import)

    return re.compile(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])")


def _mentions(text: str, names: tuple[str, ...]) -> list[str]:
    return [n for n in names if n in text and _name_re(n).search(text)]


def _could_be_proc_environ(w: Word) -> bool:
    v = w.value
    if "environ" in v:
        return True
    if v.startswith("/proc") or "/proc/" in v:
        # (a fixed absolute path is judged as the path it is: `/proc/cpuinfo` is fine; any
        # other word naming /proc could be one, relative to a directory the line is in)
        return not (w.literal and v[:1] == "/") or environ_path(os.path.normpath(v), True)
    if not (w.glob or w.dynamic):
        return False
    comps = [c for c in w.pattern.split("/") if c]
    if len(comps) < 2:
        return False
    for target in (["proc", "self", "environ"], ["proc", "1", "environ"],
                   ["proc", "self", "task", "1", "environ"], ["proc", "thread-self", "environ"]):
        if len(comps) <= len(target) and all(
                fnmatchcase(t, c)
                for t, c in zip(target[-len(comps):], comps, strict=True)):
            if comps[-1] != "*" or len(comps) >= 3:
                return True
    return False


def check_env(analysis: ShellAnalysis, blocked_env: tuple[str, ...] | list[str]) -> Verdict:
    """Check 6: refuse anything that could read a blocked variable."""
    blocked = tuple(blocked_env)
    if not blocked:
        return Verdict(True, "", ("no blocked variables",))
    trace: list[str] = []
    denied: list[str] = []
    for why in analysis.hidden_code:  # code the analysis cannot see could print anything
        trace.append(why + " -> deny")
        denied.append(why)
    for v in analysis.variables:
        if v.startswith("!"):
            why = f"indirect expansion `${{{v}}}` could read any variable"
            trace.append(why + " -> deny")
            denied.append(why)
        elif v in blocked:
            why = f"expands the blocked variable `{v}`"
            trace.append(why + " -> deny")
            denied.append(why)
    src = analysis.source
    named: list[str] = []
    for n in blocked:  # (the usual line names none: no call)
        if n in src:
            named = _mentions(src, blocked)
            break
    # (a name is in some argument's value only if it is in them all joined by a newline, which
    # no variable name holds: the usual line is looked at once, not word by word)
    values = "\n".join([w.value for c in analysis.commands for w in c.argv])
    in_values = False
    for n in blocked:  # (a loop, not `any`: cheaper for a few names)
        if n in values:
            in_values = True
            break
    later: list[str] = []  # (what the commands' names tell, after the names the line gives)
    kinds = _ENV_KINDS
    for c in analysis.commands:
        if c.stdin_text:
            named += _mentions(c.stdin_text, blocked)
        if in_values:
            for w in c.argv:
                named += _mentions(w.value, blocked)
        if not c.name_literal:
            continue
        name = c.name
        kind = kinds.get(name)
        if kind is None:
            kind = _env_kind(name)
        if kind & 1:
            d = programs.env_dump(name, c.args)
            if d:
                later.append(d)
        for risk in c.risks:
            if risk.kind == programs.SECRETS:
                later.append(risk.why)
        if kind & 2:
            code = " ".join(a.value for a in c.args) + "\n" + (c.stdin_text or "")
            if _ENV_API_RE.search(code):
                later.append(f"`{c.name}` is given code that reads the environment")
    for n in dict.fromkeys(named):
        why = f"names the blocked variable `{n}`"
        trace.append(why + " -> deny")
        denied.append(why)
    for why in later:
        trace.append(why + " -> deny")
        denied.append(why)
    for why in _environ_reads(analysis):
        trace.append(why + " -> deny")
        denied.append(why)
    if denied:
        uniq = list(dict.fromkeys(denied))
        return Verdict(False, "; ".join(uniq[:4]), tuple(trace))
    trace.append(f"no read of {', '.join(blocked)} found")
    return Verdict(True, "", tuple(trace))


def _env_kind(name: str) -> int:
    """What `check_env` asks of a command named `name` (a literal word), kept by name: 1, the
    program may print the environment (`programs.env_dump` answers None for a name not in
    `DUMPS_ENV` that holds no `/`); 2, it runs code (an interpreter; `is_python` is false for
    a name without a `y`)."""
    kind = 1 if name in _DUMPS_ENV or "/" in name else 0
    if name in INTERPRETERS or (("y" in name or "Y" in name) and programs.is_python(name)):
        kind |= 2
    if len(_ENV_KINDS) >= 4096:
        _ENV_KINDS.clear()
    _ENV_KINDS[name] = kind
    return kind


_ENV_KINDS: dict[str, int] = {}  # `_env_kind` by name


def _environ_reads(analysis: ShellAnalysis) -> list[str]:
    """Why words or redirects of the line could read a process environment
    (`/proc/*/environ`), in order."""
    out: list[str] = []
    # (a word's value holds `environ` or `/proc` only if they all joined do: the usual line
    # asks the question only of its glob and dynamic words)
    # (every value joined by a newline; the globs and expansions: kept)
    joined, _, odd = word_texts(analysis)
    every_word = "environ" in joined or "/proc" in joined
    patterns = _only_patterns(analysis) if "environ" in joined else ()
    for w in analysis.words if every_word else odd:
        if (every_word or w.glob or w.dynamic) and _could_be_proc_environ(w) and \
                w.value not in patterns:
            out.append(f"`{w.text}` could read a process environment (/proc/*/environ)")
    for r in analysis.redirects:
        t = r.target
        # (`_could_be_proc_environ` is false for a fixed value naming neither)
        if t is not None and ("environ" in t.value or "/proc" in t.value or t.glob or
                              t.dynamic) and _could_be_proc_environ(t):
            out.append("redirects from a process environment (/proc/*/environ)")
    return out


def _only_patterns(analysis: ShellAnalysis) -> frozenset[str]:
    """The values that every word of the line holding them gives a searcher as its pattern
    (`grep -rn environ src`): text searched for, not a file read. A value that is also some
    other word (`grep environ src; cat environ`) is not one."""
    patterns: dict[str, int] = {}
    for c in analysis.commands:
        if c.name_literal:
            for i in pattern_args(c.name, c.args):
                v = c.args[i].value
                patterns[v] = patterns.get(v, 0) + 1
    if not patterns:
        return frozenset()
    for w in analysis.words:
        if w.value in patterns:
            patterns[w.value] -= 1
    return frozenset(v for v, left in patterns.items() if left == 0)


# --------------------------------------------------------------------------------------------
# rewriting (updatedInput)


def rewrite_for_env(command: str, blocked_env: tuple[str, ...] | list[str],
                    env_overrides: dict[str, str]) -> str:
    """The command run with the blocked variables unset and the overrides exported."""
    parts: list[str] = []
    # a variable name is its own shell quoting (`_quote(n) == n` for these names)
    names = [n for n in blocked_env if _is_name(n)]
    if names:
        parts.append("unset " + " ".join(names))
    for k, v in env_overrides.items():
        if _is_name(k):
            parts.append(f"export {k}={_quote(str(v))}")
    if not parts:
        return command
    return "; ".join(parts) + "\n" + command


def _is_name(n: str) -> bool:
    """A shell variable name (`[A-Za-z_][A-Za-z0-9_]*`)."""
    return n.isascii() and n.isidentifier()


#: the characters a word needs no quoting for (`shlex.quote`'s: a hook process would import
#: `shlex` for the rewritten line alone)
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789@%+=:,./-_")


def _quote(s: str) -> str:
    """`s` quoted for a POSIX shell, as `shlex.quote` does."""
    if not s:
        return "''"
    if _SAFE.issuperset(s):
        return s
    return "'" + s.replace("'", "'\"'\"'") + "'"
