"""The house rules of DESIGN section 1 that a machine can check.

- No module under `statewright/` is over 600 lines: a room that grows past that is split by
  what it owns.
- No function is over 80 lines unless a comment right above it (`# long: <why>`) says why.
- Private modules (`_name`) of the standard library or of other packages are imported only by
  `statewright/lean.py`, the one home of the process hook's start-up tricks.
- No import circle inside `statewright/`: every `import` statement counts, at module level, in a
  function or under `if TYPE_CHECKING:` (a circle a type checker needs is a circle all the same:
  the records both sides share belong in a module below both). Importing a package's module
  runs the package's `__init__` first: that counts as importing it too, except from inside
  the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "statewright"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
LEAN = PACKAGE / "lean.py"


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _rel(p: Path) -> str:
    return str(p.relative_to(REPO))


def test_no_module_is_over_600_lines() -> None:
    big = {_rel(p): n for p in _modules()
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not big, f"modules over {MAX_MODULE_LINES} lines (split them by what they own): {big}"


def _long_functions(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    out = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        if length <= MAX_FUNCTION_LINES:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        above = lines[first - 2].strip() if first >= 2 else ""
        if not above.startswith("# long:"):
            out.append(f"{_rel(path)}:{node.lineno} {node.name} ({length} lines)")
    return out


def test_no_function_is_over_80_lines_without_a_reason() -> None:
    long = [f for p in _modules() for f in _long_functions(p)]
    assert not long, ("functions over 80 lines with no `# long: <why>` comment above them: "
                      + "; ".join(long))


def _private_imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            if name == "__future__":
                continue
            if any(part.startswith("_") for part in name.split(".")):
                out.append(f"{_rel(path)}:{node.lineno} imports {name}")
    return out


def test_private_modules_are_imported_only_by_the_lean_module() -> None:
    found = [f for p in _modules() if p != LEAN for f in _private_imports(p)]
    assert not found, ("private modules of other packages are a start-up trick: keep them in "
                       "statewright/lean.py: " + "; ".join(found))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the statewright modules its import statements name (anywhere in it)."""
    modules = {_module_name(p): p for p in _modules()}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        out: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for a in node.names:  # `from pkg import mod` names the module
                    sub = f"{target}.{a.name}"
                    out.add(sub if sub in modules else target)
        out = {m for m in out if m in modules and m != name}
        # importing `a.b.c` runs `a/__init__` and `a/b/__init__` first: edges to the packages
        # around the module named, except the importer's own (already running)
        for m in list(out):
            parts = m.split(".")
            for i in range(1, len(parts)):
                package_of = ".".join(parts[:i])
                if package_of in modules and not (name + ".").startswith(package_of + "."):
                    out.add(package_of)
        graph[name] = out
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    comp.add(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    circles.append(frozenset(comp))
    return circles


def test_no_import_circle_inside_the_package() -> None:
    circles = [sorted(c) for c in import_circles(import_graph())]
    assert not circles, ("import circles (data must flow one way: move what both sides share "
                         f"into a module below both): {circles}")


def test_the_circle_finder_finds_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert import_circles(graph) == [frozenset({"a", "b", "c"})]
    real = import_graph()
    # a type-only import and a function-level one count as edges
    assert "statewright.runtime.surface" in real["statewright.runtime.forks"]  # TYPE_CHECKING
    assert "statewright.runtime.forks" in real["statewright.runtime.service"]  # in a method
    # a package's module imported by name is an edge to the module, and from outside the
    # package to the package's `__init__` (run first), not from inside it
    assert "statewright.policy.programs.spec" in real["statewright.policy.programs.writers"]
    assert "statewright.policy.programs" not in real["statewright.policy.programs.writers"]
    assert {"statewright.policy.programs", "statewright.policy.programs.spec"} <= real[
        "statewright.policy.shell.walker"]


def test_the_rules_above_see_what_they_check() -> None:
    # the checks would pass vacuously if the walk found nothing
    assert len(_modules()) > 40
    assert LEAN.is_file()
    assert _private_imports(LEAN), "the lean module is where the private imports live"
