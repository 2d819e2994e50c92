"""Shell words: unquoting (bare, single-, double-quoted and `$'...'` words), and the `Word`
record of a parse-tree node: its value, the fnmatch pattern of what it could expand to, and
whether it is fixed text."""

from __future__ import annotations

from ...lean import TYPE_CHECKING, LazyRe
from ..types import escape_pattern, literal_word, new_word
from .parser import TYPE_OF
from .records import Word

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

#: the kinds of node that are one shell word whose nested nodes are its parts
PLAIN_WORDS = frozenset({"word", "concatenation", "string", "raw_string", "ansi_c_string",
                         "number", "translated_string"})
#: the kinds of node that are one shell word
WORD_NODES = frozenset({*PLAIN_WORDS, "simple_expansion", "expansion", "command_substitution",
                        "process_substitution", "arithmetic_expansion", "brace_expression"})
_GLOB_CHARS = set("*?[")
_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}
_BRACE_RE = LazyRe(r"\{[^{}]*(,|\.\.)[^{}]*\}")


def decode_ansi_c(body: str) -> str:
    """Decode the body of a `$'...'` string as bash does."""
    import re  # (only a `$'...'` word needs it: a hook process rarely imports `re`)

    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = body[i + 1]
        if d in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[d])
            i += 2
        elif d == "x":
            m = re.match(r"[0-9A-Fa-f]{1,2}", body[i + 2:])
            if m:
                out.append(chr(int(m.group(), 16)))
                i += 2 + len(m.group())
            else:
                out.append("\\x")
                i += 2
        elif d in "uU":
            digits = 4 if d == "u" else 8
            m = re.match(rf"[0-9A-Fa-f]{{1,{digits}}}", body[i + 2:])
            if m:
                try:
                    out.append(chr(int(m.group(), 16)))
                except ValueError:
                    out.append("?")
                i += 2 + len(m.group())
            else:
                out.append("\\" + d)
                i += 2
        elif d in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            assert m is not None
            out.append(chr(int(m.group(), 8) & 0xFF))
            i += 1 + len(m.group())
        elif d == "c" and i + 2 < n:
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + d)
            i += 2
    return "".join(out)


def _unescape_unquoted(text: str) -> tuple[str, str, bool]:
    """Unquote a bare word: returns (value, fnmatch pattern, has unquoted glob)."""
    if "\\" not in text:  # nothing escaped: the text is its own value and pattern
        return text, text, ("*" in text or "?" in text or "[" in text)
    val: list[str] = []
    pat: list[str] = []
    glob = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            d = text[i + 1]
            i += 2
            if d == "\n":
                continue
            val.append(d)
            pat.append("[" + d + "]" if d in "*?[]" else d)
            continue
        if c in _GLOB_CHARS:
            glob = True
        val.append(c)
        pat.append(c)
        i += 1
    return "".join(val), "".join(pat), glob


def _unescape_double(text: str) -> str:
    # inside "...", backslash only escapes $ ` " \ and newline
    if "\\" not in text:
        return text
    import re  # (only a double-quoted text with a backslash needs it)

    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


#: the kinds of node whose parts are their (unquoted) text
_TEXT_PARTS = frozenset({"word", "number", "extglob_pattern", "regex", "special_character",
                         "test_operator", "file_descriptor", "heredoc_start", "variable_name"})


class _W:
    """A word being assembled from its parts (see `Word`; made by `make_word`)."""

    __slots__ = ("dynamic", "glob", "literal", "pat", "val")
    val: list[str]
    pat: list[str]
    literal: bool
    dynamic: bool
    glob: bool


_new_w = object.__new__


def _word_parts(node: Any, w: _W, problems: list[str], text: str | None = None,
                src: str | None = None) -> None:
    """Add the parts of `node` to `w`. `text`: the node's text if known; `src`: the text the
    tree was parsed from when it is ASCII (a node's text is then a slice of it)."""
    t = TYPE_OF[node.kind_id]  # (`node.type`: see `parser.TYPE_OF`)
    if t in _TEXT_PARTS:
        if text is None:
            text = (src[node.start_byte:node.end_byte] if src is not None
                    else node.text.decode("utf-8", "replace"))
        if "`" in text.replace("\\`", "") or "$(" in text:
            problems.append(f"a command substitution the parser kept as text: {text!r}")
            w.literal = False
            w.dynamic = True
        val, pat, glob = _unescape_unquoted(text)
        if glob and t != "variable_name":
            w.glob = True
            w.literal = False
        if t == "word" and "{" in text and _BRACE_RE.search(text):
            w.literal = False
            w.glob = True
            pat = pat.replace("{", "*").replace("}", "*")
        w.val.append(val)
        w.pat.append(pat)
    elif t == "raw_string":
        if text is None:
            text = (src[node.start_byte:node.end_byte] if src is not None
                    else node.text.decode("utf-8", "replace"))
        body = text[1:-1]
        w.val.append(body)
        w.pat.append(escape_pattern(body))
    elif t == "ansi_c_string":
        if text is None:
            text = (src[node.start_byte:node.end_byte] if src is not None
                    else node.text.decode("utf-8", "replace"))
        body = decode_ansi_c(text[2:-1])
        w.val.append(body)
        w.pat.append(escape_pattern(body))
    elif t in ("string", "translated_string"):
        for ch in node.named_children:
            if TYPE_OF[ch.kind_id] == "string_content":
                s = _unescape_double(src[ch.start_byte:ch.end_byte] if src is not None
                                     else ch.text.decode("utf-8", "replace"))
                w.val.append(s)
                w.pat.append(escape_pattern(s))
            else:
                _word_parts(ch, w, problems, None, src)
    elif t == "concatenation":
        for ch in node.children:
            if ch.is_named:
                _word_parts(ch, w, problems, None, src)
            else:
                s = (src[ch.start_byte:ch.end_byte] if src is not None
                     else ch.text.decode("utf-8", "replace"))
                w.val.append(s)
                w.pat.append(escape_pattern(s))
    elif t == "brace_expression":
        w.literal = False
        w.glob = True
        w.pat.append("*")
    else:  # expansions, substitutions, arithmetic, arrays: value unknown
        w.literal = False
        w.dynamic = True
        w.pat.append("*")


#: the characters a plain bare word holds none of (nothing to unquote, expand or glob)
_NOT_PLAIN = frozenset("\\*?[]{}$`~")


#: the `Word` of each plain bare word (or number of decimal digits) met so far (text -> Word):
#: `make_word`'s common case is a pure function of the text and a `Word` is immutable, so one
#: is shared by every line that holds the word; a long-running process (the resident hook
#: server, the proxy) meets `git`, `-q`, `tests/`, the `1` of `2>&1` again and again. Emptied
#: when it holds `_PLAIN_MAX` words. A word is kept the second time it is met (`_MET`: the
#: words met once; `tests/u7` in one line would fill it with words no other line holds).
WORD_CACHE: dict[str, Word] = {}
_MET: set[str] = set()
_PLAIN_MAX = 4096
_plain = _NOT_PLAIN.isdisjoint


def make_word(node: Any, problems: list[str], text: str | None = None, t: str | None = None,
              src: str | None = None) -> Word:
    """The `Word` of a parse-tree node; what the analysis cannot see through goes to
    `problems`. `text`, `t`: the node's text and type when the caller has them already; `src`:
    the text the tree was parsed from, when it is ASCII (its parts' texts are slices of it)."""
    if t is None:
        t = TYPE_OF[node.kind_id]
    if text is None:
        text = node.text.decode("utf-8", "replace")
    if t == "word" or (t == "number" and text.isascii() and text.isdigit()):
        # (a number of decimal digits, such as the `1` of `2>&1`, is the word of its text)
        known = WORD_CACHE.get(text)
        if known is not None:
            return known
        if text and _plain(text):
            # the common case: a bare word with nothing to unquote, expand or glob
            if text not in _MET:  # (shared from its second line on: `tests/u7` is met once)
                if len(_MET) >= _PLAIN_MAX:
                    _MET.clear()
                _MET.add(text)
                return new_word(text, text, text, True)
            if len(WORD_CACHE) >= _PLAIN_MAX:
                WORD_CACHE.clear()
            known = WORD_CACHE[text] = new_word(text, text, text, True)
            return known
    w = _new_w(_W)  # (`_W()`, without a call of `__init__`)
    w.val, w.pat, w.literal, w.dynamic, w.glob = [], [], True, False, False
    _word_parts(node, w, problems, text, src)
    tilde = (t == "word" or t == "concatenation") and text.startswith("~")
    pat = "".join(w.pat)
    if t == "concatenation" and "{" in text and _brace_expands(node, src):
        # (the grammar reads `a{b,c}` as plain text: bash makes it `ab ac`)
        w.literal, w.glob = False, True
        while True:
            braced, pat = pat, _BRACE_GROUP_RE.get().sub("*", pat)
            if pat == braced:
                break
    return new_word(text, "".join(w.val), pat, w.literal and not tilde, w.dynamic, w.glob,
                    tilde)


_BRACE_GROUP_RE = LazyRe(r"\{[^{}]*\}")


def _brace_expands(node: Any, src: str | None) -> bool:
    """Whether bash brace-expands the concatenation `node`: an unquoted, unescaped `{` closed
    by a `}` with an unquoted `,` or `..` between them (quoted and expanded parts hold none)."""
    open_groups: list[bool] = []  # per `{` still open: a separator seen inside it
    for ch in node.children:
        if ch.is_named and TYPE_OF[ch.kind_id] != "word":
            continue
        s = src[ch.start_byte:ch.end_byte] if src is not None else \
            ch.text.decode("utf-8", "replace")
        i = 0
        while i < len(s):
            c = s[i]
            if c == "\\":
                i += 1
            elif c == "{":
                open_groups.append(False)
            elif open_groups and (c == "," or s.startswith("..", i)):
                open_groups[-1] = True
            elif c == "}" and open_groups and open_groups.pop():
                return True
            i += 1
    return False


def part_word(w: Word, value: str) -> Word:
    """The word for `value`, a part of word `w` (`out.txt` of `--output=out.txt`)."""
    if w.literal:
        return literal_word(value)
    return new_word(w.text, value, "*", False, w.dynamic, w.glob)
