"""CLI commands: hook_cmd. (Filled in by its issue; registers its commands on `app` when imported.)"""

from .app import app  # noqa: F401
