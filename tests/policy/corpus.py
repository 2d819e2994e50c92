"""The shell corpora as data, for this package's tests and the hook/proxy end-to-end tests.

    from tests.policy.corpus import attacks, legit, REALISTIC_STATE
"""

from __future__ import annotations

from pathlib import Path

from statewright.definition.compiled import State

HERE = Path(__file__).resolve().parent

ALLOWED_COMMANDS = ("pytest", "npm test", "git status", "git diff", "ls", "cat", "echo")
BLOCKED_ENV = ("AWS_SECRET_ACCESS_KEY", "PROD_DB_URL")
REALISTIC_STATE = State(name="implement", allowed_commands=ALLOWED_COMMANDS,
                        blocked_env=BLOCKED_ENV)


def load(name: str) -> list[str]:
    """Command lines of a corpus file: one per line, `<NL>` = newline, `#` lines are comments."""
    out = []
    for line in (HERE / name).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        out.append(line.replace("<NL>", "\n"))
    return out


def sections(name: str) -> dict[str, list[str]]:
    """The corpus split at `# --- <section>` lines."""
    out: dict[str, list[str]] = {}
    cur = ""
    for line in (HERE / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("# --- "):
            cur = line[6:].strip()
            continue
        if not line.strip() or line.startswith("#"):
            continue
        out.setdefault(cur, []).append(line.replace("<NL>", "\n"))
    return out


def attacks() -> list[str]:
    return load("attacks.txt")


def legit() -> list[str]:
    return load("legit.txt")
