"""`Runtime` as the runtime's helper modules see it: the part of `service.Runtime` they use
(its project, clock, config and store, and the few methods they call back), as a protocol the
class meets. Only the type checker reads it (the helpers import it under `TYPE_CHECKING`):
`service` imports its helpers, and they name nothing above them, one way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..config import Config
from ..definition.compiled import CompiledWorkflow
from ..engine.run import Run
from ..store import Store, Tx


class Runtime(Protocol):
    root_dir: str
    config: Config
    clock: Callable[[], float]
    store_url: str | None
    watching: str | None
    gate_facts: Any
    _timeouts_seen: int | None

    @property
    def store_dir(self) -> str: ...

    @property
    def store_file(self) -> str: ...

    @property
    def store(self) -> Store: ...

    def has_store(self) -> bool: ...

    def require_store(self, session: str, code: str = ...) -> None: ...

    def protected_files(self) -> set[str]: ...

    def effective_run(self, session: str | None) -> tuple[Run, CompiledWorkflow] | None: ...

    def get_state(self, session: str | None = None) -> dict[str, Any]: ...

    def load_definition(self, name: str) -> CompiledWorkflow: ...

    def fire_interrupt_in(self, tx: Tx, session: str, relpath: str,
                          now: float) -> dict[str, Any] | None: ...

    def _decide_where(self, message: str, run_id: str) -> str: ...
