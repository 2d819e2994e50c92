"""The active-run marker: how the hook knows a run was active when the store is gone
(DESIGN section 4, check 1: "a missing or unreadable store where a run was active is a deny";
the choice is recorded in docs/design-decisions.md, "Escape classes 3-6").

While a session's run is enforced, a small file outside the project names it:
`$XDG_STATE_HOME/statewright/active/<store>@<session>` (else `~/.local/state/...`), holding the
run id. It is written the first time a decision finds the run enforced and removed when a
decision finds the session with no enforced run and the run still in the store. So:

- the store is missing while a marker exists: the store was taken away under a running run;
- the store exists but does not hold the marker's run: it was replaced (deleted and created
  afresh by the next command);

and both are refusals, through `failure_decision` (so `fail_open`, which only a human can set,
is honoured in its one place). The marker directory is protected like statewright's programs
(`protect.store.program_paths`). A human clears a stale marker with `statewright end`, or by
deleting the file the refusal names.

Stdlib only: the hook imports this.
"""

from __future__ import annotations

import os

from ..atomic import write_atomic
from ..config import active_marker_dir as marker_dir
from ..errors import STORE_ERROR, StatewrightError
from ..lean import environ_get

_PATHS: dict[tuple[str, str, object, object], str] = {}  # see `marker_path`


def marker_path(store_file: str, session: str) -> str:
    """The marker's path. Built once per store, session and home (the environment variables
    it depends on are part of the key, read as `os.environ` keeps them): a resident process
    decides call after call."""
    key = (store_file, session, environ_get("XDG_STATE_HOME"), environ_get("HOME"))
    path = _PATHS.get(key)
    if path is None:
        if len(_PATHS) >= 256:
            _PATHS.clear()
        path = _PATHS[key] = _build_marker_path(store_file, session)
    return path


def _build_marker_path(store_file: str, session: str) -> str:
    # (the store's path is built from the resolved project root: no resolving here)
    key = os.path.dirname(store_file).strip(os.sep).replace(os.sep, "%")
    name = f"{key}@{session}".replace(os.sep, "%")
    if len(name) > 200:
        import hashlib

        name = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()
    return os.path.join(marker_dir(), name)


def read_marker(store_file: str, session: str) -> str | None:
    """The run id the marker names, or None when there is none."""
    try:
        with open(marker_path(store_file, session), encoding="utf-8") as fh:
            return fh.read().strip() or "?"
    except FileNotFoundError:
        return None
    except OSError:
        return "?"  # there, but unreadable: count it as there


def ensure_marker(store_file: str, session: str, run_id: str) -> None:
    path = marker_path(store_file, session)
    if os.access(path, os.F_OK):
        # (one system call per decision, `access`, cheaper than `os.path.exists`' stat: no
        # stat result is built; a marker naming an earlier run of the session still says "a
        # run was active", which is all a missing store needs to know)
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomic(path, run_id.encode("utf-8"))
    except OSError:
        pass  # a read-only home: the store's own checks still apply


def clear_marker(store_file: str, session: str) -> None:
    try:
        os.unlink(marker_path(store_file, session))
    except OSError:
        pass


def missing_store(store_file: str, session: str) -> StatewrightError | None:
    """The refusal when the store is missing but this session (or the default session, which
    every session falls back to) had a run enforced."""
    for s in dict.fromkeys((session, "default")):
        run = read_marker(store_file, s)
        if run is not None:
            return StatewrightError(
                STORE_ERROR,
                f"statewright's store ({store_file}) is missing, but run {run} was active for "
                f"session {s!r}: removing or hiding the store never lifts enforcement. A human "
                f"can restore the store, or clear the marker {marker_path(store_file, s)}")
    return None


def replaced_store(store_file: str, session: str, run_known: object) -> StatewrightError | None:
    """The refusal when the marker names a run the store does not hold (`run_known(run_id)`),
    else None; a marker whose run the store holds but no longer enforces is cleared."""
    run = read_marker(store_file, session)
    if run is None:
        return None
    if callable(run_known) and run_known(run):
        clear_marker(store_file, session)
        return None
    return StatewrightError(
        STORE_ERROR,
        f"statewright's store ({store_file}) does not hold run {run}, which was active for "
        f"session {session!r}: the store was replaced. A human can restore it, or clear the "
        f"marker {marker_path(store_file, session)}")
