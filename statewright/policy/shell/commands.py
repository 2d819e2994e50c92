"""Check 5, `allowed_commands` (DESIGN section 4): every command a line would run must start
with an allowed prefix, token by token after unquoting; anything the analysis could not see
through refuses the line."""

from __future__ import annotations

from ...lean import TYPE_CHECKING, LazyRe, lru_cache
from .records import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from .records import Command, ShellAnalysis, Word

    #: allowed prefixes by their first token: (the prefix, its tokens, its place in the
    #: entries given), the longest first (`_prefix_index`)
    _Index = dict[str, tuple[tuple[str, tuple[str, ...], int], ...]]

#: Harmless builtins that never need to be listed: they run nothing and write nothing.
IMPLICIT_COMMANDS = frozenset({"true", "false", ":"})

#: Variables whose value changes what a command runs or loads. Setting them (`VAR=x cmd`,
#: `VAR=x; cmd`, `env VAR=x cmd`) would let an allowed command run arbitrary code.
_DANGEROUS_VAR_RE = LazyRe(
    r"^(PATH|LD_\w*|DYLD_\w*|BASH_ENV|ENV|IFS|CDPATH|GLOBIGNORE|SHELLOPTS|BASHOPTS|PS[0-4]|"
    r"PROMPT_COMMAND|BASH_FUNC_\w*|BASH_LOADABLES_PATH|HOME|XDG_\w+|GIT_\w*|PYTHON\w*|NODE_\w*|"
    r"NPM_\w*|npm_\w*|PERL\w*|RUBY\w*|GEM_\w*|BUNDLE_\w*|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|"
    r"\w*_OPTIONS|\w*_OPTS|PAGER|\w*PAGER|EDITOR|VISUAL|BROWSER|LESS\w*|MANPAGER|SHELL|"
    r"TERMINFO\w*|GCONV_PATH|HOSTALIASES|LOCPATH|NLSPATH|MALLOC_\w+|SSH_ASKPASS\w*|"
    r"SUDO_ASKPASS|GNUPGHOME|TMPDIR|PYTEST_\w*|COV_\w*|TOX_\w*|VIRTUAL_ENV|CONDA_\w*|"
    r"PIP_\w*|UV_\w*|CARGO_\w*|RUSTC\w*|RUSTFLAGS|CC|CXX|LD|MAKEFLAGS|MAKE|GOFLAGS|"
    r"DOCKER_HOST|KUBECONFIG|STATEWRIGHT_\w*|CLAUDE_\w*)$")


def dangerous_assignment(name: str) -> bool:
    return bool(_DANGEROUS_VAR_RE.match(name))


#: characters `shlex.split` treats as plain word characters (no quoting, escaping, comments
#: or unusual whitespace): a prefix made of these and spaces splits on its spaces
_PLAIN_PREFIX_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789-_./:=@+,%^ ")


@lru_cache(maxsize=1024)
def _prefix_tokens(prefix: str) -> tuple[str, ...]:
    if type(prefix) is str and _PLAIN_PREFIX_CHARS.issuperset(prefix):
        return tuple(t for t in prefix.split(" ") if t)  # what shlex.split gives, without it
    import shlex

    try:
        return tuple(shlex.split(prefix))
    except ValueError:
        return tuple(prefix.split())


def match_prefix(argv: tuple[Word, ...], allowed: tuple[str, ...]) -> str | None:
    """The longest allowed prefix that `argv` starts with, token by token after unquoting.

    Every token of the prefix must be matched by a literal word of exactly that value.
    """
    if not argv or not argv[0].literal:
        return None
    return _longest(argv, _prefix_index(tuple(allowed)))[0]


def _longest(argv: tuple[Word, ...], index: _Index) -> tuple[str | None, int]:
    """(`match_prefix(argv, ...)`, its number of tokens; -1 when none) given the allowed
    prefixes by first token (`_prefix_index`), for an `argv` whose first word is literal."""
    n = len(argv)
    # (longest first, in the order given among the same length: the first that matches)
    for p, toks, _ in index.get(argv[0].value, ()):
        k = len(toks)
        if k > n:
            continue
        i = 1
        while i < k:
            w = argv[i]
            if not w.literal or w.value != toks[i]:
                break
            i += 1
        else:
            return p, k
    return None, -1


def matching_prefixes(argv: tuple[Word, ...], allowed: tuple[str, ...]) -> tuple[str, ...]:
    """Every allowed prefix that `argv` starts with (in the order given), by the rule of
    `match_prefix`: `pytest -x tests` is matched by both `pytest` and `pytest -x`."""
    if not argv or not argv[0].literal:
        return ()
    n = len(argv)
    out = []
    for p, toks, at in _prefix_index(tuple(allowed)).get(argv[0].value, ()):
        k = len(toks)
        if k <= n and all(argv[i].literal and argv[i].value == toks[i] for i in range(1, k)):
            out.append((at, p))
    return tuple(p for _, p in sorted(out))


@lru_cache(maxsize=256)
def _prefix_index(allowed: tuple[str, ...]) -> _Index:
    """Allowed prefixes grouped by their first token, as (prefix, its tokens, its place in
    `allowed`): the longest first, in the order given among prefixes of the same length."""
    out: dict[str, list[tuple[str, tuple[str, ...], int]]] = {}
    for at, p in enumerate(allowed):
        toks = _prefix_tokens(p)
        if toks:
            out.setdefault(toks[0], []).append((p, toks, at))
    # (`sorted` keeps the order given among equals)
    return {k: tuple(sorted(v, key=lambda e: -len(e[1]))) for k, v in out.items()}


#: contexts a command's trace line does not name (`[context]`)
_UNMARKED_CONTEXTS = frozenset({"top", "pipeline"})


def check_commands(analysis: ShellAnalysis, allowed_commands: tuple[str, ...] | list[str],
                   cd_check: Callable[[Command], str | None] | None = None,
                   explain: bool = True) -> Verdict:
    """Check 5: every command must match an allowed prefix; fail closed on any doubt.

    `cd_check(command)` (given by the gate) decides a `cd` that no allowed prefix covers: it
    returns None when the directory change stays inside the project, else why it is refused.
    `explain=False`: the verdict without its trace (the same `allowed` and `reason`; the gate
    asks for the trace only when its explanation is read, `lines.command_problem`).
    """
    allowed = tuple(allowed_commands)
    index = _prefix_index(allowed)
    trace: list[str] = []
    denied: list[str] = []
    for p in analysis.problems:
        trace.append(f"problem: {p} -> deny")
        denied.append(p)
    matched: dict[int, int] = {}  # command index -> number of tokens its prefix covered
    shown = where = ""
    for idx, c in enumerate(analysis.commands):
        if explain:
            shown = _shown(c)
            where = "" if c.context in _UNMARKED_CONTEXTS else f" [{c.context}]"
        if c.assignments and c.kind != "unset" and c.name_literal:
            for nm, _value in c.assignments:
                if dangerous_assignment(nm):
                    why = f"`{nm}=...` changes what `{c.name}` runs"
                    if explain:
                        trace.append(f"`{shown}`{where}: {why} -> deny")
                    denied.append(why)
        covered, note, refusal = _judge(c, matched, index, cd_check, explain)
        if covered:
            matched[idx] = covered
        if explain:
            line = f"`{shown}`{where}: {note}"
            trace.append(line + " -> deny" if refusal else line)
        if refusal:
            denied.append(refusal)
        elif c.risks:
            for why in _unallowed_risks(c, covered, index):
                if explain:
                    trace.append(f"`{shown}`{where}: {why} -> deny")
                denied.append(why)
    for nm, _value in analysis.assignments:
        if dangerous_assignment(nm) and not any(
                nm == a for c in analysis.commands for a, _ in c.assignments):
            why = f"assigning `{nm}` changes what later commands run"
            trace.append(f"`{nm}=`: {why} -> deny")
            denied.append(why)
    if not analysis.commands and not analysis.problems:
        trace.append("no commands")
    shown_trace = tuple(trace) if explain else ()
    if denied:
        uniq = list(dict.fromkeys(denied))
        return Verdict(False, "; ".join(uniq[:4]) + (" ..." if len(uniq) > 4 else ""),
                       shown_trace)
    return Verdict(True, "", shown_trace)


def _unallowed_risks(c: Command, covered: int, index: _Index) -> list[str]:
    """What `c`'s options and subcommands tell it to do (`programs.risks`) that no allowed
    entry spells out. A risk is allowed when the prefix that allowed the command covers its
    word (`npm run lint` covers `run lint`) or when an allowed entry for the same command ends
    with its token and the rest of that entry matches (`find -exec`, `rg --pre`, `git -c`)."""
    out: list[str] = []
    for r in c.risks:
        if r.at + 1 < covered or (r.token and _spelled_out(c.argv, r.token, index)):
            continue
        hint = f"; an allowed_commands entry such as `{c.name} {r.token}` would allow it" \
            if r.token else ""
        out.append(f"{r.why}{hint}")
    return out


def _spelled_out(argv: tuple[Word, ...], token: str, index: _Index) -> bool:
    for _p, toks, _at in index.get(argv[0].value, ()):
        if len(toks) < 2 or toks[-1] != token or len(toks) - 1 > len(argv):
            continue
        if all(argv[i].literal and argv[i].value == toks[i] for i in range(1, len(toks) - 1)):
            return True
    return False


def _shown(c: Command) -> str:
    """How the trace and a refusal show a command: its words as written, up to 120
    characters."""
    return " ".join([w.text for w in c.argv])[:120]


def _judge(c: Command, matched: dict[int, int], index: _Index,
           cd_check: Callable[[Command], str | None] | None, explain: bool = True
           ) -> tuple[int, str, str | None]:
    """One command: (the number of its words an allowed prefix covers, what the trace says,
    why it is refused or None); `index`: the allowed prefixes (`_prefix_index`); `explain`:
    False when what the trace says is not needed (then "" for a command allowed by a
    prefix)."""
    if c.kind == "unset":
        return 1, "unset is always allowed", None
    if not c.name_literal:
        why = f"`{c.argv[0].text}`: the command name is not a literal word"
        return 0, why, why
    name = c.name
    if c.parent is not None and matched.get(c.parent, 0) > c.offset:
        reach = matched[c.parent] - c.offset
        if c.risks:
            own, k = _longest(c.argv, index)
            if own is not None:
                reach = max(reach, k)
        return reach, "covered by the allowed prefix of its wrapper", None
    p, k = _longest(c.argv, index)
    if p is not None:
        return k, f"allowed by `{p}`" if explain else "", None
    for r in c.risks:
        if r.token and _spelled_out(c.argv, r.token, index):
            # an entry that spells out what the line tells the program (`find -exec`)
            return 1, f"allowed by an entry that spells out `{r.token}`", None
    if c.function_call and c.parent is None:
        return 1, (f"calls the function `{name}` defined in this line (its body is checked "
                   "command by command)"), None
    if name == "cd" and cd_check is not None and c.parent is None:
        refused = cd_check(c)
        if refused is None:
            return 1, "changes directory inside the project", None
        return 0, refused, refused
    if name in IMPLICIT_COMMANDS:
        return 1, f"`{name}` is always allowed", None
    if "/" in name:
        why = f"`{name}` is a path; only the bare names in allowed_commands may run"
    else:
        why = f"`{_shown(c)[:60]}` does not match any allowed command"
    return 0, "no allowed prefix matches", why
