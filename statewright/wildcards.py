"""Tool-name wildcards (`allowed_tools`, `disallowed_tools`): one matcher, for enforcement
(`policy.tools`) and for the definition's warnings (`definition.semantic`).

`*` matches any run of characters and `?` one character (tool names have no path structure);
neither matches a line break. Anything else is literal. Stdlib only, `re` imported on first
use of a wildcard (the hook imports this on every call).
"""

from __future__ import annotations

from .lean import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import re

_COMPILED: dict[str, re.Pattern[str]] = {}


def name_matches(entry: str, name: str) -> bool:
    """Whether tool `name` is matched by the `allowed_tools` / `disallowed_tools` entry."""
    if "*" not in entry and "?" not in entry:
        return entry == name
    rx = _COMPILED.get(entry)
    if rx is None:
        import re

        rx = re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c)
                                for c in entry) + r"\Z")
        if len(_COMPILED) >= 1024:
            _COMPILED.clear()
        _COMPILED[entry] = rx
    return rx.match(name) is not None
