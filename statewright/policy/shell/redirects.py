"""The walk of redirections (for `walker.Walker`): a command's redirections, here-documents,
here-strings, and a statement with redirections (`redirected_statement`).

tree-sitter-bash ends a command at its first redirection after the name and gives every word
after the redirection's target to the redirection: `echo a > f b c` has the destinations `f`,
`b`, `c`, and `cat <<EOF /proc/self/environ` an argument of the here-document. Bash passes
those words to the command (`echo a b c`, `cat /proc/self/environ`): they are walked as its
arguments, after its own. After anything but a simple command (`{ a; } > f b`, which bash
refuses) they are walked and a problem.
"""

from __future__ import annotations

from ...lean import TYPE_CHECKING
from .parser import TYPE_OF, body_of
from .records import new_redirect
from .words import PLAIN_WORDS, WORD_CACHE, WORD_NODES, make_word

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .records import Redirect, Word
    from .walk import Walk

known_word = WORD_CACHE.get
_OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_FD_OPS = frozenset({">&", "<&", ">&-", "<&-"})


def redirect(w: Walk, node: Any, context: str, depth: int,
             extra: list[Any] | None = None) -> Redirect | None:
    """The `Redirect` of a redirection node (None for any other node); `extra`: see
    `file_redirect`."""
    t = TYPE_OF[node.kind_id]
    if t == "file_redirect":
        return file_redirect(w, node, context, depth, extra)
    if t == "herestring_redirect":
        for ch in node.named_children:
            w.node(ch, context, depth)
        return new_redirect("<<<", None, None, False)
    if t == "heredoc_redirect":
        return new_redirect("<<", None, None, False)
    return None


def file_redirect(w: Walk, node: Any, context: str, depth: int,
                  extra: list[Any] | None = None) -> Redirect:
    """A file redirection, recorded among the walk's redirects. `extra`: where the words after
    its target go (the arguments of the command it belongs to); None: no command takes them,
    each a problem."""
    src = w._ascii
    key = src[node.start_byte:node.end_byte] if src is not None and w._clean else None
    if key is not None:
        kept = _PLAIN_REDIRECTS.get(key)
        if kept is not None:  # (what the walk below does for it)
            r, word = kept
            words = w.words
            words.append(word)
            words.append(word)
            w.redirects.append(r)
            return r
    fd = None
    op = ""
    target = None
    plain = False  # its only word is a plain bare word (`_PLAIN_REDIRECTS`)
    for ch in node.children:
        t = TYPE_OF[ch.kind_id]
        if t == "file_descriptor":
            fd = src[ch.start_byte:ch.end_byte] if src is not None else ch.text.decode()
        elif not ch.is_named:
            op = src[ch.start_byte:ch.end_byte] if src is not None else ch.text.decode()
        elif target is None:
            problems = w.problems
            seen = len(problems)
            text = (src[ch.start_byte:ch.end_byte] if src is not None  # (`w.text(ch)`)
                    else ch.text.decode("utf-8", "replace"))
            target = make_word(ch, problems, text, t, src)
            w.words.append(target)
            plain = known_word(text) is target
            if t in PLAIN_WORDS:
                # what `w.node(ch)` does (`_word`): the same word again (made anew only when
                # it added problems, which it then adds again)
                w.words.append(target if len(problems) == seen
                               else make_word(ch, problems, text, t, src))
                if ch.named_child_count:
                    w.children(ch, context, depth)
            else:
                w.node(ch, context, depth)
        elif t == "comment":
            plain = False
        elif extra is not None:
            extra.append(ch)
            plain = False
        else:
            stray(w, ch, context, depth)
            plain = False
    output = op in _OUTPUT_OPS or (op.startswith(">") and op != ">&-")
    if op in _FD_OPS and target is not None and (
            target.value.isdigit() or target.value == "-"):
        output = False  # fd duplication / closing, not a file
    r = new_redirect(op, fd, target, output)
    w.redirects.append(r)
    if plain and key is not None and target is not None:
        if len(_PLAIN_REDIRECTS) >= _PLAIN_MAX:
            _PLAIN_REDIRECTS.clear()
        _PLAIN_REDIRECTS[key] = (r, target)
    return r


#: the `Redirect` of each file redirection to a plain bare word met so far, by its text (`2>&1`,
#: `> out.txt`: in a tree without errors, a `file_redirect` node of that text is the same
#: descriptor, operator and word, a `Redirect` is immutable and shared like a `Word`). Emptied
#: when it holds `_PLAIN_MAX` redirections.
_PLAIN_REDIRECTS: dict[str, tuple[Redirect, Word]] = {}
_PLAIN_MAX = 1024


def stray(w: Walk, node: Any, context: str, depth: int) -> None:
    """A word after a redirection's target that no simple command takes as an argument."""
    w.problems.append(f"`{w.text(node)[:60]}` follows the target of a redirection, where no "
                      "command takes it as an argument")
    w.node(node, context, depth)


def redirected(w: Walk, node: Any, context: str, depth: int, stdin: str) -> None:
    """A statement with redirections: its body walked with them (and with the words after
    their targets as its arguments)."""
    named = node.named_children
    # (the body as the node object of this list, whose children the walk lists:
    # `parser.status_node` answers with that object)
    body = body_of(node, named)
    redirects: list[Redirect] = []
    stdin_kind = stdin
    stdin_text: str | None = None
    later: list[Any] = []
    extra: list[Any] = []
    for ch in named:
        if ch is body:
            continue
        t = TYPE_OF[ch.kind_id]
        if t == "file_redirect":
            r = file_redirect(w, ch, context, depth, extra)
            redirects.append(r)
            if r.op == "<" and stdin_kind == "inherit":
                stdin_kind = "file"
        elif t == "heredoc_redirect":
            stdin_text = heredoc(w, ch, context, depth, redirects, later, extra, stdin_text)
            stdin_kind = "heredoc"
            redirects.append(new_redirect("<<", None, None, False))
        elif t == "herestring_redirect":
            stdin_text = herestring_text(w, ch, stdin_text)
            stdin_kind = "herestring"
            here = redirect(w, ch, context, depth)
            if here is not None:
                redirects.append(here)
        else:
            w.node(ch, context, depth)
    if extra and body is not None and TYPE_OF[body.kind_id] == "command":
        w._command(body, context, depth, stdin_kind, tuple(redirects), stdin_text, extra)
    else:
        if body is not None:
            w.node(body, context, depth, stdin_kind, tuple(redirects), stdin_text)
        for ch in extra:
            stray(w, ch, context, depth)
    for h in later:
        if TYPE_OF[h.kind_id] == "pipeline":
            for p in h.named_children:
                w.node(p, context if context != "top" else "pipeline", depth, stdin="pipe")
        else:
            w.node(h, context, depth, stdin="pipe")


def heredoc(w: Walk, node: Any, context: str, depth: int, redirects: list[Redirect],
            later: list[Any], extra: list[Any], text: str | None) -> str | None:
    """Walk a here-document; returns its text (`text` when it has none). Its arguments (`cat
    <<EOF FILE`) go to `extra`; what hangs off it (`cat <<EOF | sh`: the pipeline) goes to
    `later`, to be walked after the command it feeds."""
    quoted = False
    for h in node.named_children:
        t = TYPE_OF[h.kind_id]
        if t == "heredoc_start":
            quoted = any(q in h.text.decode() for q in "'\"\\")
        elif t == "heredoc_body":
            text = h.text.decode("utf-8", "replace")
            w.node(h, context, depth)
            if not quoted and h.named_children == [] and ("$" in text or "`" in text):
                w.problems.append("unparsed expansion in a here-document")
        elif t in ("file_redirect", "herestring_redirect"):
            r = redirect(w, h, context, depth, extra)
            if r is not None:
                redirects.append(r)
        elif t in WORD_NODES:
            extra.append(h)
        elif t != "heredoc_end":
            later.append(h)
    return text


def herestring_text(w: Walk, node: Any, text: str | None) -> str | None:
    """The literal text a here-string feeds (None if not literal; `text` if none)."""
    for s in node.named_children:
        word = make_word(s, w.problems)
        text = word.value if word.literal else None
    return text
