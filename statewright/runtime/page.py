"""Where the web page is (DESIGN section 5, "Web page"), for the messages that point people to
it: `statewright ui` writes its address — never its secret — to `<store dir>/ui.json` when it
starts and removes it when it stops; `statewright status` and the message of a parked
transition read it. The file lives beside the store, so self-protection keeps the agent from
writing it (a forged address could send the human to a page the agent serves).

Stdlib only.
"""

from __future__ import annotations

import json
import os

from ..atomic import write_atomic
from ..names import PAGE_FILE


def page_file(store_dir: str) -> str:
    return os.path.join(store_dir, PAGE_FILE)


def write_address(store_dir: str, url: str) -> str:
    """Say that this process serves the page at `url`; the file's path."""
    os.makedirs(store_dir, exist_ok=True)
    path = page_file(store_dir)
    write_atomic(path, json.dumps({"url": url, "pid": os.getpid()}).encode("utf-8"))
    return path


def remove_address(store_dir: str) -> None:
    """Remove the address file if this process wrote it (another `ui` may have replaced it)."""
    path = page_file(store_dir)
    if _read(path).get("pid") == os.getpid():
        try:
            os.unlink(path)
        except OSError:
            pass


def page_url(store_dir: str) -> str | None:
    """The page's address while a `statewright ui` serves it, else None (a file left behind
    by a process that is gone is ignored)."""
    data = _read(page_file(store_dir))
    url, pid = data.get("url"), data.get("pid")
    if not isinstance(url, str) or not isinstance(pid, int) or not _alive(pid):
        return None
    return url


def _read(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    except OSError:
        return False
    return True
