"""Text an agent wrote, made safe to show where a human decides (stdlib only).

Transition data, approval messages, reasons and event data come from the agent. Shown raw,
bidirectional overrides (U+202E reverses what follows), isolates, zero-width characters and
other invisible format or control characters can make "deploy to production" read as something
else on the approval card, in `statewright status` or in `history --details`. `visible(text)`
writes each such character as a visible `<U+202E>` mark, so what a human reads is what is there.
Line breaks and tabs are kept (they are visible); everything else of Unicode's categories Cc
(controls), Cf (format: bidi controls, zero-width joiners, BOM, ...), Co (private use), Cs
(surrogates), Zl/Zp (line and paragraph separators) and the unassigned Cn is marked.
"""

from __future__ import annotations

_KEEP = frozenset("\n\t")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})


def is_hidden(ch: str) -> bool:
    """A character that does not show itself on a terminal or a page (see the module)."""
    if ch in _KEEP:
        return False
    if " " <= ch <= "~":
        return False
    from unicodedata import category

    return category(ch) in _HIDDEN_CATEGORIES


def visible(text: str) -> str:
    """`text` with every hidden character written as `<U+XXXX>`."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(f"<U+{ord(c):04X}>" if is_hidden(c) else c for c in text)


def visible_data(value: object) -> object:
    """`visible` applied to every string (keys included) of a JSON value."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible(k) if isinstance(k, str) else k: visible_data(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [visible_data(v) for v in value]
    return value
