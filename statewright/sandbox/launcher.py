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


def wrap(profile: Profile, line: str, helper: str = HELPER) -> str:
    """The shell text that runs `line` under `profile` as the host's shell would run `line`."""
    head = " ".join(quote(a) for a in argv(profile, helper)[:-1])
    inner = _PROLOGUE + line
    return (
        '__sw_c="${TMPDIR:-/tmp}/.statewright-cwd.$$.$RANDOM"; '
        f'{{ __sw_d=$({head} --cwd-file "$__sw_c" --cwd-fd 3 -- {SHELL} -c '
        f'"$(declare -f; alias -p)"$\'\\n\'{quote(inner)} 3>&1 1>&4 4>&-); }} 4>&1; '
        '__sw_s=$?; [ -z "$__sw_d" ] || cd -- "$__sw_d" 2>/dev/null; '
        '[ "$__sw_s" = 0 ] || (exit "$__sw_s")'
    )
