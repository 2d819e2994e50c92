"""`Walk`: what the walk's helpers (`arith`, `redirects`, `wrappers`) use of the walker that
calls them, as a protocol `walker.Walker` meets. Only the type checker reads it (the helpers
import it under `TYPE_CHECKING`): the helpers then name nothing above them, and the walker
imports them, one way."""

from __future__ import annotations

from typing import Any, Protocol

from .records import Command, Redirect, Word


class Walk(Protocol):
    commands: list[Command]
    redirects: list[Redirect]
    assignments: list[tuple[str, Word]]
    variables: list[str]
    words: list[Word]
    problems: list[str]
    changes_dir: bool
    evaluated: list[tuple[str, str]]
    tainted: set[str]
    _ascii: str | None
    _clean: bool

    def text(self, node: Any) -> str: ...

    def run(self, source: str, context: str, depth: int, parent: int | None = None,
            offset: int = 0) -> None: ...

    def sub(self, parent: int, words: list[Word], start: int, label: str, depth: int) -> None: ...

    def add_inner(self, parent: int, argv: tuple[Word, ...], label: str, offset: int,
                  depth: int) -> None: ...

    def code(self, parent: int, words: list[Word], label: str, offset: int, depth: int) -> None:
        ...

    def children(self, node: Any, context: str, depth: int) -> None: ...

    def node(self, node: Any, context: str, depth: int, stdin: str = "inherit",
             redirects: tuple[Redirect, ...] = (), stdin_text: str | None = None) -> None: ...

    def _expansion(self, node: Any, context: str, depth: int, stdin: str = "inherit") -> None: ...

    def _command(self, node: Any, context: str, depth: int, stdin: str,
                 redirects: tuple[Redirect, ...], stdin_text: str | None,
                 more: list[Any] | None = None) -> None: ...
