"""The documentation stands alone and says what a newcomer needs: its own design document,
no pointer outside the repository, no words about how the work was organised, a README whose
tour can be followed as written (its workflows validate with the installed `statewright`)."""

from __future__ import annotations

import json
import re
import subprocess

from tests.conftest import REPO, bin_path, clean_env

DOCS = sorted((REPO / "docs").glob("*.md"))
README = REPO / "README.md"


def _texts() -> dict[str, str]:
    return {str(p.relative_to(REPO)): p.read_text() for p in [README, *DOCS]}


def test_the_project_carries_its_own_design_document():
    design = (REPO / "docs" / "design.md").read_text()
    for n in range(1, 10):
        assert re.search(rf"^## {n}\. ", design, re.M), n
    assert "docs/design.md" in README.read_text()


def test_no_document_points_outside_the_repository():
    for name, text in _texts().items():
        assert "shared/" not in text and "DESIGN.md" not in text, name
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            base = README.parent if name == "README.md" else REPO / "docs"
            assert (base / target).exists(), (name, target)


def test_figures_and_choices_are_not_dated_by_internal_work_rounds():
    pattern = re.compile(r"\b(session \d+|round \d+|issue \d+|[Ii]ssue \d+'s)\b|"
                         r"'s tree\b|before the review's")
    for name, text in _texts().items():
        assert not pattern.search(text), (name, pattern.search(text).group(0))


def test_readme_tour_is_numbered_once_and_lists_every_command():
    text = README.read_text()
    numbers = re.findall(r"^### (\d+)\. ", text, re.M)
    assert numbers == [str(i) for i in range(1, len(numbers) + 1)], numbers
    from statewright.cli.commands import command_names

    table = text[text.index("### CLI"):text.index("### Locations")]
    for name in command_names():
        assert f"`{name}" in table, name
    assert ".claude-plugin" in text
    assert "--no-deps" in text and "~/.statewright " not in text and "venv ~/.statewright" not in text
    assert "chromium" in text.lower() and "Node 22" in text and "GB" in text


def test_readme_workflows_are_saved_somewhere_and_validate(tmp_path):
    text = README.read_text()
    saved = re.findall(r"Save (?:this one|this) as `(workflows/[\w.-]+\.json)`", text)
    docs = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", text, re.S)
            if '"states"' in b]
    assert len(saved) == len(docs) >= 2
    (tmp_path / "workflows").mkdir()
    for path, doc in zip(saved, docs, strict=True):
        assert path == f"workflows/{doc['id']}.json"
        (tmp_path / path).write_text(json.dumps(doc))
    p = subprocess.run([bin_path("statewright"), "validate", "--strict", "workflows"],
                       cwd=tmp_path, capture_output=True, text=True, env=clean_env(),
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    gate = next(d for d in docs if d.get("meta", {}).get("approval_mode") == "ui")
    assert any(isinstance(t, dict) and t.get("requires_approval")
               for st in gate["states"].values() for t in (st.get("on") or {}).values())
