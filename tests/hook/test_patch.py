"""`statewright.hook.patch`: a `*** Begin Patch` text read as the edits it makes (pure)."""

from __future__ import annotations

import pytest

from statewright.hook.patch import PatchError, patch_edits


def P(body: str) -> str:
    return f"*** Begin Patch\n{body}*** End Patch\n"


def test_every_operation_becomes_the_edit_a_workflow_knows() -> None:
    text = P("*** Add File: src/new.py\n+a = 1\n+b = 2\n"
             "*** Delete File: old.txt\n"
             "*** Update File: app.py\n@@ def f():\n context\n-    return 1\n+    return 2\n"
             "+    # two\n@@\n x\n-y\n*** End of File\n"
             "*** Update File: a.txt\n*** Move to: b.txt\n@@\n-1\n+2\n")
    assert patch_edits(text) == [
        ("Write", {"file_path": "src/new.py", "content": "a = 1\nb = 2\n"}),
        ("Write", {"file_path": "old.txt", "content": ""}),
        ("Edit", {"file_path": "app.py", "old_string": "    return 1\ny\n",
                  "new_string": "    return 2\n    # two\n"}),
        ("Edit", {"file_path": "a.txt", "old_string": "1\n", "new_string": "2\n"}),
        ("Write", {"file_path": "b.txt", "content": ""}),
    ]


@pytest.mark.parametrize("text,why", [
    ("rm -rf .", "must start"),
    (P(""), "changes no file"),
    ("*** Begin Patch\n*** Add File: a\n+x\n", "must start"),  # no end
    (P("*** Add File: a\nx\n"), "must start with +"),
    (P("*** Add File: \n+x\n"), "names no file"),
    (P("*** Update File: a\n@@\n?x\n"), "a line of a hunk"),
    (P("*** Copy File: a\n"), "expected"),
    (None, "not text"),
    ({"patch": "x"}, "not text"),
])
def test_what_is_not_a_patch_is_refused(text, why: str) -> None:
    with pytest.raises(PatchError, match=why):
        patch_edits(text)


def test_surrounding_blank_lines_are_read() -> None:
    assert patch_edits("\n\n" + P("*** Add File: a\n+x\n") + "\n") == [
        ("Write", {"file_path": "a", "content": "x\n"})]
