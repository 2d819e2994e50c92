"""The script languages of the stream editors: which `sed` and `awk` programs run commands or
write files (`sed` `e`, `s///e`, `w FILE`, `s///w FILE`; `awk` `system()`, pipes, `print >
FILE`). A script the reader cannot follow is taken as running code (fail closed)."""

from __future__ import annotations

from ...lean import LazyRe

#: sed commands that take no argument, or an optional number / label ended by `;`
_SED_SIMPLE = frozenset("=dDgGhHlnNpPxzFqQLv")
_SED_LABEL = frozenset("btT:")
_SED_TEXT = frozenset("aic")
_SED_FILE = frozenset("rRwW")
_ADDR_RE = LazyRe(r"\s*(?:(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\(.)(?:(?!\1).|\\.)*\1[IM]*)"
                  r"(?:\s*,\s*(?:[+~]?\d+|\$|/(?:[^/\\\n]|\\.)*/[IM]*))?)?\s*!?\s*")


def sed_script(script: str) -> tuple[list[str], list[str]]:
    """(what in it runs code, the files it writes). Anything not understood runs code."""
    runs: list[str] = []
    writes: list[str] = []
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}":
            i += 1
            continue
        if c == "#":
            i = _eol(script, i)
            continue
        m = _ADDR_RE.get().match(script, i)
        if m is not None:
            i = m.end()
        if i >= n:
            break
        c = script[i]
        i += 1
        if c in "{}":
            continue
        if c == "s" or c == "y":
            i, flags, target = _sed_subst(script, i, c == "s")
            if flags is None:
                return ["a `sed` script it cannot read"], writes
            if "e" in flags:
                runs.append("`s///e` runs the pattern space as a shell command")
            if target is not None:
                writes.append(target)
        elif c == "e":
            runs.append("`e` runs a shell command")
            i = _eol(script, i)
        elif c in _SED_FILE:
            end = _eol(script, i)
            name = script[i:end].strip()
            if c in "wW":
                writes.append(name)
            i = end
        elif c in _SED_TEXT:
            i = _eol(script, i, text=True)
        elif c in _SED_LABEL:
            while i < n and script[i] not in ";\n":
                i += 1
        elif c in _SED_SIMPLE:
            while i < n and (script[i].isdigit() or script[i] in " \t"):
                i += 1
        else:
            return [f"a `sed` command it cannot read (`{c}`)"], writes
    return runs, writes


def _eol(s: str, i: int, text: bool = False) -> int:
    while i < len(s) and s[i] != "\n":
        if text and s[i] == "\\" and i + 1 < len(s):
            i += 1  # `a\` continues the text on the next line
        i += 1
    return i


def _sed_subst(s: str, i: int, subst: bool) -> tuple[int, str | None, str | None]:
    """After `s`/`y`: (the index after the command, its flags or None if unreadable, the file
    its `w` flag writes)."""
    if i >= len(s) or s[i] in "\n\\":
        return i, None, None
    delim = s[i]
    i += 1
    for _ in range(2):
        while i < len(s) and s[i] != delim:
            i += 2 if s[i] == "\\" else 1
        if i >= len(s):
            return i, None, None
        i += 1
    flags: list[str] = []
    while i < len(s) and s[i] not in ";\n}":
        if subst and s[i] == "w":
            end = _eol(s, i + 1)
            return end, "".join(flags), s[i + 1:end].strip()
        flags.append(s[i])
        i += 1
    return i, "".join(flags), None


_AWK_PRINT_RE = LazyRe(r"\bprintf?\b([^;{}\n]*)")
_AWK_SYSTEM_RE = LazyRe(r"\bsystem\s*\(")
_AWK_PIPE_RE = LazyRe(r"(?<!\|)\|(?!\|)")
_AWK_STRING_RE = LazyRe(r"\x00(\d+)\x00")


def awk_program(prog: str) -> tuple[list[str], list[str]]:
    """(what in it runs code, the files it writes, literal names only; a write to a computed
    name runs code as far as the caller is concerned)."""
    code, strings = _awk_code(prog)
    runs: list[str] = []
    writes: list[str] = []
    if "system" in code and _AWK_SYSTEM_RE.search(code):
        runs.append("`system()` runs a shell command")
    if _AWK_PIPE_RE.search(code):
        runs.append("a pipe to or from a shell command (`| getline`, `print | cmd`)")
    if "@load" in code or "@include" in code:
        runs.append("`@load`/`@include` loads code from a file")
    for m in _AWK_PRINT_RE.get().finditer(code):
        depth = 0
        body = m.group(1)
        for k, ch in enumerate(body):
            depth += ch == "("
            depth -= ch == ")"
            if ch == ">" and depth == 0:
                rest = body[k + 1:].lstrip(">").strip()
                lit = _AWK_STRING_RE.match(rest)
                if lit is not None:
                    writes.append(strings[int(lit.group(1))])
                else:
                    runs.append("`print > FILE` writes a file named at run time")
                break
    return runs, writes


def _awk_code(prog: str) -> tuple[str, list[str]]:
    """The program with its string literals replaced by `\\0N\\0` (N: the index in the list
    returned), regular expression literals and comments dropped."""
    out: list[str] = []
    strings: list[str] = []
    i, n = 0, len(prog)
    while i < n:
        c = prog[i]
        if c == '"':
            j = i + 1
            buf: list[str] = []
            while j < n and prog[j] != '"':
                if prog[j] == "\\" and j + 1 < n:
                    j += 1
                buf.append(prog[j])
                j += 1
            out.append(f"\x00{len(strings)}\x00")
            strings.append("".join(buf))
            i = j + 1
        elif c == "#":
            i = _eol(prog, i)
        elif c == "/" and _regex_may_start(out):
            j = i + 1
            while j < n and prog[j] not in "/\n":
                j += 2 if prog[j] == "\\" else 1
            out.append(" ")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out), strings


def _regex_may_start(out: list[str]) -> bool:
    prev = "".join(out[-3:]).rstrip()
    return not prev or prev[-1] in "(,~!&|{;\n" or prev.endswith(("!~",))
