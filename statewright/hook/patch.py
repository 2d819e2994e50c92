"""A patch in the `*** Begin Patch` form (Codex's `apply_patch`, also offered by Copilot CLI to
some models), read as the edits it makes, so it is judged like every edit (DESIGN section 4:
self-protection, `max_edit_lines`, `max_files_per_state`, interrupts).

Each file operation becomes the call a workflow already knows:

- `*** Add File: P` + `+` lines: `Write` of P with those lines;
- `*** Delete File: P`: `Write` of P with no content (every line of P changes; a protected P
  is refused as any write to it);
- `*** Update File: P` + hunks: `Edit` of P, the lines its hunks remove against the lines they
  add (context lines change nothing and are not counted);
- `*** Move to: Q` after an update: also a `Write` of Q with no content (Q is created; the
  lines moved are P's, counted by the update's hunks).

Text that is not a patch of this form raises `PatchError`: the front end refuses the call
(statewright never lets through an edit it could not read). Pure; stdlib only.
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE, MOVE = "*** Add File: ", "*** Delete File: ", "*** Update File: ", \
    "*** Move to: "
END_OF_FILE = "*** End of File"


class PatchError(ValueError):
    """The text is not a patch statewright can read."""


def patch_edits(text: Any) -> list[tuple[str, dict[str, Any]]]:
    """[(tool name, tool input)] of the edits the patch `text` makes, in order."""
    if not isinstance(text, str):
        raise PatchError("the patch is not text")
    lines = text.strip().splitlines()
    # (a heredoc form `apply_patch <<'EOF' ... EOF` arrives already unwrapped from Codex; a
    # patch with anything before its first line or after its last is not read)
    if not lines or lines[0].strip() != BEGIN or lines[-1].strip() != END:
        raise PatchError(f"a patch must start with `{BEGIN}` and end with `{END}`")
    out: list[tuple[str, dict[str, Any]]] = []
    i, n = 1, len(lines) - 1
    while i < n:
        line = lines[i]
        if line.startswith(ADD):
            path = _path(line, ADD)
            body = []
            i += 1
            while i < n and not lines[i].startswith("*** "):
                if not lines[i].startswith("+"):
                    raise PatchError(f"line {i + 1}: a line of an added file must start with +")
                body.append(lines[i][1:])
                i += 1
            out.append(("Write", {"file_path": path,
                                  "content": "".join(x + "\n" for x in body)}))
        elif line.startswith(DELETE):
            out.append(("Write", {"file_path": _path(line, DELETE), "content": ""}))
            i += 1
        elif line.startswith(UPDATE):
            path = _path(line, UPDATE)
            i += 1
            target = None
            if i < n and lines[i].startswith(MOVE):
                target = _path(lines[i], MOVE)
                i += 1
            old: list[str] = []
            new: list[str] = []
            while i < n and not lines[i].startswith(("*** Add", "*** Delete", "*** Update")):
                cur = lines[i]
                if cur.startswith("-"):
                    old.append(cur[1:])
                elif cur.startswith("+"):
                    new.append(cur[1:])
                elif not (cur.startswith(("@@", " ")) or cur == "" or cur.strip() == END_OF_FILE):
                    raise PatchError(f"line {i + 1}: a line of a hunk must start with ' ', "
                                     "'-', '+' or '@@'")
                i += 1
            out.append(("Edit", {"file_path": path, "old_string": "".join(x + "\n" for x in old),
                                 "new_string": "".join(x + "\n" for x in new)}))
            if target is not None:
                out.append(("Write", {"file_path": target, "content": ""}))
        else:
            raise PatchError(f"line {i + 1}: expected `{ADD.strip()}`, `{DELETE.strip()}` or "
                             f"`{UPDATE.strip()}`, not {line[:80]!r}")
    if not out:
        raise PatchError("the patch changes no file")
    return out


def _path(line: str, head: str) -> str:
    path = line[len(head):].strip()
    if not path:
        raise PatchError(f"`{head.strip()}` names no file")
    return path

