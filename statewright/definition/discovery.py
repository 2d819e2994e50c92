"""Finding workflows on the search path (`Config.workflow_dirs()`, DESIGN.md section 5).

A workflow's name is its `id`. The first file on the search path with a given id wins; later ones
are reported as duplicates. `find_workflow` and `make_resolver` only parse JSON (stdlib), so
finding a workflow by name stays cheap; `list_workflows` validates every file fully.
"""

from __future__ import annotations

import json

from ..errors import INVALID_WORKFLOW, UNKNOWN_WORKFLOW, StatewrightError
from ..lean import TYPE_CHECKING
from .diagnostics import Diagnostic, error, warning
from .verdicts import read_bytes, recall, remember, verdict_key, verdicts_dir

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any

    from ..config import Config


class WorkflowEntry:
    __slots__ = ("diagnostics", "duplicate_of", "id", "path", "source_dir")

    def __init__(self, id: str | None, path: Path, source_dir: Path,
                 diagnostics: list[Diagnostic] | None = None,
                 duplicate_of: Path | None = None) -> None:
        self.id = id  # None when the file does not say (bad JSON, no string id)
        self.path = path
        self.source_dir = source_dir
        self.diagnostics = [] if diagnostics is None else diagnostics
        # set when an earlier file on the search path has this id
        self.duplicate_of = duplicate_of

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


def _parsed(data: bytes | None) -> Any:
    """A document by plain JSON parsing; None if there is none."""
    try:
        return json.loads(data.decode("utf-8-sig")) if data is not None else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _quick_id(path: Path) -> tuple[str | None, Any]:
    """(id, document) by plain JSON parsing; (None, None) if unreadable."""
    doc = _parsed(read_bytes(path))
    if doc is None:
        return None, None
    wid = doc.get("id") if isinstance(doc, dict) else None
    return (wid if isinstance(wid, str) and wid else None), doc


def _scan(config: Config) -> Iterator[tuple[Path, Path]]:
    for d in config.workflow_dirs():
        for p in workflow_files(d):
            yield d, p


def list_workflows(config: Config, *, validate_files: bool = True) -> list[WorkflowEntry]:
    """Every workflow file on the search path, in search order, each validated (and its verdict
    remembered: `verdicts`)."""
    entries = _entries(config, validate_files, False)
    assert entries is not None
    return entries


def recalled_workflows(config: Config) -> list[WorkflowEntry] | None:
    """`list_workflows` from remembered verdicts alone (no validator loaded), or None as soon as
    a file has none (then `list_workflows` must run)."""
    return _entries(config, True, True)


def _entries(config: Config, validate_files: bool,
             recalled_only: bool) -> list[WorkflowEntry] | None:
    entries: list[WorkflowEntry] = []
    first: dict[str, Path] = {}
    resolver = make_resolver(config) if validate_files else None
    directory = verdicts_dir(config.root_dir)
    for d, p in _scan(config):
        diags: list[Diagnostic] = []
        if resolver is not None:
            found = check_file(p, resolver, directory, recalled_only=recalled_only)
            if found is None:
                return None
            wid, diags = found[1], list(found[2])
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


def check_file(path: Path, resolver: WorkflowResolver, directory: str | None, *,
               recalled_only: bool = False) -> tuple[bool, str | None, list[Diagnostic]] | None:
    """(ok, id, diagnostics) of the workflow file at `path`: validated (and remembered when
    valid, in `directory`), or with `recalled_only` from a remembered verdict alone (None when
    there is none)."""
    data = read_bytes(path)
    doc = _parsed(data)
    key = None
    if data is not None and directory is not None and isinstance(doc, dict):
        key = verdict_key(data, resolver.context(doc))
    if recalled_only:
        wid = doc.get("id") if isinstance(doc, dict) else None
        warns = recall(directory, key) if key is not None and directory is not None else None
        if warns is None or not isinstance(wid, str):
            return None
        return True, wid, warns
    from .pipeline import validate

    if data is None:
        result = validate(path, resolver=resolver)
    else:
        try:
            shown = str(path.resolve())
        except (OSError, RuntimeError, ValueError):
            shown = str(path)
        result = validate(data, resolver=resolver, source_path=shown)
    if key is not None and directory is not None:
        remember(directory, key, result)
    wid = result.compiled.id if result.compiled is not None else _quick_id(path)[0]
    return result.ok, wid, list(result.diagnostics)


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

    def context(self, doc: Any) -> str:
        """What the checks of `doc` can learn from this resolver, as text (part of a verdict's
        key): nothing for a document that invokes no workflow; else which ids exist (and
        whether unreadable files hide others) and what each invokes (for cycles)."""
        if not invoked_ids(doc):
            return ""
        ids = {**dict.fromkeys(self._ids()), **dict.fromkeys(self._extra)}
        return json.dumps({"searched": self._config is not None, "unknown": self._unknown_files,
                           "ids": {i: invoked_ids(self._doc(i)) for i in sorted(ids)}},
                          sort_keys=True)


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
