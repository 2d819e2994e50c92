"""Remembered verdicts: which exact workflow files were valid, so `statewright list` and
`statewright validate` answer without loading the validator (jsonschema, pydantic) when nothing
changed. Stdlib only.

- An entry says one thing: "this exact content, checked by this exact validator in this exact
  context, was valid, with these warnings". Its name is a SHA-256 over the validator's
  fingerprint (statewright's version, the workflow schema's bytes, the size and mtime of the
  validator's modules: `definition/` and the shared modules it uses), the context the checks
  could see (for a document that invokes other workflows: the ids on the search path and what
  each invokes; nothing otherwise) and the file's bytes. A changed byte, a new version or an
  edited validator names another entry.
- Invalid documents are never remembered: their errors are always found afresh, every one.
- Entries live in the store's directory (`<store>/validated/`), which self-protection keeps the
  agent from writing, and are written only where that directory exists already (a read-only
  command never creates a store). An entry that does not read as a list of warnings counts as
  missing.
- Only `list` and `validate` read them, to print. Nothing that loads a workflow to run or
  enforce it (`start`, the hook, the proxy) reads this cache: a forged entry can at most make
  those two commands print "ok" for a file that `start` would then refuse.
"""

from __future__ import annotations

import hashlib
import json
import os

from ..atomic import write_atomic
from ..lean import TYPE_CHECKING
from ..names import state_dir_str
from .diagnostics import WARNING, Diagnostic

if TYPE_CHECKING:
    from pathlib import Path

    from .diagnostics import ValidationResult

VERDICTS_DIR = "validated"
#: at most this many entries are kept; writing one more empties the folder first
MAX_ENTRIES = 2000
_DIAG_KEYS = ("severity", "pointer", "message", "code")
_fingerprint: list[bytes] = []


def validator_fingerprint() -> bytes:
    """What the verdicts depend on besides the document: statewright's version, the schema's
    bytes and the validator's modules (size and mtime: an edited checkout counts as another
    version)."""
    if _fingerprint:
        return _fingerprint[0]
    from .. import __version__
    from ..config import schema_path

    h = hashlib.sha256(f"statewright {__version__}\0".encode())
    try:
        h.update(schema_path().read_bytes())
    except OSError:
        h.update(b"\0no schema\0")
    here = os.path.dirname(os.path.abspath(__file__))
    modules = [os.path.join(here, n) for n in sorted(os.listdir(here)) if n.endswith(".py")]
    top = os.path.dirname(here)  # (the validator's modules outside `definition/`)
    modules += [os.path.join(top, n)
                for n in ("wildcards.py", "lean.py", "errors.py", "config.py")]
    for m in modules:
        try:
            st = os.stat(m)
            h.update(f"{os.path.basename(m)}:{st.st_size}:{st.st_mtime_ns}\0".encode())
        except OSError:
            h.update(f"{m}:missing\0".encode())
    _fingerprint.append(h.digest())
    return _fingerprint[0]


def verdict_key(content: bytes, context: str) -> str:
    h = hashlib.sha256(validator_fingerprint())
    h.update(hashlib.sha256(context.encode("utf-8", "surrogatepass")).digest())
    h.update(content)
    return h.hexdigest()


def verdicts_dir(root: str | os.PathLike[str]) -> str:
    return os.path.join(state_dir_str(root), VERDICTS_DIR)


def recall(directory: str, key: str) -> list[Diagnostic] | None:
    """The warnings of a remembered valid document, or None (not remembered, or an entry that
    is not a list of warnings)."""
    try:
        with open(os.path.join(directory, key), "rb") as f:
            body = json.loads(f.read(1 << 20))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(body, list):
        return None
    out = []
    for d in body:
        if not (isinstance(d, dict) and tuple(d) == _DIAG_KEYS
                and all(isinstance(v, str) for v in d.values()) and d["severity"] == WARNING):
            return None
        out.append(Diagnostic(WARNING, d["pointer"], d["message"], d["code"]))
    return out


def remember(directory: str, key: str, result: ValidationResult) -> None:
    """Keep the verdict on a valid document (nothing for an invalid one), if the store's
    directory exists; best effort (a cache that cannot be written is no error)."""
    if not result.ok or any(d.severity != WARNING for d in result.diagnostics):
        return
    if not os.path.isdir(os.path.dirname(directory)):
        return
    try:
        os.makedirs(directory, exist_ok=True)
        names = os.listdir(directory)
        if len(names) >= MAX_ENTRIES:
            for n in names:
                os.unlink(os.path.join(directory, n))
        write_atomic(os.path.join(directory, key),
                     json.dumps([d.to_dict() for d in result.diagnostics]).encode("utf-8"))
    except OSError:
        pass


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (OSError, ValueError):
        return None
