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
    """The line `wrap` put inside `text`, after what a front end put before it (`export
    STATEWRIGHT_SESSION=...` lines); None: `text` is not a line `wrap` made (only the
    launcher's own, ending as `wrap` ends it: never a look-alike that runs another program or
    whose status comes from elsewhere)."""
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
