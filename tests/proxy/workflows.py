"""Workflows the proxy tests run (written into each test project)."""

GOV = {
    "id": "gov",
    # the tests start each case fresh by pausing as the agent: this workflow lets the agent pause
    "meta": {"allow_agent_pause": True},
    "initial": "read_only",
    "guards": {"tests_green": {"field": "tests", "op": "eq", "value": "green"}},
    "states": {
        "read_only": {
            "instructions": "Look around.",
            "allowed_tools": ["mcp__fs__read_text_file", "mcp__fs__list_directory", "mcp__every__echo"],
            "max_iterations": 3,
            "on": {"NEXT": "edit", "SHIP": {"target": "done", "guard": "tests_green"}},
        },
        "edit": {
            "allowed_tools": ["mcp__fs__*", "mcp__git__*"],
            "disallowed_tools": ["mcp__fs__move_file"],
            "max_edit_lines": 5,
            "max_files_per_state": 2,
            "on": {"BUDGET": "budget", "BACK": "read_only"},
        },
        "budget": {
            "allowed_tools": ["mcp__every__*"],
            "context_budget_bytes": 300,
            "on": {"DONE": "done"},
        },
        "handler": {
            "instructions": "A secret file changed: check it, then fire OK.",
            "allowed_tools": ["mcp__fs__read_text_file"],
            "on": {"OK": "$return"},
        },
        "done": {"type": "final"},
    },
    "interrupts": {"secrets": {"trigger": {"file_pattern": "secrets/**"}, "target": "handler"}},
}

DEBUG = {
    "id": "dbg",
    "meta": {"debug": True},
    "initial": "one",
    "states": {
        "one": {"allowed_tools": [], "on": {"GO": "two"}},
        "two": {"allowed_tools": ["mcp__every__echo"], "on": {"END": "end"}},
        "end": {"type": "final"},
    },
}

SIMPLE = {
    "id": "simple",
    "initial": "look",
    "states": {
        "look": {"allowed_tools": ["mcp__fs__read_text_file", "mcp__fs__list_allowed_directories"],
                 "on": {"NEXT": "write"}},
        "write": {"allowed_tools": ["mcp__fs__*"], "on": {"DONE": "end"}},
        "end": {"type": "final"},
    },
}

RESOURCES = {
    "id": "res",
    "meta": {"allow_agent_pause": True},
    "initial": "read",
    "states": {
        # resource reads of server `files` are judged as its tool `resources/read`
        "read": {"allowed_tools": ["mcp__files__resources/read", "mcp__every__*"],
                 "on": {"CLOSE": "closed"}},
        "closed": {"allowed_tools": ["mcp__every__*"], "on": {"END": "end"}},
        "end": {"type": "final"},
    },
}
