"""Shell command-line analysis with tree-sitter-bash (DESIGN.md section 4, checks 5 and 6).

`analyze(line)` parses a Bash command line and lists every command that would run, wherever it
sits (lists, pipelines, subshells, `$(...)`, backticks, process substitution, if/while/for/case,
function bodies, here-docs and `-c` strings handed to shells, `eval` arguments, the inner
command of wrappers such as `env`, `sudo`, `timeout`, `xargs`, `find -exec`), each with its
unquoted argv, plus redirections, variable expansions and the functions it defines. Anything the
analysis cannot see through is recorded as a problem, and every check fails closed on problems.

`check_commands(analysis, allowed)` and `check_env(analysis, blocked)` turn the analysis into
verdicts. Both are pure; tree-sitter is loaded the first time a line must be parsed.

Modules: `records` (the analysis's records), `words` (unquoting), `parser` (tree-sitter,
loaded lazily), `walker` (the walk: `analyze`), `wrappers` (what wrappers and evaluators run),
`commands` (check 5), `env` (check 6 and the rewritten command). What programs do with their
options (`git -c`, `sort -o`, `printenv`) is `policy.programs`.
"""

from __future__ import annotations

from ..paths import has_surrogate
from .commands import (
    IMPLICIT_COMMANDS,
    check_commands,
    dangerous_assignment,
    match_prefix,
    matching_prefixes,
)
from .env import check_env, rewrite_for_env
from .records import Command, Redirect, ShellAnalysis, Verdict, Word
from .walker import analyze
from .words import decode_ansi_c, literal_word, make_word

__all__ = ["IMPLICIT_COMMANDS", "Command", "Redirect", "ShellAnalysis", "Verdict", "Word",
           "analyze", "check_commands", "check_env", "dangerous_assignment", "decode_ansi_c",
           "has_surrogate", "literal_word", "make_word", "match_prefix", "matching_prefixes",
           "rewrite_for_env"]
