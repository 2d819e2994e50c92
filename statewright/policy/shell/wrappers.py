"""Commands that run other commands: shells given code (`sh -c`, here-documents fed to `bash`),
evaluators (`eval`), wrappers (`env`, `sudo`, `timeout`, `nice`, `xargs`, `find -exec`, ...).

`inner_commands(walker, cmd, idx, depth)` finds what `cmd` runs itself and adds it to the walk
as commands whose `parent` is `idx`; what it cannot see through is a problem. One handler per
family of wrappers, chosen by the command's name; a program that is no wrapper may still run
code because of its options (`git -c`): that knowledge is `programs.risks`, recorded on the
command by the walk and judged by check 5.
"""

from __future__ import annotations

from ...lean import TYPE_CHECKING
from ..programs.spec import getopt
from .records import Command, Word
from .words import literal_word

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from .walk import Walk

    Handler = Callable[[Walk, Command, int, int, list[Word], list[str]], None]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
                    "rbash"})


def inner_commands(w: Walk, cmd: Command, idx: int, depth: int) -> None:
    """Find the commands that `cmd` (at index `idx` of the walk) runs itself (nothing unless
    its name is one of `WRAPPERS`, or a path to one: `/usr/bin/env`, `./sh`)."""
    if not cmd.name_literal:
        return
    handler = _HANDLERS.get(cmd.program)
    if handler is not None:
        args = list(cmd.args)
        handler(w, cmd, idx, depth, args, [a.value for a in args])


def _opaque(w: Walk, cmd: Command, why: str) -> None:
    w.problems.append(f"`{cmd.name}`: {why}")


def _shell(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
           vals: list[str]) -> None:
    """`sh -c CODE` runs CODE; `sh` with no script reads commands from its input."""
    name = cmd.name
    i = 0
    while i < len(vals):
        v = vals[i]
        if v == "-c" or (v.startswith("-") and not v.startswith("--") and "c" in v[1:]):
            if i + 1 < len(args):
                w.code(idx, [args[i + 1]], f"{name} -c", i + 2, depth)
            else:
                _opaque(w, cmd, "-c without code")
            return
        if v in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if v.startswith(("-", "+")) and v not in ("-", "--"):
            if "s" in v[1:] and not v.startswith("--"):
                break  # -s: read commands from stdin
            i += 1
            continue
        if v == "--":
            i += 1
        if i < len(vals):
            return  # runs a script file: the shell itself must be allowed
        break
    # reads commands from stdin
    if cmd.stdin in ("heredoc", "herestring") and cmd.stdin_text is not None:
        w.run(cmd.stdin_text, f"{name} <<", depth + 1, parent=idx, offset=len(cmd.argv))
    else:
        _opaque(w, cmd, "reads commands from its input, which cannot be checked")


def _busybox(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
             vals: list[str]) -> None:
    if vals[:1] and vals[0] in SHELLS:  # `busybox sh ...` is that shell
        _shell(w, cmd, idx, depth, args[1:], vals[1:])
    else:
        w.sub(idx, args, 0, cmd.name, depth)


def _eval(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
          vals: list[str]) -> None:
    w.code(idx, args, "eval", 1, depth)


def _prefix_runner(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
                   vals: list[str]) -> None:
    """`exec`, `command`, `nohup`, `time`, `flock`, ...: options, then the command they run."""
    base = cmd.program
    i = 0
    if base == "exec":
        while i < len(vals) and vals[i].startswith("-"):
            i += 2 if vals[i] == "-a" else 1
    elif base == "command":
        if any(v in ("-v", "-V") for v in vals[:1]):
            return  # lookup only
        while i < len(vals) and vals[i].startswith("-"):
            i += 1
    elif base in ("time", "setsid"):
        while i < len(vals) and vals[i].startswith("-"):
            i += 2 if vals[i] in ("-f", "-o", "--format", "--output") else 1
    elif base == "flock":
        while i < len(vals) and vals[i].startswith("-"):
            if vals[i] in ("-c", "--command"):
                w.code(idx, args[i + 1:i + 2], "flock -c", i + 2, depth)
                return
            i += 2 if vals[i] in ("-w", "--timeout", "-E") else 1
        i += 1  # the lock file
        if i < len(vals) and vals[i] in ("-c", "--command"):  # (`flock FILE -c CODE`)
            w.code(idx, args[i + 1:i + 2], "flock -c", i + 2, depth)
            return
    elif base == "chroot":
        i = 1
    elif i < len(vals) and vals[i] == "--":
        i += 1
    if i < len(vals) and vals[i] == "--":
        i += 1
    w.sub(idx, args, i, base, depth)


#: the options of `sudo` and of `env` that take a value: (short letters, long options)
_SUDO_VALUES = ("ugCDhprtURT", frozenset({
    "--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--role", "--type",
    "--other-user", "--chroot", "--command-timeout"}))
_ENV_VALUES = ("uCSa", frozenset({"--unset", "--chdir", "--split-string", "--argv0"}))
#: wrappers that can run their command in another directory: (their options that take a
#: value, the short and the long option that name the directory)
CHDIR_WRAPPERS = {"env": (_ENV_VALUES, "-C", "--chdir"), "sudo": (_SUDO_VALUES, "-D", "--chdir")}


def scan_options(vals: list[str], values: tuple[str, frozenset[str]]
                 ) -> tuple[list[tuple[str, str | None, int]], int]:
    """The options before a wrapper's command, as getopt reads them (`programs.spec.getopt`):
    each (option, its value or None, the index of the word holding the value or the option),
    clusters split (`-vC DIR`, `-nu root`, `-CDIR`); and the index of the first word after
    them (after `--`). `values`: the short letters and the long options that take a value."""
    opts, operands = getopt(vals, values[0], values[1], options_first=True)
    return [(o, v, at) for o, v, _, at in opts], operands[0] if operands else len(vals)


def chdir_target(cmd: Command) -> tuple[bool, str | None]:
    """Where a `CHDIR_WRAPPERS` command runs the command it wraps: (True, None) where it is
    itself; (True, DIR) in DIR (`env -C DIR`, `--chdir=DIR`, `-vCDIR`, `sudo -D DIR`); (False,
    None) unknown (an option, or the directory, given by a word that is not fixed text)."""
    values, short, long = CHDIR_WRAPPERS[cmd.program]
    args = cmd.args
    opts, end = scan_options([a.value for a in args], values)
    for k in range(min(end + 1, len(args))):  # (a word that is not fixed text could be any
        a = args[k]                            # options: `-C /`)
        if not a.literal and (k < end or a.value[:1] in ("-", "")) and not any(
                at == k and o not in (short, long) and val is not None for o, val, at in opts):
            return False, None
    target: str | None = None
    for o, val, _ in opts:
        if o in (short, long):
            if val is None:
                return False, None
            target = val
    return True, target


def _sudo(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
          vals: list[str]) -> None:
    opts, i = scan_options(vals, _SUDO_VALUES)
    for o, _, _ in opts:
        if o in ("-s", "-i", "--shell", "--login", "-e", "--edit"):
            _opaque(w, cmd, "starts a shell or editor")
            return
        if o in ("-D", "--chdir"):
            w.changes_dir = True
    while i < len(vals) and "=" in vals[i] and not vals[i].startswith("="):
        i += 1
    w.sub(idx, args, i, cmd.name, depth)


def _su(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
        vals: list[str]) -> None:
    for j, v in enumerate(vals):
        if v in ("-c", "--command", "--session-command"):
            w.code(idx, args[j + 1:j + 2], "su -c", j + 2, depth)
            return
    _opaque(w, cmd, "starts a shell")


def _env(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
         vals: list[str]) -> None:
    """`env [OPTION]... [-] [NAME=VALUE]... COMMAND`: the assignments are recorded as such."""
    opts, i = scan_options(vals, _ENV_VALUES)
    for o, _, _ in opts:
        if o in ("-S", "--split-string"):
            _opaque(w, cmd, "-S splits a string into a command")
            return
        if o in ("-C", "--chdir"):
            w.changes_dir = True
    while i < len(vals) and (vals[i] == "-" or ("=" in vals[i] and not vals[i].startswith("="))):
        if vals[i] != "-":
            nm, value = vals[i].split("=", 1)
            w.assignments.append((nm, literal_word(value)))
        i += 1
    w.sub(idx, args, i, cmd.name, depth)


#: the options of each option-then-command wrapper that take a value
_RUNNER_WITH_ARG = {
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
}
#: wrappers that run their command in ways the analysis does not follow
_OPAQUE_RUNNERS = frozenset({"runuser", "sg", "newgrp", "pkexec", "gdb", "nsenter", "unshare",
                             "systemd-run", "firejail"})


def _option_runner(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
                   vals: list[str]) -> None:
    """`nice`, `timeout`, `strace`, ...: options (and a duration, mask or priority), then the
    command they run."""
    base = cmd.program
    i = 0
    with_arg = _RUNNER_WITH_ARG.get(base, frozenset())
    while i < len(vals) and vals[i].startswith("-") and vals[i] != "--":
        i += 2 if vals[i] in with_arg else 1
    if i < len(vals) and vals[i] == "--":
        i += 1
    if base == "timeout" and i < len(vals):
        i += 1  # the duration
    if base in ("taskset", "chrt") and i < len(vals):
        i += 1  # mask / priority
    if base in _OPAQUE_RUNNERS:
        if base == "runuser" and "-c" in vals:
            at = vals.index("-c")
            w.code(idx, args[at + 1:at + 2], "runuser -c", at + 2, depth)
            return
        _opaque(w, cmd, "runs commands in ways that are not analysed")
        return
    w.sub(idx, args, i, base, depth)


_XARGS_WITH_ARG = frozenset({"-a", "-d", "-E", "-e", "-I", "-L", "-l", "-n", "-P", "-s",
                             "--arg-file", "--delimiter", "--eof", "--max-lines", "--max-args",
                             "--max-procs", "--max-chars", "--process-slot-var"})


def _xargs(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
           vals: list[str]) -> None:
    """`xargs [OPTIONS] CMD ARGS`: CMD runs with more arguments read from its input (or a
    file), which the analysis cannot know: they are words that could be anything (`rm -rf`
    given them is judged as `rm -rf "$X"`); with `-I R` (`-i`, `--replace`), each word holding
    R has an unknown part instead."""
    i = 0
    replace: str | None = None
    while i < len(vals) and vals[i].startswith("-") and vals[i] != "--":
        v = vals[i]
        if v == "-I" and i + 1 < len(vals):
            replace = vals[i + 1]
        elif v.startswith(("-I", "--replace=", "-i")) or v == "--replace":
            replace = v[2:] if v[:2] == "-I" else v.partition("=")[2] or "{}"
        i += 2 if v in _XARGS_WITH_ARG else 1
    if i < len(vals) and vals[i] == "--":
        i += 1
    if i >= len(vals):
        w.commands.append(Command(argv=(literal_word("echo"),), text="echo",
                                  context="xargs (default command)", parent=idx,
                                  offset=len(cmd.argv)))
        return
    if replace:
        inner = [_with_input(a, replace) if replace in a.value else a for a in args[i:]]
    else:
        inner = [*args[i:], _INPUT]
    w.sub(idx, inner, 0, cmd.name, depth)


#: the arguments xargs reads from its input: could be anything
_INPUT = Word(text="<input>", value="", pattern="*", literal=False, dynamic=True)


def _with_input(a: Word, replace: str) -> Word:
    """Word `a` with each `replace` string standing for an argument read from the input."""
    return Word(text=a.text, value=a.value.replace(replace, ""),
                pattern=a.value.replace(replace, "*"), literal=False, dynamic=True)


def _find(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
          vals: list[str]) -> None:
    """`find ... -exec CMD ;` (and `-execdir`, `-ok`, `-okdir`) runs CMD."""
    j = 0
    while j < len(vals):
        if vals[j] in ("-exec", "-execdir", "-ok", "-okdir"):
            k = j + 1
            while k < len(vals) and vals[k] not in (";", "+"):
                k += 1
            inner = args[j + 1:k]
            if inner:
                w.add_inner(idx, tuple(inner), f"find {vals[j]}", j + 2, depth)
            j = k + 1
            continue
        j += 1


def _fd(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
        vals: list[str]) -> None:
    """`fd ... -x CMD` / `-X CMD` (and `--exec`, `--exec-batch`) runs CMD (to `;` or the end)."""
    j = 0
    while j < len(vals):
        v = vals[j]
        if v[:1] == "-" and v[1:2] != "-" and len(v) > 2:
            for k, ch in enumerate(v[1:], 1):  # a cluster: `-Hx CMD`; `-tx` is a type
                if ch in "tedjEScoh":
                    break
                if ch in "xX":
                    v = "-" + ch if k == len(v) - 1 else v
                    break
        if v in ("-x", "--exec", "-X", "--exec-batch") or v.startswith(("--exec=",
                                                                          "--exec-batch=")):
            k = j + 1
            while k < len(vals) and vals[k] != ";":
                k += 1
            inner = args[j + 1:k]
            if "=" in v:
                inner = [literal_word(v.split("=", 1)[1]), *inner] if args[j].literal else []
                if not args[j].literal:
                    _opaque(w, cmd, "the command it runs is not literal text")
            if inner:
                w.add_inner(idx, tuple(inner), f"fd {v.split('=', 1)[0]}", j + 2, depth)
            j = k + 1
            continue
        if v[:1] == "-" and v[1:2] != "-" and v[-1:] not in "xX" and any(
                c in "xX" for c in v[1:]) and not any(c in "tedjEScoh" for c in v[1:2]):
            _opaque(w, cmd, "runs a command glued to a cluster of options")
        j += 1


#: runners that run the command after their options: options that take a value
_RUNNER_VALUES = {
    "uv run": frozenset({"--with", "--with-editable", "--with-requirements", "--python", "-p",
                         "--project", "--directory", "--package", "--extra", "--group",
                         "--index", "--env-file", "--default-index", "--only-group",
                         "--no-group", "-m", "--module"}),
    "uvx": frozenset({"--from", "--with", "--python", "-p", "--index", "--with-editable"}),
    "npx": frozenset({"-p", "--package", "--prefix", "-w", "--workspace"}),
    "npm exec": frozenset({"-p", "--package", "--prefix", "-w", "--workspace"}),
    "npm x": frozenset({"-p", "--package", "--prefix", "-w", "--workspace"}),
    "pnpm exec": frozenset({"--filter", "-F", "-C", "--dir"}),
    "pnpm dlx": frozenset({"--package"}),
    "yarn exec": frozenset(),
    "yarn dlx": frozenset({"-p", "--package"}),
    "bunx": frozenset({"-p", "--package"}),
    "poetry run": frozenset({"-C", "--directory", "-P", "--project"}),
    "pipx run": frozenset({"--spec", "--python", "--index-url", "--pip-args"}),
    "pdm run": frozenset({"-p", "--project"}),
    "hatch run": frozenset(),
}


def _runner(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
            vals: list[str]) -> None:
    """`uv run CMD`, `npx CMD`, `npm exec -- CMD`, `poetry run CMD`, ...: the command after
    the runner's options runs (and must be allowed itself); `-c CODE` is shell code."""
    key, i = cmd.program, 0
    if key not in _RUNNER_VALUES:
        while i < len(vals) and vals[i].startswith("-"):
            i += 1
        if i >= len(vals) or f"{key} {vals[i]}" not in _RUNNER_VALUES:
            return  # not the running subcommand (`uv sync`, `npm test`)
        key, i = f"{key} {vals[i]}", i + 1
    valued = _RUNNER_VALUES[key]
    while i < len(vals) and vals[i].startswith("-") and vals[i] != "--":
        if vals[i] in ("-c", "--call") and key in ("npx", "npm exec", "npm x"):
            w.code(idx, args[i + 1:i + 2], f"{key} -c", i + 2, depth)
            return
        i += 2 if vals[i] in valued else 1
    if i < len(vals) and vals[i] == "--":
        i += 1
    if i >= len(vals):
        _opaque(w, cmd, f"`{key}` runs a command that is not on the line")
        return
    w.sub(idx, args, i, key, depth)


def _watch(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
           vals: list[str]) -> None:
    i = 0
    while i < len(vals) and vals[i].startswith("-"):
        i += 2 if vals[i] in ("-n", "--interval", "-d", "--differences", "-q") else 1
    w.code(idx, args[i:], "watch", i + 1, depth)


def _script(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
            vals: list[str]) -> None:
    for j, v in enumerate(vals):
        if v in ("-c", "--command"):
            w.code(idx, args[j + 1:j + 2], "script -c", j + 2, depth)
            return
    _opaque(w, cmd, "starts an interactive shell")


def _from_input(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
                vals: list[str]) -> None:
    _opaque(w, cmd, "builds commands from its input")


def _alias(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
           vals: list[str]) -> None:
    """`alias NAME=VALUE`: VALUE is code that runs wherever NAME is used as a command (with
    `shopt -s expand_aliases`, or a shell that expands them): walked as if run here."""
    for j, (a, v) in enumerate(zip(args, vals, strict=True)):
        name, eq, value = v.partition("=")
        if not eq or v.startswith("-"):
            continue  # `alias -p`, `alias NAME` (prints)
        if not a.literal:
            _opaque(w, cmd, f"the code `{name}` is made to run is not literal text")
            continue
        w.code(idx, [literal_word(value)], f"alias {name}", j + 2, depth)


def _trap(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
          vals: list[str]) -> None:
    """`trap CODE SIGNAL...`: CODE runs when a signal comes or the shell exits (`trap 'rm F'
    EXIT` runs at the end of the line): walked as if run here. `trap - SIG`, `trap SIG` reset;
    `trap -p`, `trap -l` print."""
    i = 0
    while i < len(vals) and vals[i].startswith("-") and vals[i] != "-":
        if vals[i] == "--":
            i += 1
            break
        i += 1
    if len(vals) - i >= 2 and vals[i] != "-":
        w.code(idx, args[i:i + 1], "trap", i + 2, depth)


def _mapfile(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
             vals: list[str]) -> None:
    """`mapfile -C CODE`: CODE runs with each chunk of lines it reads, which the analysis
    cannot know."""
    for v in vals:
        if v == "-C" or (v[:1] == "-" and v[1:2] != "-" and "C" in v):
            _opaque(w, cmd, "-C runs a callback with the lines it reads")
            return


def _compgen(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
             vals: list[str]) -> None:
    """`compgen -C CMD` runs CMD, `-F FUNC` calls a function, and `-W LIST` expands LIST as
    the shell expands words, substitutions included (`compgen -W '$(rm f)'`)."""
    for j, v in enumerate(vals[:-1]):
        if v == "-C" or (v == "-W" and ("$" in vals[j + 1] or "`" in vals[j + 1])):
            # (a list's words walked as a line: its substitutions are, its words named as a
            # command are refused where commands are listed, a rare false deny)
            w.code(idx, args[j + 1:j + 2], f"compgen {v}", j + 2, depth)
        elif v == "-F":
            _opaque(w, cmd, "-F calls a function the analysis does not see")
    if any(v[:1] == "-" and v[1:2] != "-" and len(v) > 2 and set(v[1:]) & set("CFW")
           for v in vals):
        _opaque(w, cmd, "options that run code, in a cluster")


def _runs_a_file(w: Walk, cmd: Command, idx: int, depth: int, args: list[Word],
                 vals: list[str]) -> None:
    pass  # `source FILE`: runs a file; the command itself must be allowed


_HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(SHELLS, _shell),
    "busybox": _busybox,
    "eval": _eval,
    **dict.fromkeys(("exec", "command", "builtin", "nohup", "time", "setsid", "coproc",
                     "chroot", "unbuffer", "caffeinate", "flock"), _prefix_runner),
    "sudo": _sudo,
    "doas": _sudo,
    "su": _su,
    "env": _env,
    **dict.fromkeys(("nice", "ionice", "stdbuf", "timeout", "taskset", "chrt", "prlimit",
                     "cpulimit", "unshare", "nsenter", "firejail", "torsocks", "proxychains",
                     "strace", "ltrace", "valgrind", "gdb", "catchsegv", "faketime",
                     "xvfb-run", "dbus-run-session", "systemd-run", "runuser", "pkexec", "sg",
                     "newgrp"), _option_runner),
    "xargs": _xargs,
    "find": _find,
    "fd": _fd,
    "fdfind": _fd,
    **dict.fromkeys(("uv", "uvx", "npx", "npm", "pnpm", "yarn", "bunx", "poetry", "pipx",
                     "pdm", "hatch"), _runner),
    "watch": _watch,
    "script": _script,
    **dict.fromkeys(("parallel", "rush", "sem"), _from_input),
    "alias": _alias,
    "trap": _trap,
    "compgen": _compgen,
    "mapfile": _mapfile,
    "readarray": _mapfile,
    "source": _runs_a_file,
    ".": _runs_a_file,
}

#: the command names `inner_commands` looks into (the walk asks only for these)
WRAPPERS = frozenset(_HANDLERS)
