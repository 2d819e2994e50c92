"""The house rules of DESIGN section 1 that a machine can check.

- No module under `statewright/` is over 600 lines: a room that grows past that is split by
  what it owns.
- No function is over 80 lines unless a comment right above it (`# long: <why>`) says why.
- Private modules (`_name`) of the standard library or of other packages are imported only by
  `statewright/lean.py`, the one home of the process hook's start-up tricks.
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


def test_the_rules_above_see_what_they_check() -> None:
    # the checks would pass vacuously if the walk found nothing
    assert len(_modules()) > 40
    assert LEAN.is_file()
    assert _private_imports(LEAN), "the lean module is where the private imports live"
