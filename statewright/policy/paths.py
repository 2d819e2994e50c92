"""Glob semantics of `file_pattern` (DESIGN.md section 3), and project-relative paths.

Patterns are matched against the path relative to the project root with `/` separators:
`*` and `?` never cross `/`; `**` matches any number of directories, including none;
`[abc]` is a character class. `*.js` matches `app.js` but not `src/app.js`; `**/*.env*`
matches `.env` and `.env.local` at any depth (leading dots are not special).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache


@lru_cache(maxsize=512)
def compile_glob(pattern: str) -> re.Pattern[str]:
    i, n, out = 0, len(pattern), []
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                at_start = i == 0 or pattern[i - 1] == "/"
                if at_start and j < n and pattern[j] == "/":
                    out.append("(?:[^/]*/)*")  # `**/` : zero or more directories
                    i = j + 1
                    continue
                if at_start and j == n:
                    out.append(".*")  # trailing `/**`: everything below
                    i = j
                    continue
                out.append("[^/]*")  # `**` glued to other text behaves like `*`
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^") else i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("(?!/)[" + body.replace("\\", "\\\\") + "]")
                i = j + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def glob_match(pattern: str, relpath: str) -> bool:
    """True if project-relative `relpath` ('/'-separated, no leading './') matches `pattern`."""
    return compile_glob(pattern.removeprefix("./")).match(relpath) is not None


def project_relative(path: str, project_root: str, cwd: str | None = None) -> str | None:
    """Resolve `path` (absolute, or relative to `cwd`/the root) to a '/'-separated path relative
    to the project root; None if it lies outside the project. Symlinks are resolved where they
    exist, so a link into `.statewright/` is seen for what it is."""
    base = cwd or project_root
    full = os.path.realpath(os.path.join(base, os.path.expanduser(path)))
    root = _real_root(project_root)
    if full == root:
        return "."
    if not full.startswith(root.rstrip(os.sep) + os.sep):
        return None
    return os.path.relpath(full, root).replace(os.sep, "/")


@lru_cache(maxsize=64)
def _real_root(project_root: str) -> str:
    # the project root does not move during a process's life; resolving it once saves a
    # syscall per path on the hot path of `gate`
    return os.path.realpath(project_root)
