"""The launcher's command line for a `Profile` (`argv`), and the shell text a host runs in place
of an agent's line (`wrap`).

`wrap` keeps the host's shell semantics: the line's own exit status and output; a `cd` that
persists (the inner shell leaves its last directory in a file the launcher hands back on a
descriptor, and the host's shell changes to it); the functions and aliases of the host's shell
(Claude Code's snapshot) defined again inside. Stdlib only, no `shlex` (the process hook
imports this).
"""

from __future__ import annotations

from .probe import HELPER
from .profile import Profile

#: the shell the line runs in, inside the sandbox (as the hosts run it)
SHELL = "/bin/bash"

#: what the inner shell runs before the line: aliases on (the host's are defined above it),
#: and its last directory written where the launcher reads it
_PROLOGUE = ("shopt -s expand_aliases\n"
             "__sw_cwd=$STATEWRIGHT_CWD_FILE; unset STATEWRIGHT_CWD_FILE; "
             "trap 'pwd -P >| \"$__sw_cwd\" 2>/dev/null' EXIT\n")


def quote(text: str) -> str:
    """`text` as one shell word."""
    if text and all(c.isalnum() or c in "@%+=:,./-_" for c in text) and text.isascii():
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def argv(profile: Profile, helper: str = HELPER) -> list[str]:
    """The launcher's argv up to and including `--`: append the program and its arguments."""
    out = [helper, "--root", profile.root]
    for p in profile.read_only:
        out += ["--ro", p]
    for p in profile.hidden:
        out += ["--hide", p]
    for name in profile.scrub:
        out += ["--unset", name]
    for name, value in profile.setenv:
        out += ["--set", f"{name}={value}"]
    if not profile.network:
        out.append("--no-net")
    if not profile.unix_sockets:
        out.append("--no-unix")
    out.append("--")
    return out


_HEAD = '__sw_c="${TMPDIR:-/tmp}/.statewright-cwd.$$.$RANDOM"; { __sw_d=$('
_OPEN = ' -c "$(declare -f; alias -p)"$\'\\n\''
_CLOSE = " 3>&1 1>&4 4>&-); } 4>&1; "
_TAIL = ('__sw_s=$?; [ -z "$__sw_d" ] || cd -- "$__sw_d" 2>/dev/null; '
         '[ "$__sw_s" = 0 ] || (exit "$__sw_s")')


def unwrap(text: str) -> str | None:
    """The line `wrap` (or `fresh`) put inside `text`, after what a front end put before it
    (`export STATEWRIGHT_SESSION=...` lines); None: `text` is not a line `wrap` or `fresh`
    made (only the launcher's own, ending as they end it: never a look-alike that runs another
    program or whose status comes from elsewhere)."""
    if _HEAD not in text:
        return _unwrap_fresh(text)
    at = 0 if text.startswith(_HEAD) else text.find("\n" + _HEAD) + 1
    if at < 0 or (at == 0 and not text.startswith(_HEAD)) or not text.endswith(_TAIL):
        return None
    body = text[at + len(_HEAD):]
    if not body.startswith((quote(HELPER) + " ", HELPER + " ")) or _OPEN not in body:
        return None
    start = body.index(_OPEN) + len(_OPEN)
    end = body.rfind(_CLOSE)
    if end < start or len(body) - end != len(_CLOSE) + len(_TAIL):
        return None
    word = body[start:end]
    if not (len(word) >= 2 and word.startswith("'") and word.endswith("'")):
        return None
    inner = word[1:-1].replace("'\"'\"'", "'")
    if not inner.startswith(_PROLOGUE):
        return None
    return text[:at] + inner[len(_PROLOGUE):]


#: what `wrap` puts between the launcher's options and its `--`
_CWD_ARGS = ' --cwd-file "$__sw_c" --cwd-fd 3 -- '
#: the launcher's options `argv` writes, and whether each takes a value
_OPTIONS = {"--root": True, "--ro": True, "--hide": True, "--unset": True, "--set": True,
            "--no-net": False, "--no-unix": False}


def fresh(text: str) -> str:
    """A line `wrap` made, in the form for a host whose shell tool runs every line in a new
    shell and refuses command substitution in it (Gemini CLI): the launcher run directly on the
    line, `/bin/bash -c LINE`, with what the front end put before it kept. The same launcher
    and profile; what is dropped is what such a host never had: a `cd` that persists, and its
    shell's functions and aliases. Any other text is returned as it is."""
    inner = unwrap(text) if _HEAD in text else None
    if inner is None:
        return text
    at = text.find(_HEAD)
    body = text[at + len(_HEAD):]
    end = body.find(_CWD_ARGS)
    if end < 0:
        return text
    prefix = text[:at]
    return f"{prefix}{body[:end]} -- {SHELL} -c {quote(inner[len(prefix):])}"


def _unwrap_fresh(text: str) -> str | None:
    """`unwrap` of a line `fresh` made: the launcher's own words in `quote`'s form, each option
    one `argv` writes, then `-- /bin/bash -c LINE` and nothing after it."""
    for start in (quote(HELPER) + " ", HELPER + " "):
        at = 0 if text.startswith(start) else text.find("\n" + start) + 1
        if at > 0 or text.startswith(start):
            break
    else:
        return None
    words = _words(text[at:])
    if words is None or len(words) < 5 or words[0] != HELPER or words[-4:-1] != ["--", SHELL,
                                                                                  "-c"]:
        return None
    i = 1
    while i < len(words) - 4:
        takes = _OPTIONS.get(words[i])
        if takes is None:
            return None
        i += 2 if takes else 1
    if i != len(words) - 4:
        return None
    return text[:at] + words[-1]


def _words(text: str) -> list[str] | None:
    """The words of `text` when it is words in `quote`'s form joined by single spaces (None
    otherwise: nothing that reads differently to a shell is taken)."""
    words: list[str] = []
    for raw in text.split(" ") if "'" not in text else _quoted_split(text) or [""]:
        if not raw:
            return None
        if raw.startswith("'"):
            if len(raw) < 2 or not raw.endswith("'"):
                return None
            word = raw[1:-1].replace("'\"'\"'", "'")
        else:
            word = raw
        if quote(word) != raw:
            return None
        words.append(word)
    return words


def _quoted_split(text: str) -> list[str] | None:
    """`text` cut at the spaces outside single quotes (`'"'"'` keeps a quote inside a word)."""
    out: list[str] = []
    cur: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                return None
            cur.append(text[i:j + 1])
            i = j + 1
            while text.startswith("\"'\"'", i):  # (a quote inside the word, and on)
                k = text.find("'", i + 4)
                if k < 0:
                    return None
                cur.append(text[i:k + 1])
                i = k + 1
        elif c == " ":
            out.append("".join(cur))
            cur = []
            i += 1
        else:
            cur.append(c)
            i += 1
    out.append("".join(cur))
    return out


def head(profile: Profile, helper: str = HELPER) -> str:
    """The launcher's part of `wrap`'s text for `profile` (a caller that wraps many lines
    under one profile keeps it: quoting every path is most of `wrap`'s cost)."""
    return " ".join(quote(a) for a in argv(profile, helper)[:-1])


def wrap(profile: Profile, line: str, helper: str = HELPER, kept_head: str | None = None
         ) -> str:
    """The shell text that runs `line` under `profile` as the host's shell would run `line`
    (`kept_head`: `head(profile, helper)`, when the caller keeps it)."""
    h = kept_head if kept_head is not None else head(profile, helper)
    return (
        f'{_HEAD}{h} --cwd-file "$__sw_c" --cwd-fd 3 -- {SHELL}'
        f'{_OPEN}{quote(_PROLOGUE + line)}{_CLOSE}{_TAIL}'
    )
