"""Programs and shell builtins that print environment variables (DESIGN section 4, check 6:
no environment dump in a state with `blocked_env`), and the builtins that make a command name
run another file (`hash -p FILE NAME`, `enable -f LIB NAME`: the name an allowed entry allows
runs what the agent chose)."""

from __future__ import annotations

from ...lean import LazyRe
from .spec import Example, Program

_NAMES = "makes a command name run another file"


def _always(name: str, vals: list[str]) -> str | None:
    return f"`{name}` prints environment variables"


def _env(name: str, vals: list[str]) -> str | None:
    # env with no command prints the environment
    rest = [v for v in vals if not (v.startswith("-") or ("=" in v and not v.startswith("=")))]
    return None if rest else "`env` without a command prints the environment"


def _set(name: str, vals: list[str]) -> str | None:
    if not any(v.startswith(("-", "+")) and v not in ("-o", "+o") for v in vals):
        return "`set` prints every shell variable"
    return None


def _declare(name: str, vals: list[str]) -> str | None:
    if not vals or any(v.startswith("-") and set(v[1:]) & set("pxF") for v in vals):
        if not any("=" in v for v in vals) or "-p" in vals:
            return f"`{name} {' '.join(vals)}` lists variables"
    return None


def _export(name: str, vals: list[str]) -> str | None:
    if not vals or "-p" in vals:
        return f"`{name}` without names lists variables"
    return None


def _compgen(name: str, vals: list[str]) -> str | None:
    if any(v in ("-v", "-e", "-A") or v.startswith(("-v", "-e")) for v in vals):
        return "`compgen -v/-e/-A` lists variable names"
    return None


_PS_E = LazyRe(r"-?[a-zA-Z]*e[a-zA-Z]*")


def _ps(name: str, vals: list[str]) -> str | None:
    if any((_PS_E.fullmatch(v) and not v.startswith("-")) or v in ("-E",) for v in vals):
        return "`ps e` shows the environment of processes"
    return None


ENVIRONMENT_DUMPS = (
    Program(("printenv",), "prints the environment", dumps_env=_always, examples=(
        Example("printenv", dumps_env=True),
        Example("printenv HOME", dumps_env=True),
    )),
    Program(("env",), "runs a command in a changed environment, or prints it",
            dumps_env=_env, examples=(
                Example("env", dumps_env=True),
                Example("env -i", dumps_env=True),
                Example("env A=1", dumps_env=True),
                Example("env A=1 make"),
                Example("env -u HOME make test"),
            )),
    Program(("set",), "the shell builtin: options, positional parameters, or every variable",
            dumps_env=_set, examples=(
                Example("set", dumps_env=True),
                Example("set -o", dumps_env=True),
                Example("set -e"),
                Example("set -euo pipefail"),
                Example("set +x"),
            )),
    Program(("declare", "typeset", "local"), "the shell builtins that declare variables",
            dumps_env=_declare, examples=(
                Example("declare", dumps_env=True),
                Example("declare -p", dumps_env=True),
                Example("typeset -x", dumps_env=True),
                Example("declare -p HOME", dumps_env=True),
                Example("declare -i n=1"),
                Example("declare x=1"),
                Example("local -r y=2"),
            )),
    Program(("export", "readonly"), "the shell builtins that mark variables",
            dumps_env=_export, examples=(
                Example("export", dumps_env=True),
                Example("export -p", dumps_env=True),
                Example("readonly", dumps_env=True),
                Example("export A=1"),
                Example("readonly B"),
            )),
    Program(("compgen",), "the shell's completion generator", dumps_env=_compgen, examples=(
        Example("compgen -v", dumps_env=True),
        Example("compgen -e", dumps_env=True),
        Example("compgen -A variable", dumps_env=True),
        Example("compgen -c"),
    )),
    Program(("hash",), "the shell's table of command locations",
            code_options={"-p": _NAMES}, examples=(
        Example("hash -p ./evil.sh ls", runs_code=True),
        Example("hash -r"),
        Example("hash"),
    )),
    Program(("enable",), "turns shell builtins on or off, or loads new ones",
            code_options={"-f": "loads a builtin from a shared library (" + _NAMES + ")"},
            examples=(
        Example("enable -f ./evil.so ls", runs_code=True),
        Example("enable -n echo"),
    )),
    Program(("ps",), "lists processes (`e`: with their environment)", dumps_env=_ps, examples=(
        Example("ps e", dumps_env=True),
        Example("ps auxe", dumps_env=True),
        Example("ps -E", dumps_env=True),
        Example("ps aux"),
        Example("ps -ef"),
    )),
)
