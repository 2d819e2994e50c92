"""The tree-sitter-bash parser, loaded the first time a line is parsed (never on import), and
the two questions asked of a parse tree before it is walked: does it hold an error, and where.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (not `typing.TYPE_CHECKING`: `typing` costs ~10 ms to import)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

_PARSER: Any = None


def bash_parser() -> Any:
    global _PARSER
    if _PARSER is None:
        parser_cls, language_cls, bash_language = _tree_sitter()
        _PARSER = parser_cls(language_cls(bash_language()))
    return _PARSER


def _tree_sitter() -> tuple[Any, Any, Any]:
    """(`Parser`, `Language`, the Bash grammar's `language()`).

    The packages' `__init__` modules are skipped when they are not imported yet:
    `tree_sitter`'s imports `typing` (~10 ms) and `tree_sitter_bash`'s imports
    `importlib.resources` (~11 ms) for a query file this module never reads, and a hook
    process pays both on every Bash call. Their C extensions (`tree_sitter._binding`,
    `tree_sitter_bash._binding`, which hold everything used here) are loaded directly, from
    the package directories an import would find, and registered under their own names (so
    a later `import tree_sitter` shares them; only the packages' attribute `_binding` is not
    set then, as the import system sets it only when it loads the module itself). Any problem
    falls back to a plain import."""
    try:
        core = _binding("tree_sitter")
        bash = _binding("tree_sitter_bash")
        return core.Parser, core.Language, bash.language
    except Exception:
        import tree_sitter
        import tree_sitter_bash

        return tree_sitter.Parser, tree_sitter.Language, tree_sitter_bash.language


def _binding(package: str) -> Any:
    """The `_binding` extension module of `package`, loaded without the package's `__init__`
    (the imported package's own when it is already imported)."""
    import sys

    name = package + "._binding"
    mod = sys.modules.get(name)
    if mod is not None:
        return mod
    pkg = sys.modules.get(package)
    if pkg is not None:  # imported already: use what it imported
        return getattr(pkg, "_binding", None) or __import__(name, fromlist=["_"])
    import _imp
    import os

    bootstrap = sys.modules["_frozen_importlib"]
    external = sys.modules["_frozen_importlib_external"]
    for entry in sys.path:
        directory = os.path.join(entry or os.getcwd(), package)
        if not os.path.isfile(os.path.join(directory, "__init__.py")):
            continue  # (a zip entry, a namespace package, ...: not this package)
        # the first extension suffix present wins, as in the import system's file finder
        for suffix in _imp.extension_suffixes():
            path = os.path.join(directory, "_binding" + suffix)
            if os.path.isfile(path):
                loader = external.ExtensionFileLoader(name, path)
                spec = bootstrap.ModuleSpec(name, loader, origin=path)
                spec.has_location = True  # (sets `__file__`, as an import would)
                mod = bootstrap.module_from_spec(spec)
                loader.exec_module(mod)
                sys.modules[name] = mod
                return mod
        break  # the package found first has no extension: let the import system decide
    raise ImportError(f"no {name} extension found on sys.path")


def has_missing(node: Any) -> bool:
    if node.is_missing:
        return True
    if not node.has_error:
        # missing nodes also set has_error on ancestors in tree-sitter; cheap early exit
        return False
    return any(has_missing(c) for c in node.children)


def first_error(node: Any) -> str:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            col = n.start_point[1] + 1
            return f"line {n.start_point[0] + 1}, column {col}: " + (
                f"missing {n.type!r}" if n.is_missing else
                f"unexpected {n.text.decode('utf-8', 'replace')[:30]!r}")
        stack.extend(reversed(n.children))
    return "syntax error"

