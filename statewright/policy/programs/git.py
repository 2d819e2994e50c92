"""git: global options and subcommands that make it run any command (`-c`, `--config-env`,
`--exec-path=`, `!` aliases, `submodule foreach`, `bisect run`, `rebase --exec`,
`filter-branch`, `difftool --extcmd`, `--upload-pack`, ...), `git config` writes (a pager, an
alias or `core.fsmonitor` set now runs on a later call), credential reads (`git credential
fill`, `git config --list`), and the files `-o` names (`git format-patch -o DIR`)."""

from __future__ import annotations

from .spec import CODE, SECRETS, Example, Program, Risk

#: global options that take the next word as their value
_GLOBAL_WITH_ARG = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                              "--config-env", "--super-prefix"})
_ANY = "can make git run any command"
#: subcommand -> {option: what it runs}
_SUB_OPTIONS: dict[str, dict[str, str]] = {
    "rebase": {"--exec": "runs a shell command after each commit", "-x": "runs a shell command "
               "after each commit"},
    "difftool": {"--extcmd": "runs a command as the diff tool", "-x": "runs a command as the "
                 "diff tool"},
    "clone": {"--upload-pack": "runs a command as the remote's upload-pack",
              "-u": "runs a command as the remote's upload-pack",
              "--config": f"sets configuration in the new repository ({_ANY})",
              "-c": f"sets configuration in the new repository ({_ANY})",
              "--template": "copies hooks from a template directory"},
    "fetch": {"--upload-pack": "runs a command as the remote's upload-pack"},
    "pull": {"--upload-pack": "runs a command as the remote's upload-pack"},
    "ls-remote": {"--upload-pack": "runs a command as the remote's upload-pack"},
    "push": {"--receive-pack": "runs a command as the remote's receive-pack",
             "--exec": "runs a command as the remote's receive-pack"},
    "archive": {"--exec": "runs a command as the remote's upload-archive"},
    "init": {"--template": "copies hooks from a template directory"},
    "grep": {"--open-files-in-pager": "runs a command as the pager", "-O": "runs a command as "
             "the pager"},
    "send-email": {"--smtp-server": "runs a command as the mail server",
                   "--to-cmd": "runs a command", "--cc-cmd": "runs a command",
                   "--header-cmd": "runs a command"},
}
#: subcommand words -> what they run (anywhere after the subcommand)
_SUB_WORDS: dict[str, dict[str, str]] = {
    "submodule": {"foreach": "runs a shell command in every submodule"},
    "bisect": {"run": "runs a command to judge each commit"},
}
_CONFIG_WRITES = frozenset({"--unset", "--unset-all", "--add", "--replace-all", "--edit", "-e",
                            "--rename-section", "--remove-section", "set", "unset", "edit",
                            "rename-section", "remove-section"})
_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l",
                           "--list", "get", "list", "--get-color", "--get-colorbool"})
_CONFIG_WITH_ARG = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment",
                              "--value"})
_CREDENTIAL_KEYS = ("credential", "extraheader", "token", "password", "passwd", "secret")


def _config(at: int, vals: list[str]) -> list[Risk]:
    """`git config ...` (vals: the words after `config`): writes, or reads of credentials."""
    ops = [v for v in vals if v.split("=", 1)[0] in _CONFIG_WRITES | _CONFIG_READS]
    operands: list[str] = []
    i = 0
    while i < len(vals):
        v = vals[i]
        if v in _CONFIG_WITH_ARG:
            i += 2
            continue
        if not v.startswith("-"):
            operands.append(v)
        i += 1
    if any(o in _CONFIG_WRITES for o in ops) or (not ops and len(operands) >= 2) or (
            operands[:1] and operands[0] in _CONFIG_WRITES):
        return [Risk(at, CODE, "config", f"`git config` writes git configuration, which {_ANY} "
                     "(core.pager, an alias, core.fsmonitor, core.hooksPath)")]
    listing = any(o in ("-l", "--list", "list", "--get-regexp") for o in ops)
    if listing or any(k in v.lower() for v in operands for k in _CREDENTIAL_KEYS):
        return [Risk(at, SECRETS, "config", "`git config` would print stored credentials "
                     "(credential helpers, http.extraHeader tokens)")]
    return []


def _risks(vals: list[str]) -> list[Risk]:
    out: list[Risk] = []
    i = 0
    while i < len(vals) and vals[i].startswith("-"):
        v = vals[i]
        if v == "-c" or v == "--config-env" or v.startswith("--config-env="):
            tok = v.split("=", 1)[0]
            out.append(Risk(i, CODE, tok, f"`git {tok}` sets configuration for this run (a "
                            f"pager, an alias, core.fsmonitor, a diff driver): it {_ANY}"))
        elif v.startswith("--exec-path="):
            out.append(Risk(i, CODE, "--exec-path", "`git --exec-path=DIR` runs git's "
                            "subcommands from another directory"))
        i += 2 if v in _GLOBAL_WITH_ARG else 1
    if i >= len(vals):
        return out
    sub, rest = vals[i], vals[i + 1:]
    if sub.startswith("!"):
        out.append(Risk(i, CODE, sub, "a git alias that runs a shell command"))
    elif sub == "filter-branch":
        out.append(Risk(i, CODE, sub, "`git filter-branch` runs its filters as shell code"))
    elif sub == "config":
        out += _config(i, rest)
    elif sub == "credential" or sub.startswith("credential-"):
        out.append(Risk(i, SECRETS, sub, f"`git {sub}` prints stored credentials"))
    for j, v in enumerate(rest, i + 1):
        if v == "--":
            break
        opt = v.split("=", 1)[0]
        what = _SUB_OPTIONS.get(sub, {}).get(opt) or _SUB_WORDS.get(sub, {}).get(v)
        if what is None and len(v) > 2 and v[0] == "-" and v[1] != "-" and \
                v[:2] in _SUB_OPTIONS.get(sub, {}):
            opt, what = v[:2], _SUB_OPTIONS[sub][v[:2]]  # glued value: `-xCMD`
        if what:
            out.append(Risk(j, CODE, opt, f"`git {sub} {opt}` {what}"))
    return out


#: options whose next word is their value (a message is not an option)
_VALUES = frozenset({"-m", "--message", "-F", "--file", "--author", "--date", "-b", "-B",
                     "--format", "--pretty", "-S", "-G", "--grep", "-n", "--since", "--until",
                     "--onto", "-C", "-c", "--template", "-t", "--trailer", "--branch",
                     "--reuse-message", "--fixup", "--squash", "-U", "--depth"})

GIT = Program(
    ("git",), "the version control system",
    output_options=frozenset({"-o"}), value_options=_VALUES,
    risks=_risks,
    examples=(
        Example("git -c core.pager=sh log", runs_code=True),
        Example("git -C sub -c alias.x=!sh x", runs_code=True),
        Example("git --config-env=core.pager=PAGER log", runs_code=True),
        Example("git --exec-path=/tmp/bin status", runs_code=True),
        Example("git '!sh -c id'", runs_code=True),
        Example("git submodule foreach 'id'", runs_code=True),
        Example("git bisect run ./judge.sh", runs_code=True),
        Example("git rebase --exec 'make test' HEAD~3", runs_code=True),
        Example("git rebase -xid HEAD~3", runs_code=True),
        Example("git filter-branch --tree-filter id HEAD", runs_code=True),
        Example("git difftool --extcmd=./x.sh HEAD", runs_code=True),
        Example("git clone -u 'sh -c id' repo dir", runs_code=True),
        Example("git fetch --upload-pack='sh -c id' origin", runs_code=True),
        Example("git push --receive-pack=./x origin", runs_code=True),
        Example("git grep -Oid pattern", runs_code=True),
        Example("git config core.pager 'sh -c id'", runs_code=True),
        Example("git config --add alias.x '!id'", runs_code=True),
        Example("git config set core.fsmonitor ./x", runs_code=True),
        Example("git credential fill", secrets=True),
        Example("git credential-store get", secrets=True),
        Example("git config --get http.https://github.com/.extraheader", secrets=True),
        Example("git config --list", secrets=True),
        Example("git diff --output=changes.patch", writes=("changes.patch",)),
        Example("git format-patch -o patches HEAD~2", writes=("patches",)),
        Example("git format-patch -opatches HEAD~2", writes=("patches",)),
        Example("git status"),
        Example("git log -p -3"),
        Example("git -C sub log --oneline"),
        Example("git --git-dir .git --work-tree . diff"),
        Example("git commit -m '!important'"),
        Example("git rebase -i HEAD~3"),
        Example("git config --get user.email"),
        Example("git config user.name"),
        Example("git submodule update --init"),
        Example("git bisect start"),
        Example("git grep -n run"),
        Example("git log -- foreach run"),
        Example("git commit -m \"$(cat msg.txt)\""),
        Example("git log $REV", runs_code=True),
        Example("git diff --stat $(git rev-parse HEAD)"),
    ),
)
