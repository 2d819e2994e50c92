"""Names statewright reserves for itself (stdlib only: the hook imports this on every call).

- `PROXY_PREFIXES`: how Claude Code names statewright's own MCP server's tools: from `.mcp.json`
  (`mcp__statewright__...`) and as the server of the `statewright` plugin.
- `RESERVED_SERVERS`: server names the proxy refuses for downstream servers (their forwarded
  tools would be named like statewright's own); a tool name under them is never normalised.
- `OWN_TOOLS`: statewright's own tools, the only ones always allowed (DESIGN section 4).
- `RESERVED_PREFIX`: context keys starting with it are statewright's (stripped from agent data,
  workflow input and forced context); `OBSERVED` is the evidence it records (DESIGN section 3).
- `HOOK_TOOL`: the proxy's tool that answers Claude Code's `mcp_tool` hooks. It is never listed
  to the model, never forwarded, and served only on stdio (the host's own pipe).
- `CONFIG_FILE`, `STATE_DIR`, `STORE_FILE`: the project's config file, the store's directory
  and the store's file in it (DESIGN section 5); self-protection guards them.
  `state_dir_str(root)` is where the store's directory is (`$STATEWRIGHT_HOME` moves it).
- `EVENTS`: the hook events statewright answers, by Claude Code's names, and
  `normalize_event`, how the hook's arguments may spell them; `RESIDENT_ENV`, the switch of
  the resident hook server (every hook process, the forwarding one included, reads them here).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PROXY_PREFIXES = ("mcp__statewright__", "mcp__plugin_statewright_statewright__")
RESERVED_SERVERS = ("statewright", "plugin_statewright_statewright")
OWN_TOOLS = frozenset({"statewright_load_workflow", "statewright_transition",
                       "statewright_get_state", "statewright_list_workflows",
                       "statewright_pause", "statewright_resume", "statewright_fork",
                       "statewright_force_state"})
HOOK_TOOL = "statewright_hook"
#: the process-form hook's native client, installed beside `statewright-hook` where a C compiler
#: built it (`statewright.hook.native`)
NATIVE_HOOK_SCRIPT = "statewright-hook-native"

CONFIG_FILE = "statewright.json"
STATE_DIR = ".statewright"
STORE_FILE = "state.db"
#: the directory in the store's directory where what counts the changes of sandboxed calls is
#: kept (`runtime.effects`), and in it the one holding the scans of calls whose result has not
#: come yet (it exists only while one is there: a result finds nothing to do at one `stat`)
EFFECTS_DIR = "effects"
PENDING_DIR = "pending"
#: where `statewright ui` says, while it runs, at which address the web page is (in the store's
#: directory, beside `STORE_FILE`; never its secret)
PAGE_FILE = "ui.json"

RESERVED_PREFIX = "_"
OBSERVED = "_observed"
#: under `OBSERVED`: a limit of the state that what a call changed went over (found by scanning
#: after a sandboxed call: `runtime.effects`), `{rule, reason, ...}`; cleared on entering a state
OVERRUN = "overrun"
#: the outcomes of the checks statewright ran itself (DESIGN section 2)
CHECKS = "_checks"
#: the fingerprints of the checks' frozen paths, taken when a run starts
FROZEN = "_frozen"
#: host tools that run code in a language statewright cannot analyse: refused in any state
#: that restricts commands or the environment (DESIGN section 4)
CODE_TOOLS = frozenset({"PowerShell"})


def state_dir_str(root: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> str:
    """The store's directory of the project at `root` (here, not in `config`: the hook process
    that hands its input to the resident server needs it and nothing else of the config)."""
    home = (os.environ if environ is None else environ).get("STATEWRIGHT_HOME")
    if home:
        return os.path.realpath(os.path.expanduser(home))
    return os.path.join(os.fspath(root), STATE_DIR)


def run_dir(environ: Mapping[str, str]) -> str:
    """The private directory of this user's resident hook servers (short: a socket's path is
    limited to about 100 bytes). No process of a sandboxed line may change it."""
    base = environ.get("XDG_RUNTIME_DIR") or "/tmp"
    return os.path.join(base, f"statewright-{os.getuid()}")


# -- hook events ---------------------------------------------------------------------------------

PRE_TOOL_USE = "PreToolUse"
POST_TOOL_USE = "PostToolUse"
POST_TOOL_USE_FAILURE = "PostToolUseFailure"
SESSION_START = "SessionStart"
USER_PROMPT_SUBMIT = "UserPromptSubmit"
STOP = "Stop"
EVENTS = (PRE_TOOL_USE, POST_TOOL_USE, POST_TOOL_USE_FAILURE, SESSION_START, USER_PROMPT_SUBMIT,
          STOP)
#: "0" in the hook's environment: every event is decided in the hook process, no resident
#: hook server (`statewright.hook.resident`) is asked or started
RESIDENT_ENV = "STATEWRIGHT_HOOK_RESIDENT"
#: set by the native client (`statewright-hook-native`) when it hands an event to the Python
#: hook (`statewright.hook.native`); set by anyone else, it can only make the hook decide
#: itself, refuse, or print an answer that carries the resident server's MAC
NATIVE_ENV = "STATEWRIGHT_HOOK_NATIVE"
# accepted spellings -> Claude Code's event name ("pre-tool-use", "PreToolUse", "pre_tool_use")
_ALIASES = {e.lower(): e for e in EVENTS}


def normalize_event(name: object) -> str | None:
    """`pre-tool-use` / `PreToolUse` / `pre_tool_use` -> `PreToolUse`; None if unknown."""
    if not isinstance(name, str):
        return None
    return _ALIASES.get(name.replace("-", "").replace("_", "").strip().lower())
