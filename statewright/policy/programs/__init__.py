"""What programs DO, as data (DESIGN section 4): the options and subcommands that make an
allowed program run other code, write files named in its arguments, or print the environment
or resolved credentials. An allowed prefix allows a program, not everything it can be told to
do.

One entry (`spec.Program`) per program, each with examples that must and must not match
(`tests/policy/test_programs.py` checks them all); modules group them by what they know:
`git`, `builders` (test runners, package managers, build tools), `text` (searchers, finders,
stream editors, pagers; `scripts` reads sed and awk programs), `files` (archivers, copiers,
transfer tools), `cloud` (docker, kubectl, aws, gh), `python` (which names are Python),
`environment` (environment dumps), `writers` (files named in arguments). To teach statewright
about a program, add its entry to a module and to `PROGRAMS` below.

The questions the shell analysis asks, by program name (a path is looked up by its last
component: `/usr/bin/env` is `env`):
- `risks(name, args)`: what its options and subcommands make it do beyond its name allows
  (`Risk`s: run other code, print credentials), each at the word that says so; check 5
  refuses a risk that no allowed entry spells out, check 6 refuses printed credentials;
- `option_outputs(name, args)`: the files its options or arguments say it writes (checked
  like output redirects: self-protection and the write scope);
- `env_dump(name, args)`: why it prints environment variables (None: it does not);
- `is_python(name)`: whether it is a Python interpreter.
"""

from __future__ import annotations

from ...lean import TYPE_CHECKING, lru_cache
from ..types import literal_word, program_name
from .builders import BUILDERS
from .cloud import CLOUD
from .environment import ENVIRONMENT_DUMPS
from .files import FILES
from .git import GIT
from .python import PYTHON, is_python
from .spec import CODE, DYNAMIC, SECRETS, Example, Program, Risk
from .text import TEXT
from .writers import ANY_PROGRAM, GLUED_VALUE_ONLY, TYPED_VALUE, WRITERS

if TYPE_CHECKING:  # pragma: no cover
    from ..types import Word

    #: the files a command's options or arguments say it writes, by the place of the word
    #: that names each: (the option, the index in `args` of the word naming the file or -1 for
    #: the working directory, the file's part of that word or None when it is the whole word)
    Outputs = tuple[tuple[str, int, str | None], ...]

__all__ = ["CODE", "DUMPS_ENV", "PROGRAMS", "SECRETS", "Example", "Program", "Risk", "env_dump",
           "facts", "is_python", "option_outputs", "program_name", "risks", "runs_code"]

#: every entry (`ANY_PROGRAM` holds what applies to any program whatever its name)
PROGRAMS: tuple[Program, ...] = (ANY_PROGRAM, GIT, PYTHON, *BUILDERS, *TEXT, *FILES, *CLOUD,
                                 *ENVIRONMENT_DUMPS, *WRITERS)
_BY_NAME = {name: p for p in PROGRAMS for name in p.names}
#: the names of the programs `env_dump` knows to print the environment (by these names, or by a
#: path ending in one): for any other name it answers None
DUMPS_ENV = frozenset(name for name, p in _BY_NAME.items() if p.dumps_env is not None)


def _entry(name: str) -> Program | None:
    entry = _BY_NAME.get(name)
    if entry is None and "/" in name:
        entry = _BY_NAME.get(program_name(name))
    return entry


def risks(name: str, args: tuple[Word, ...]) -> tuple[Risk, ...]:
    """What `name ARGS` is told to do beyond what its name allows (see `Risk`)."""
    return facts(name, args)[0]


def facts(name: str, args: tuple[Word, ...]) -> tuple[tuple[Risk, ...], Outputs]:
    """(`risks(name, args)`, the files its options write as `Outputs`): what the walk asks
    of every command. For a few fixed words both are a function of the name and the values
    alone, kept (`_KEPT`)."""
    vals: list[str] = []
    literal = True
    for w in args:  # (one loop, not a comprehension and `all`: cheaper for a few words)
        vals.append(w.value)
        if not w.literal:
            literal = False
    if literal and len(vals) <= 16:
        key = (name, *vals)
        kept = _KEPT.get(key)
        if kept is None:
            kept = (_risks(name, args, vals, True), _outputs(name, args, vals))
            if sum(map(len, vals)) <= 1024:  # (only short lines' answers are kept)
                if len(_KEPT) >= _KEPT_MAX:
                    _KEPT.clear()
                _KEPT[key] = kept
        return kept
    return _risks(name, args, vals, literal), _outputs(name, args, vals)


#: `facts` of a program given a few fixed words (at most 16, 1 KiB in all), by (name,
#: *values): lines name `git status`, `npm test` again and again, and each answer is made of
#: tuples of text, numbers and immutable `Risk`s. Emptied when it holds `_KEPT_MAX` answers.
_KEPT: dict[tuple[str, ...], tuple[tuple[Risk, ...], Outputs]] = {}
_KEPT_MAX = 1024


def _risks(name: str, args: tuple[Word, ...], vals: list[str], literal: bool
           ) -> tuple[Risk, ...]:
    entry = _entry(name)
    if entry is None and is_python(name):
        return _module_risks(args)
    if entry is None or not (entry.code_options or entry.subcommands or entry.risks):
        return ()
    return _risks_of(name, entry, vals, args, literal)


def _risks_of(name: str, entry: Program, vals: list[str], args: tuple[Word, ...],
              literal: bool) -> tuple[Risk, ...]:
    out: list[Risk] = []
    if entry.code_options:
        out += _option_risks(name, entry, vals)
    if entry.subcommands:
        out += _subcommand_risks(entry, vals)
    if entry.risks is not None:
        out += entry.risks(vals if literal else
                           [w.value if w.literal else w.value + DYNAMIC for w in args])
    if not literal:
        out += _expansion_risks(name, entry, args)
    return tuple(out) if out else ()


def _module_risks(args: tuple[Word, ...]) -> tuple[Risk, ...]:
    """`python -m MODULE ARGS`: the risks of the module's own entry (`python -m pytest -p x`),
    at their place on this line."""
    for i, w in enumerate(args):
        v = w.value
        if v == "-m" or (v.startswith("-m") and len(v) > 2):
            mod = v[2:] if len(v) > 2 else (args[i + 1].value if i + 1 < len(args) else "")
            start = i + 1 if len(v) > 2 else i + 2
            found = risks(mod, args[start:]) if mod and _entry(mod) is not None else ()
            return tuple(r.replace(at=r.at + start) for r in found)
        if v[:1] != "-" or v in ("-c", "-"):
            break
    return ()


def runs_code(name: str, vals: list[str]) -> str | None:
    """Why `name VALS` (fixed words) runs code other than the program's own (None: it does
    not, as far as known)."""
    found = [r for r in risks(name, tuple(literal_word(v) for v in vals)) if r.kind == CODE]
    return found[0].why if found else None


def env_dump(name: str, args: tuple[Word, ...]) -> str | None:
    """Why `name ARGS` prints environment variables (None: it does not)."""
    entry = _entry(name)
    if entry is None or entry.dumps_env is None:
        return None
    return entry.dumps_env(name, [w.value for w in args])


def _option_risks(name: str, entry: Program, vals: list[str]) -> list[Risk]:
    code, valued = entry.code_options, entry.value_options
    out: list[Risk] = []
    for i, v in enumerate(vals):
        if v == "--":
            break
        if i and vals[i - 1] in valued:
            continue  # the value of the option before
        if v[:1] != "-" or v == "-":
            if entry.options_first:
                break
            continue
        key = v.split("=", 1)[0]
        why = code.get(key)
        if why is None and v[1:2] != "-":
            for ch in v[1:]:  # a cluster of short options: `-Hx`, `-xCMD`
                o = "-" + ch
                why = code.get(o)
                if why is not None:
                    key = o
                    break
                if o in valued:
                    break
        if why is not None:
            out.append(Risk(i, CODE, key, f"`{name} {key}` {why}"))
    return out


def _subcommand_risks(entry: Program, vals: list[str]) -> list[Risk]:
    valued = entry.value_options
    ops = [i for i, v in enumerate(vals) if v[:1] != "-" and not (i and vals[i - 1] in valued)]
    out: list[Risk] = []
    for words, kind, why in entry.subcommands:
        toks, subs = _split_words(words)
        if not ops or vals[ops[0]] != subs[0]:
            continue
        if len(ops) < len(subs) or any(vals[ops[k]] != s for k, s in enumerate(subs)):
            continue
        at = ops[len(subs) - 1]
        for opt in (t for t in toks if t[:1] == "-"):
            hit = next((j for j in range(at + 1, len(vals))
                        if vals[j] == opt or vals[j].startswith(opt + "=")), None)
            if hit is None:
                break
            at = max(at, hit)
        else:
            out.append(Risk(at, kind, toks[-1], why))
    return out


@lru_cache(maxsize=256)
def _split_words(words: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(every token of a `subcommands` entry, its subcommand words)."""
    toks = tuple(words.split())
    return toks, tuple(t for t in toks if t[:1] != "-")


#: a word that starts with a variable's value (`$f`, `"${f}"`), not a command's output
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789@*#?{")


def _variable_first(text: str) -> bool:
    """Whether a word's text starts with a variable's value (`$f`, `"${f}"`), not a command's
    output (`$(...)`): read by hand, not by a pattern a hook process would compile."""
    t = text[1:] if text[:1] == '"' else text
    return t[:1] == "$" and t[1:2] in _NAME_START and t[1:2] != ""


def _expansion_risks(name: str, entry: Program, args: tuple[Word, ...]) -> list[Risk]:
    """A word that is not fixed text and could begin with `-` (a glob such as `*.py` matching
    a file named `--pre=x`, a variable such as `"$f"` in a loop over files) could be one of the
    options above. (The output of a command substitution is not judged: `git diff $(git
    merge-base HEAD main)` is everyday work; see docs/policy.md.)"""
    out: list[Risk] = []
    for i, w in enumerate(args):
        if w.literal:
            if w.value == "--":
                break
            if entry.options_first and w.value[:1] != "-":
                break
            continue
        if w.pattern[:1] in ("*", "?", "[") and (w.glob or _variable_first(w.text)) and not (
                i and args[i - 1].literal and args[i - 1].value in entry.value_options):
            out.append(Risk(i, CODE, "", f"`{w.text}` could expand to an option of `{name}` "
                            "that runs code or writes files (a file or value starting with "
                            "`-`); put `--` before it or start it with `./`"))
    return out


def option_outputs(name: str, args: tuple[Word, ...]) -> list[tuple[str, Word | None, str | None]]:
    """The files `name ARGS` writes because an option or argument says so: (the option, the
    word naming the file or None for the working directory, the file's part of that word, or
    None when it is the whole word)."""
    return [(op, args[at] if at >= 0 else None, part) for op, at, part in facts(name, args)[1]]


def _outputs(name: str, args: tuple[Word, ...], vals: list[str]) -> Outputs:
    """`option_outputs(name, args)` with each word given by its index (`Outputs`)."""
    out: list[tuple[str, int, str | None]] = []
    entry = _entry(name)
    short = entry.output_options if entry is not None else frozenset()
    long = ANY_PROGRAM.long_output_options
    if entry is not None and entry.long_output_options:
        long = long | entry.long_output_options
    operand = entry.output_operand if entry is not None else None
    values = entry.value_options if entry is not None else frozenset()
    clusters = entry is None or entry.clusters
    operands = entry is not None and entry.writes_operands
    i, n = 0, len(args)
    past_options = False
    while i < n:
        v = vals[i]
        if v == "--":
            past_options = True
        elif operands:
            if past_options or not v.startswith("-") or not args[i].literal:
                out.append((name, i, None))
        elif operand is not None and v.startswith(operand):
            out.append((f"{name} {operand}", i, v[len(operand):]))
        elif not past_options and v.startswith("--"):
            opt, eq, val = v.partition("=")
            if opt in long:
                if opt in TYPED_VALUE:
                    val = val.split(":", 1)[1] if ":" in val else ""
                if eq and val:
                    out.append((opt, i, val))
                elif not eq and opt not in GLUED_VALUE_ONLY and i + 1 < n:
                    out.append((opt, i + 1, None))
                    i += 1
            elif not eq and opt in values:
                i += 1  # (its value is the next word, even `--`)
        elif not past_options and short and v[:1] == "-" and v[1:2] not in ("", "-"):
            # a cluster of short options (`-sSo F`, `-sSoF`): the letters before the output
            # option are flags; one that takes a value ends the cluster (a program whose words
            # with one dash are one option each: only `-oF`, `-o F`)
            for k in range(1, len(v) if clusters else 2):
                o = "-" + v[k]
                if o in short:
                    if k + 1 < len(v):
                        out.append((o, i, v[k + 1:]))
                    elif i + 1 < n:
                        out.append((o, i + 1, None))
                        i += 1
                    break
                if o in values:
                    if k + 1 == len(v):
                        i += 1  # (its value is the next word, even `--`: `sort -T -- -o F`)
                    break
        i += 1
    if entry is not None and entry.writes is not None:
        marked = [a.value if a.literal else a.value + DYNAMIC for a in args]
        for op, at, part in entry.writes(marked):
            if at < 0:
                out.append((op, -1, part))
            elif at < n:
                out.append((op, at, part.replace(DYNAMIC, "") if part is not None else None))
    return tuple(out) if out else ()
