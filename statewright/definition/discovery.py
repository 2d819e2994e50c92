"""Finding workflows on the search path (`Config.workflow_dirs()`, DESIGN.md section 5).

A workflow's name is its `id`. The first file on the search path with a given id wins; later ones
are reported as duplicates. `find_workflow` and `make_resolver` only parse JSON (stdlib), so
finding a workflow by name stays cheap; `list_workflows` validates every file fully.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import INVALID_WORKFLOW, UNKNOWN_WORKFLOW, StatewrightError
from .diagnostics import Diagnostic, error, warning

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Config


@dataclass
class WorkflowEntry:
    id: str | None  # None when the file does not say (bad JSON, no string id)
    path: Path
    source_dir: Path
    diagnostics: list[Diagnostic] = field(default_factory=list)
    duplicate_of: Path | None = None  # set when an earlier file on the search path has this id

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)

    @property
    def active(self) -> bool:
        """The file that `find_workflow(id)` returns."""
        return self.id is not None and self.duplicate_of is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "path": str(self.path), "source_dir": str(self.source_dir),
            "ok": self.ok, "duplicate_of": str(self.duplicate_of) if self.duplicate_of else None,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


def workflow_files(directory: Path) -> list[Path]:
    """The `*.json` files directly in `directory`, sorted by name (missing dir: none)."""
    try:
        return sorted((p for p in directory.iterdir() if p.suffix == ".json" and p.is_file()),
                      key=lambda p: p.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError:
        return []


def _quick_id(path: Path) -> tuple[str | None, Any]:
    """(id, document) by plain JSON parsing; (None, None) if unreadable."""
    try:
        doc = json.loads(path.read_bytes().decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None, None
    wid = doc.get("id") if isinstance(doc, dict) else None
    return (wid if isinstance(wid, str) and wid else None), doc


def _scan(config: Config) -> Iterator[tuple[Path, Path]]:
    for d in config.workflow_dirs():
        for p in workflow_files(d):
            yield d, p


def list_workflows(config: Config, *, validate_files: bool = True) -> list[WorkflowEntry]:
    """Every workflow file on the search path, in search order, each validated."""
    entries: list[WorkflowEntry] = []
    first: dict[str, Path] = {}
    resolver = make_resolver(config) if validate_files else None
    for d, p in _scan(config):
        diags: list[Diagnostic] = []
        if validate_files:
            from .pipeline import validate

            result = validate(p, resolver=resolver)
            diags = list(result.diagnostics)
            wid = result.compiled.id if result.compiled is not None else _quick_id(p)[0]
        else:
            wid = _quick_id(p)[0]
            if wid is None:
                diags.append(error("", "invalid-json",
                                   "not a workflow: unreadable JSON or no 'id'"))
        entry = WorkflowEntry(wid, p, d, diags)
        if wid is not None:
            if wid in first:
                entry.duplicate_of = first[wid]
                entry.diagnostics.append(warning(
                    "/id", "duplicate-id",
                    f"workflow id {wid!r} is also defined by {first[wid]}, which comes first on "
                    "the search path and wins"))
            else:
                first[wid] = p
        entries.append(entry)
    return entries


def find_workflow(name: str, config: Config) -> Path:
    """The file defining workflow `name` (its `id`); the first on the search path wins."""
    broken: list[Path] = []
    ids: dict[str, Path] = {}
    for _, p in _scan(config):
        wid, _doc = _quick_id(p)
        if wid is None:
            broken.append(p)
        elif wid not in ids:
            ids[wid] = p
    if name in ids:
        return ids[name]
    for p in broken:  # `statewright start x` with a broken x.json: say what is wrong with it
        if p.stem == name:
            raise StatewrightError(INVALID_WORKFLOW,
                                   f"workflow {name!r}: {p} is not a readable workflow "
                                   "(invalid JSON or no 'id')")
    known = ", ".join(sorted(ids)) or "none"
    dirs = ", ".join(str(d) for d in config.workflow_dirs())
    raise StatewrightError(UNKNOWN_WORKFLOW,
                           f"no workflow named {name!r}; known workflows: {known} "
                           f"(searched: {dirs})")


class WorkflowResolver:
    """Answers "does workflow `name` exist?" for the `invoke` check, and which ids it invokes.

    Extra documents (e.g. the files being validated together) count as found too.
    """

    def __init__(self, config: Config | None = None, extra: dict[str, Any] | None = None) -> None:
        self._config = config
        self._extra = dict(extra or {})  # id -> raw document
        self._index: dict[str, Path] | None = None
        self._unknown_files = False

    def _ids(self) -> dict[str, Path]:
        if self._index is None:
            self._index = {}
            if self._config is not None:
                for _, p in _scan(self._config):
                    wid, _doc = _quick_id(p)
                    if wid is None:
                        self._unknown_files = True
                    elif wid not in self._index:
                        self._index[wid] = p
        return self._index

    def __call__(self, name: str) -> bool | None:
        if name in self._extra or name in self._ids():
            return True
        if self._config is None:
            return None
        return None if self._unknown_files else False

    def _doc(self, name: str) -> Any:
        if name in self._extra:
            return self._extra[name]
        p = self._ids().get(name)
        return _quick_id(p)[1] if p is not None else None

    def invokes(self, name: str) -> list[str]:
        return invoked_ids(self._doc(name))


def invoked_ids(doc: Any) -> list[str]:
    """The workflow ids a raw document invokes (best effort, no validation)."""
    out: list[str] = []
    states = doc.get("states") if isinstance(doc, dict) else None
    if not isinstance(states, dict):
        return out
    for st in states.values():
        on = st.get("on") if isinstance(st, dict) else None
        if not isinstance(on, dict):
            continue
        for t in on.values():
            if isinstance(t, dict) and isinstance(t.get("invoke"), str):
                out.append(t["invoke"])
    return out


def make_resolver(config: Config | None, extra: dict[str, Any] | None = None) -> WorkflowResolver:
    return WorkflowResolver(config, extra)
