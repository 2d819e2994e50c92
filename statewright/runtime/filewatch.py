"""Watching the project with watchdog, for long-running processes (`statewright serve`, later
`ui`): DESIGN sections 3 and 6.

- A file whose project-relative path matches an interrupt of the session's running run fires
  it (or queues it, while another handler is active) as soon as it changes, by whatever means:
  `enforcement.fire_for_files`, the same rule the per-call path uses. What the agent must be
  told is kept as a notice of the run (table `marks`), told with the next result recorded;
  `on_message` is then called (the proxy stops answering before recording).
- A workflow file on the search path that changes is reported (`on_definition`): new runs
  compile the file as it is now, running runs keep the definition they started with, and the
  state answer says the file changed since the run started (`answer.definition_status`).

While it runs, `rt.watching` names its session, whose calls then leave out the per-call
comparison of file marks (`runtime.watch`); other sessions served by the same process (the hook
tool, sub-agents) keep it. Never imported by the hook.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from .service import Runtime

IGNORED_PREFIXES = (".statewright/", ".git/")


class FileWatcher:
    def __init__(self, rt: Runtime, session: str, *,
                 on_message: Callable[[str], None] | None = None,
                 on_definition: Callable[[str], None] | None = None,
                 errlog: Any = None) -> None:
        self.rt = rt
        self.session = session
        self.on_message = on_message
        self.on_definition = on_definition
        self.errlog = errlog if errlog is not None else sys.stderr
        self._observer: Any = None
        self._workflow_dirs: list[str] = []

    def start(self) -> None:
        from watchdog.events import (
            FileClosedEvent,
            FileCreatedEvent,
            FileDeletedEvent,
            FileMovedEvent,
            FileSystemEventHandler,
        )
        from watchdog.observers import Observer

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.event_type in ("opened", "closed_no_write") or event.is_directory:
                    return
                for p in (event.src_path, getattr(event, "dest_path", "")):
                    if p:
                        watcher.changed(os.fsdecode(p))

        self._workflow_dirs = [os.path.realpath(str(d)) for d in self.rt.config.workflow_dirs()]
        roots = [os.path.realpath(self.rt.root_dir)]
        roots += [d for d in self._workflow_dirs if os.path.isdir(d)
                  and not any(d.startswith(r + os.sep) or d == r for r in roots)]
        observer = Observer()
        handler = Handler()
        # A file counts as changed when it is created, deleted, moved, or closed after being
        # written: not on every write. The store's own WAL is written on every commit and never
        # closed by this process, so its writes wake no watcher thread (two per forwarded call,
        # each waking three threads competing for the GIL). A writer that keeps a file open
        # fires when it closes it (at the latest when it exits).
        events: list[Any] = [FileCreatedEvent, FileDeletedEvent, FileMovedEvent, FileClosedEvent]
        for r in roots:
            observer.schedule(handler, r, recursive=True, event_filter=events)
        observer.daemon = True
        observer.start()
        self._observer = observer
        # Changes made before the observer started (the SDK loads for a second or more while
        # the early lane already serves calls, each comparing marks) are found by one last
        # comparison; from here on the observer sees every change.
        self.catch_up()
        self.rt.watching = self.session

    def catch_up(self) -> None:
        """Compare the watched files' marks once, as a decided call does (`look_at_files`)."""
        from .chain import effective_in
        from .enforcement import look_at_files

        rt = self.rt
        if not rt.has_store():
            return
        with rt.store.transaction() as tx:
            eff = effective_in(tx, self.session)
            if eff is None or not eff[1].interrupts:
                return
            told = look_at_files(rt, tx, self.session, eff[0], eff[1], rt.clock())
        if told and self.on_message is not None:
            self.on_message("")

    def stop(self) -> None:
        obs, self._observer = self._observer, None
        self.rt.watching = None
        if obs is not None:
            obs.stop()
            obs.join(timeout=0.05)  # (a daemon thread: an exit never waits for it)

    def changed(self, path: str) -> None:
        """One file changed (created, modified, deleted, moved from or to `path`)."""
        try:
            real = os.path.realpath(path)
            if real.endswith(".json") and os.path.dirname(real) in self._workflow_dirs:
                if self.on_definition is not None:
                    self.on_definition(real)
            root = os.path.realpath(self.rt.root_dir)
            if not real.startswith(root + os.sep):
                return
            rel = real[len(root) + 1:].replace(os.sep, "/")
            if rel.startswith(IGNORED_PREFIXES):
                return
            self._fire(rel)
        except Exception as exc:  # a watcher thread never dies of one bad event
            print(f"statewright: file watcher: {type(exc).__name__}: {exc}", file=self.errlog,
                  flush=True)

    def _fire(self, rel: str) -> None:
        from ..policy.paths import glob_match
        from .chain import effective_in
        from .enforcement import fire_for_files

        rt = self.rt
        if not rt.has_store():
            return
        eff = rt.effective_run(self.session)
        if eff is None or not any(glob_match(i.file_pattern, rel) for i in eff[1].interrupts):
            return  # the common case: no write transaction at all
        messages: list[str] = []
        with rt.store.transaction() as tx:
            eff = effective_in(tx, self.session)
            if eff is None:
                return
            fire_for_files(rt, tx, self.session, eff[1], [rel], rt.clock(), [], messages)
            if messages:
                # told with the next result recorded for the run, whichever front end records
                # it (the hook's PostToolUse, the hook tool, a forwarded call)
                marks, notices = tx.marks(eff[0].run_id)
                tx.put_marks(eff[0].run_id, marks or {}, notices + messages)
        if messages and self.on_message is not None:
            self.on_message("")


def start_watcher(rt: Runtime, session: str, errlog: Any, *,
                  on_message: Callable[[str], None] | None = None) -> FileWatcher | None:
    """A started watcher for a long-running front end (workflow files that change are reported
    on `errlog`); None, said on `errlog`, when the platform cannot watch (the per-call marks of
    `runtime.watch` then remain)."""

    def definition(path: str) -> None:
        print(f"statewright: workflow file {path} changed: new runs use it as it is now; "
              "running runs keep the definition they started with", file=errlog, flush=True)

    watcher = FileWatcher(rt, session, on_message=on_message, on_definition=definition,
                          errlog=errlog)
    try:
        watcher.start()
    except Exception as exc:  # no inotify, too many watches, ...
        print(f"statewright: cannot watch files ({type(exc).__name__}: {exc}); interrupts are "
              "checked around each call instead", file=errlog, flush=True)
        return None
    return watcher
