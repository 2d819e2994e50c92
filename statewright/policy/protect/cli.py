"""Self-protection against running statewright's human-only CLI from a shell line.

The CLI acts as the human: `approve`, `reject`, `force-state`, `pause`, `resume`, `start`,
`install`, `hook`, `serve`, `ui` (the web page that decides approvals) would let an agent wave
its own work through. Only the read-only
commands and `transition` (what the statewright_transition tool does) may be run by an agent,
however the CLI is reached: bare, by path (`.venv/bin/statewright`), through a wrapper or a
runner (`env`, `sudo`, `xargs`, `uv run`, `pipx run`, ...), as `python -m statewright`, as
Python code importing the package, or as `statewright-hook` fed hand-made JSON.
"""

from __future__ import annotations

import os

from ...lean import TYPE_CHECKING, LazyRe, fnmatchcase
from ..paths import HARMLESS_DEVICES, real_path
from ..programs import is_python
from ..shell.words import literal_word
from ..types import CACHE_MAX_LINE, word_texts

if TYPE_CHECKING:  # pragma: no cover
    from ..shell import Command, ShellAnalysis, Word

#: `statewright <command>` an agent may run (read-only, plus firing an event and taking a fork
#: branch: what its MCP tools statewright_transition and statewright_fork do, for setups with
#: hooks only)
CLI_AGENT_COMMANDS = frozenset({"status", "check", "validate", "list", "show", "graph",
                                "history", "runs", "transition", "fork", "--help", "-h",
                                "--version"})
#: known human-only commands (named in reasons; anything not in CLI_AGENT_COMMANDS is refused)
CLI_HUMAN_COMMANDS = frozenset({"approve", "reject", "force-state", "pause", "resume", "start",
                                "end", "install", "init", "schema", "hook", "serve", "ui"})
#: the hook's programs: the Python hook and its native client (each fed hand-made JSON would
#: record results that did not happen)
_HOOK_NAMES = ("statewright-hook", "statewright-hook-native")
_CLI_NAMES = ("statewright", *_HOOK_NAMES)
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
#: the CLI called with a human-only command, or the package imported, inside some code text
_CLI_CALL_RE = LazyRe(
    r"(?i)statewright-hook|statewright(?:\.cli|\.__main__)?[\s'\"\\,()\[\]{}]+(?:-[^\s'\"]*"
    r"[\s'\"\\,()\[\]{}]+)*(?:approve|reject|force-state|force_state|pause|resume|start|end|"
    r"install|init|schema|hook|serve|ui)(?![\w.\-/])|(?:import|from)\s+statewright\b|"
    r"statewright\.(?:runtime|hook|store|engine|proxy|ui)\b")
_STATEWRIGHT_RE = LazyRe(r"(?i)(?<![A-Za-z0-9_])statewright")


def basename(value: str) -> str:
    """The last component of a path, lower-cased (`/usr/bin/Python3` -> `python3`)."""
    return value.rstrip("/").rsplit("/", 1)[-1].lower()


def _word_cli_name(w: Word, cwd: str) -> str | None:
    """'statewright' / 'statewright-hook' / 'statewright-hook-native' when the word names (or
    could name) the CLI; '*' when it is wholly dynamic (could be anything); None otherwise."""
    if w.literal:
        base = basename(w.value)
        if base in _CLI_NAMES:
            return base
        if "/" in w.value:
            # a link to the CLI made by an earlier call (`ln -s .venv/bin/statewright sw`)
            _FS_USES[0] += 1  # this answer depends on the file system: not cached
            real = basename(real_path(os.path.join(cwd, w.value)))
            if real in _CLI_NAMES:
                return real
        return None
    comp = w.pattern.rstrip("/").rsplit("/", 1)[-1].lower()
    if not comp or set(comp) <= {"*"}:
        return "*"
    for n in _CLI_NAMES:
        if fnmatchcase(n, comp):
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
                        if fnmatchcase("statewright", val.pattern.lower()):
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
    if name in _HOOK_NAMES:
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
    if cli in _HOOK_NAMES:
        return f"`{shown}`: runs statewright's hook by hand (fake hook input)"
    if cli == "statewright":
        return _cli_args_problem(argv[1:], shown, c.context == "xargs")
    if cli == "*":
        why = _cli_args_problem(argv[1:], shown, False, lenient=True)
        if why:
            return why
    if argv[0].literal and is_python(basename(argv[0].value)):
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
                if fnmatchcase(n, comp):
                    return tok
    return None


_FS_USES = [0]  # bumped whenever a CLI check had to look at the file system
_CLI_CACHE: dict[str, tuple[str, ...]] = {}


def cli_violations(analysis: ShellAnalysis, cwd: str) -> list[str]:
    """Self-protection against running statewright's human-only CLI (or its hook, or its
    package) from a shell line. Applies in every state.

    The answer for a line that needed no file-system look-up (no command name or script given
    by path) depends on its text alone and is cached by text."""
    if len(analysis.source) > CACHE_MAX_LINE:  # (too long to be kept)
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
    line_mentions = _mentions_statewright(analysis)
    bystanders = _BYSTANDERS  # (`_bystander`'s answers so far: looked up without a call)
    for c in analysis.commands:
        if c.argv and (line_mentions or not c.name_literal or not (
                bystanders.get(c.name) or _bystander(c.name))):
            _command_problems(c, line_mentions, cwd, out)
    if line_mentions and not out and not _talk_only(analysis):
        why = _code_problem(analysis)
        if why:
            out.append(why)
    return list(dict.fromkeys(out))


def _mentions_statewright(analysis: ShellAnalysis) -> bool:
    """Whether the line names statewright: in its text (`_STATEWRIGHT_RE`), or in a word's
    value or pattern once unquoted (`state''wright`)."""
    src = analysis.source
    # (ASCII text the regular expression could match holds `statewright` once lower-cased;
    # other text may spell it with the letters Unicode case-folds to ASCII ones)
    if (not src.isascii() or "statewright" in src.lower()) and _STATEWRIGHT_RE.search(src):
        return True
    # (one look at every value and every pattern joined by newlines: `tatewright` holds
    # none, and lower-casing is done letter by letter; a pattern holds it only if its word's
    # value does, unless the word is not fixed text: `word_texts`)
    values, patterns, _ = word_texts(analysis)
    return "tatewright" in values.lower() or "tatewright" in patterns.lower()


def _inert(value: str) -> bool:
    """Whether a literal word with this value is a plain name (no `/`), neither the CLI nor
    Python: a runner given it runs no statewright (`_runner_problems`)."""
    known = _INERT.get(value)
    if known is None:
        base = basename(value)
        known = "/" not in value and base not in _CLI_NAMES and not is_python(base)
        if len(_INERT) >= 1024:
            _INERT.clear()
        _INERT[value] = known
    return known


def _bystander(name: str) -> bool:
    """Whether `_command_problems` finds nothing in a command named `name` (a literal word) in
    a line that does not mention statewright: a plain name, not the CLI, Python or a runner."""
    known = _BYSTANDERS.get(name)
    if known is None:
        known = _inert(name) and basename(name) not in _RUNNERS
        if len(_BYSTANDERS) >= 1024:
            _BYSTANDERS.clear()
        _BYSTANDERS[name] = known
    return known


_INERT: dict[str, bool] = {}  # `_inert` by value
_BYSTANDERS: dict[str, bool] = {}  # `_bystander` by name


def _command_problems(c: Command, line_mentions: bool, cwd: str, out: list[str]) -> None:
    """Every way command `c` could run the human-only CLI, its hook or its package."""
    name = c.argv[0]
    base = basename(name.value) if name.literal else ""
    if not name.literal or base in _CLI_NAMES or "/" in name.value or is_python(base):
        # (a plain name that is neither the CLI nor Python cannot be an invocation)
        why = _invocation_problem(c.argv, c, line_mentions, False, cwd)
        if why:
            out.append(why)
            return
    if (line_mentions and base in ("pip", "pip3", "pipx", "uv")) or is_python(base or "-"):
        vals_l = [w.value.lower() for w in c.argv]
        if "uninstall" in vals_l and any(v.startswith("statewright") for v in vals_l):
            out.append(f"`{c.text[:100]}` would uninstall statewright")
    if line_mentions and base in ("ln", "cp", "mv", "install", "rsync", "link") and any(
            w.literal and basename(w.value) in _CLI_NAMES and "bin/" in w.value
            for w in c.argv[1:]):
        out.append(f"`{c.text[:100]}` would copy or link statewright's CLI under another "
                   "name")
    if line_mentions and base == "alias" and any("statewright" in w.value.lower()
                                                 for w in c.argv[1:]):
        out.append(f"`{c.text[:100]}` would alias statewright's CLI")
    if base in _RUNNERS:
        _runner_problems(c, line_mentions, cwd, out)
    elif line_mentions and not _talk(c, base):
        # an unknown program handed the CLI: refuse the known human-only commands
        for j in range(1, len(c.argv)):
            w = c.argv[j]
            b = basename(w.value) if w.literal else ""
            if b in _HOOK_NAMES:
                out.append(f"`{c.text[:100]}` hands statewright's hook to `{name.text}`")
                break
            if b == "statewright":
                why = _cli_args_problem(c.argv[j + 1:], c.text[:100], False, lenient=True)
                if why:
                    out.append(why)
                    break


def _runner_problems(c: Command, line_mentions: bool, cwd: str, out: list[str]) -> None:
    """A runner (`uv run`, `env`, `xargs`, ...): the first word that is the CLI or Python
    is the program it runs."""
    for j in range(1, len(c.argv)):
        w = c.argv[j]
        if not w.literal:
            if w.dynamic and "tatewright" in w.pattern.lower():
                out.append(f"`{c.text[:100]}` hands `{c.argv[0].text}` a word built at run "
                           "time around statewright's CLI")
                break
            continue
        if _inert(w.value):
            continue  # (the usual argument: a plain word, neither the CLI nor Python)
        b = basename(w.value)
        if b in _CLI_NAMES or is_python(b) or (
                "/" in w.value and _word_cli_name(w, cwd) in _CLI_NAMES):
            why = _invocation_problem(c.argv[j:], c, line_mentions, True, cwd)
            if why:
                out.append(why)
            break


def _talk_only(analysis: ShellAnalysis) -> bool:
    """Whether the line only prints or searches text, and writes nothing but harmless
    devices (`echo 'statewright approve' > x.sh` writes a script)."""
    if not analysis.commands or analysis.problems:
        return False
    for c in analysis.commands:
        if c.argv and not _talk(c, basename(c.argv[0].value) if c.argv[0].literal else ""):
            return False
    return not any(r.output and r.target is not None and r.target.value not in HARMLESS_DEVICES
                   for r in analysis.redirects)


def _code_problem(analysis: ShellAnalysis) -> str | None:
    """For a line that mentions statewright: code handed to interpreters, shells fed text,
    opaque evaluators that call the CLI or the package."""
    texts = [analysis.source] + [w.value for w in analysis.words] + [
        w.text for w in analysis.words if not w.literal] + [
        c.stdin_text for c in analysis.commands if c.stdin_text]
    joined = "\n".join(texts)
    if _CLI_CALL_RE.search(joined) or _CLI_CALL_RE.search(
            " ".join(w.value for w in analysis.words)):
        # `node -e "...execSync('statewright approve')"`, `echo statewright approve | sh`,
        # `perl -e 'system("statewright","approve")'`
        return "the line runs code that calls statewright's human-only CLI or its package"
    if analysis.problems:
        return ("the line mentions statewright in code that cannot be analysed ("
                + analysis.problems[0] + ")")
    return None
