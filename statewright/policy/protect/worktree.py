"""Self-protection against commands that change the worktree wholesale, judged by their effect
(DESIGN section 4, check 1; the facts per program are `programs.worktree`):

- git commands that remove untracked or ignored files or restore tracked ones (`git clean`,
  `git stash -u/-a`, `git checkout -- PATH`, `git restore`, `git reset --hard`, `git rm`) where
  what they act on holds the store or a file statewright is enforcing;
- copies, moves, links, archive extraction and decompression whose landing place is the store,
  a protected file, a directory holding them, a place whose code other programs run (`.git/`
  of any repository, site-packages, ...) or a new workflow file that would shadow the id of a
  workflow in use;
- the files those commands change, for `max_files_per_state` (`changed_files`).
"""

from __future__ import annotations

import os

from ...lean import TYPE_CHECKING, fnmatchcase, loads
from ..paths import relative_to_root
from ..programs import worktree as wt
from .scope import sensitive
from .store import ctx_facts, inside, program_paths

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..paths import Resolve
    from ..shell import Command, ShellAnalysis


def worktree_violations(analysis: ShellAnalysis, ctx: Any, resolve: Resolve,
                        cwds: list[str], kernel: bool = False) -> list[str]:
    """Every refusal for the worktree-changing commands of a line. (`kernel`: the line runs
    sandboxed, and an archive's contents, which the line does not show, are the kernel's to
    bind: extracting into the project's top is not refused; into a directory that holds
    protected files, or a protected one, still is.)"""
    out: list[str] = []
    for c in analysis.commands:
        if not c.name_literal:
            continue
        name = c.program
        vals = [a.value for a in c.args]
        if name == "git":
            out += _git_problems(c, vals, ctx, resolve, cwds)
        elif name in wt.COPIERS:
            out += _copy_problems(c, vals, ctx, resolve, cwds)
        else:
            x, dest = wt.extract_target(name, vals)
            if x:
                for d in cwds:
                    full = resolve(dest, d, shell=True) if dest else resolve(".", d, True)
                    if kernel and full == os.path.realpath(ctx.project_root):
                        break  # (into the project's top: what it holds is the kernel's)
                    why = _landing_problem(full, ctx, whole=True)
                    if why:
                        out.append(f"`{c.text[:80]}` extracts an archive into `{dest or '.'}`: "
                                   f"{why}")
                        break
            for target in wt.decompressed(name, vals):
                for d in cwds:
                    why = _landing_problem(resolve(target, d, shell=True), ctx)
                    if why:
                        out.append(f"`{c.text[:80]}` writes `{target}`: {why}")
                        break
    return list(dict.fromkeys(out))


# -- git ---------------------------------------------------------------------------------------

def _git_base(vals: list[str], cwd: str) -> str:
    """The directory git acts from: the cwd, moved by each `-C DIR`."""
    i = 0
    while i < len(vals) and vals[i].startswith("-"):
        if vals[i] == "-C" and i + 1 < len(vals):
            cwd = os.path.normpath(os.path.join(cwd, vals[i + 1]))
            i += 2
            continue
        i += 2 if vals[i] in ("--git-dir", "--work-tree", "--namespace", "-c") else 1
    return cwd


def _git_problems(c: Command, vals: list[str], ctx: Any, resolve: Resolve,
                  cwds: list[str]) -> list[str]:
    out: list[str] = []
    fx = ctx_facts(ctx)
    for d in cwds:
        base = _git_base(vals, d)
        effect = wt.git_effect(vals, lambda w, b=base: os.path.lexists(os.path.join(b, w)))
        if effect is None:
            return out
        roots = _pathspec_roots(effect.pathspecs, base, ctx, resolve)
        for root, pattern in roots:
            what = _git_hits(effect, root, pattern, fx, ctx)
            if what:
                out.append(f"`{c.text[:80]}` would {what}")
                return out
    return out


def _pathspec_roots(specs: list[str], base: str, ctx: Any, resolve: Resolve
                    ) -> list[tuple[str, str | None]]:
    """(directory or file, glob pattern over project-relative paths or None) per pathspec."""
    if not specs:
        return [(resolve(".", base, True), None)]
    out: list[tuple[str, str | None]] = []
    for s in specs:
        if s.startswith(":"):  # pathspec magic (`:/`, `:(glob)...`): from the top
            rest = s.split(")", 1)[-1] if s.startswith(":(") else s[1:].lstrip("/!^")
            out.append((ctx.project_root, rest or None))
        elif any(ch in s for ch in "*?["):
            rel = relative_to_root(resolve(".", base, True), ctx.project_root) or ""
            out.append((ctx.project_root, (rel + "/" if rel not in ("", ".") else "") + s))
        else:
            out.append((resolve(s, base, True), None))
    return out


def _git_hits(effect: wt.GitEffect, root: str, pattern: str | None, fx: Any, ctx: Any
              ) -> str | None:
    store = fx.real_store
    if pattern is not None:
        for p in fx.protected:
            rel = relative_to_root(p, ctx.project_root)
            if rel and os.path.exists(p) and fnmatchcase(rel, pattern):
                return f"reach `{rel}`, a file statewright is enforcing"
        return None
    if (effect.ignored or (effect.untracked and not _store_ignored(store))) and (
            inside(store, root) or inside(root, store)):
        return "delete statewright's store (it removes untracked or ignored files)"
    for p in fx.protected:
        if (p == root or inside(p, root)) and os.path.exists(p):
            verb = "remove" if effect.untracked else "restore or remove"
            return (f"{verb} `{relative_to_root(p, ctx.project_root) or p}`, a file "
                    "statewright is enforcing (name the paths it should act on instead)")
    return None


def _store_ignored(store: str) -> bool:
    """Whether the store carries its own `.gitignore` (written with the store), so git counts
    its files as ignored: only `-x`/`-X`/`--all` reach it then."""
    return os.path.isfile(os.path.join(store, ".gitignore"))


# -- copies, moves, extraction -----------------------------------------------------------------

def _copy_problems(c: Command, vals: list[str], ctx: Any, resolve: Resolve,
                   cwds: list[str]) -> list[str]:
    out: list[str] = []
    srcs, dest, into = wt.copy_operands(c.program, vals)
    if dest is None:
        return out
    dw = c.args[dest]
    dval = dw.value.split("=", 1)[1] if dw.value.startswith("--target-directory=") else dw.value
    if not dw.literal:
        out.append(f"`{c.text[:80]}`: the destination `{dw.text}` is not a literal path")
        return out
    for d in cwds:
        full = resolve(dval, d, shell=True)
        if into or os.path.isdir(full) or dval.endswith("/"):
            for i in srcs:
                sw = c.args[i]
                land = "." if not sw.literal else wt.landing_name(sw.value, c.program)
                target = full if land == "." else os.path.join(full, land)
                why = _landing_problem(target, ctx, whole=land == ".",
                                       source=resolve(sw.value, d, True) if sw.literal else None)
                if why:
                    out.append(f"`{c.text[:80]}` puts `{sw.text}` into `{dval}`: {why}")
                    return out
        else:
            src = c.args[srcs[0]] if srcs else None
            why = _landing_problem(full, ctx, source=resolve(src.value, d, True)
                                   if src is not None and src.literal else None)
            if why:
                out.append(f"`{c.text[:80]}` writes `{dval}`: {why}")
                return out
    return out


def _landing_problem(full: str, ctx: Any, whole: bool = False,
                     source: str | None = None) -> str | None:
    """Why a file or tree may not land at `full`. `whole`: unknown names land inside the
    directory `full` (an archive, a copy of a directory's contents)."""
    fx = ctx_facts(ctx)
    if full == fx.real_store or full.startswith(fx.real_store_prefix):
        return "that is inside statewright's store"
    if full in fx.protected or full.casefold() in fx.folded:
        return "that is a file statewright is enforcing"
    pre = full.rstrip(os.sep) + os.sep
    if fx.real_store.startswith(pre) or pre in fx.holders:
        if whole or os.path.isdir(full):
            return "that directory holds statewright's store or a file statewright is enforcing"
    for d in program_paths():
        if full == d or full.startswith(d + os.sep):
            return "that belongs to statewright's installed programs"
    rel = relative_to_root(full, ctx.project_root)
    if rel is not None and rel != ".":
        why = sensitive(rel, full, ctx)
        if why:
            return why
    if full.endswith(".json") and os.path.dirname(full) + os.sep in fx.holders:
        ids = workflow_ids_in_use(ctx)
        new_id = _workflow_id(source, ctx) if source else None
        if new_id is None or new_id in ids:
            return ("a workflow file there could shadow the id of a workflow in use "
                    f"({', '.join(sorted(ids)) or 'unknown'})")
    return None


def workflow_ids_in_use(ctx: Any) -> set[str]:
    """The ids declared by the workflow files in use, and the ids they invoke (read now): a
    file with one of those ids would replace the workflow a run uses or is about to invoke."""
    out: set[str] = set()
    for p in ctx.protected_files:
        doc = _workflow_doc(p, ctx)
        if doc is None:
            continue
        if isinstance(doc.get("id"), str):
            out.add(doc["id"])
        _invoked(doc.get("states"), out, 0)
    return out


def _invoked(v: Any, out: set[str], depth: int) -> None:
    if depth > 12:
        return
    if isinstance(v, dict):
        inv = v.get("invoke")
        if isinstance(inv, str):
            out.add(inv)
        for x in v.values():
            if isinstance(x, (dict, list)):
                _invoked(x, out, depth + 1)
    elif isinstance(v, list):
        for x in v:
            _invoked(x, out, depth + 1)


def _workflow_doc(path: str | None, ctx: Any) -> dict[str, Any] | None:
    if not path or ctx.read_text is None:
        return None
    try:
        text = ctx.read_text(path)
        doc = loads(text) if text else None
    except (ValueError, OSError):
        return None
    return doc if isinstance(doc, dict) else None


def _workflow_id(path: str | None, ctx: Any) -> str | None:
    doc = _workflow_doc(path, ctx)
    return doc.get("id") if doc is not None and isinstance(doc.get("id"), str) else None


def shadowing_write(full: str, text: object, ctx: Any) -> str | None:
    """An edit tool writing `text` to a new `.json` file whose `id` is a workflow in use (a
    file earlier on the search path, or one the next run would pick, would replace it)."""
    if not full.endswith(".json") or not isinstance(text, str) or '"id"' not in text:
        return None
    fx = ctx_facts(ctx)
    if full in fx.protected:
        return None
    try:
        doc = loads(text)
    except ValueError:
        return None
    wid = doc.get("id") if isinstance(doc, dict) else None
    if isinstance(wid, str) and wid in workflow_ids_in_use(ctx):
        return (f"it declares workflow id `{wid}`, the id of a workflow in use; a second "
                "file with that id would shadow it")
    return None


# -- what a line changes (max_files_per_state) --------------------------------------------------

def changed_files(analysis: ShellAnalysis, resolve: Resolve, cwds: list[str]) -> list[str]:
    """Resolved paths of the files the copies, moves, links, removals and extractions of a
    line change (a glob is expanded now; a name known only at run time is reported as `?`)."""
    out: list[str] = []
    cwd = cwds[-1]
    for c in analysis.commands:
        if not c.name_literal:
            continue
        name = c.program
        vals = [a.value for a in c.args]
        if name in wt.COPIERS:
            srcs, dest, into = wt.copy_operands(name, vals)
            if dest is None:
                continue
            dw = c.args[dest]
            dval = dw.value.split("=", 1)[1] if dw.value.startswith("--target-directory=") \
                else dw.value
            if not dw.literal:
                out.append("?")
                continue
            full = resolve(dval, cwd, shell=True)
            for i in srcs:
                for src in _expand(c.args[i], cwd):
                    if src == "?":
                        out.append("?")
                        continue
                    if into or os.path.isdir(full) or dval.endswith("/"):
                        out.append(os.path.join(full, wt.landing_name(src, name)))
                    else:
                        out.append(full)
                    if name in wt.MOVERS:
                        out.append(resolve(src, cwd, shell=True))
        elif name in wt.REMOVERS:
            for i, a in enumerate(c.args):
                if a.literal and a.value.startswith("-"):
                    continue
                out += [x if x == "?" else resolve(x, cwd, shell=True)
                        for x in _expand(c.args[i], cwd)]
        else:
            out += [resolve(t, cwd, shell=True) for t in wt.decompressed(name, vals)]
    return list(dict.fromkeys(out))


def _expand(w: Any, cwd: str) -> list[str]:
    if w.literal:
        return [w.value]
    if w.dynamic:
        return ["?"]
    import glob

    found = sorted(glob.glob(w.pattern, root_dir=cwd))
    return found or [w.pattern]
