"""CLI commands: workflows. (Filled in by its issue; registers its commands on `app` when imported.)"""

from .app import app  # noqa: F401
