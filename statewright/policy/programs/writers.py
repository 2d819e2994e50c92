"""Programs that write files named in their arguments: by an option (`sort -o F`,
`curl -o F`, `--output=F`), as plain arguments (`tee F`, `touch F`), or by an operand (`dd
of=F`). What they name is checked like an output redirect (inside the project, not into
`.git/`, `.claude/`, the store or a protected file)."""

from __future__ import annotations

from ...lean import TYPE_CHECKING
from .spec import ANY_PROGRAM_OUTPUTS, Example, Program

if TYPE_CHECKING:  # pragma: no cover
    from .spec import WriteRule

ANY_PROGRAM = Program(
    (), "any program: long options that name a file it writes",
    long_output_options=ANY_PROGRAM_OUTPUTS,
    examples=(
        Example("pytest --basetemp=tmp", writes=("tmp",)),
        Example("pytest --junitxml report.xml -q", writes=("report.xml",)),
        Example("pytest --cov-report=html:cov_html", writes=("cov_html",)),
        Example("make --debug=out.log", writes=("out.log",)),
        Example("tool --out-dir build src", writes=("build",)),
        Example("pytest --cov-report=term"),
        Example("pytest --cov-report term"),
        Example("tool --debug all"),
        Example("tool -- --output=x"),
        Example("pytest -q --maxfail=1"),
    ),
)

def _second_operand(name: str, valued: frozenset[str]) -> WriteRule:
    """Its second operand, which it writes (`uniq IN OUT`, `xxd IN OUT`); `valued`: its options
    that take a value."""
    def rule(vals: list[str]) -> list[tuple[str, int, str | None]]:
        ops = [i for i, v in enumerate(vals) if (v[:1] != "-" or v == "-") and not (
            i and vals[i - 1] in valued)]
        return [(name, ops[1], None)] if len(ops) > 1 else []
    return rule


_UNIQ_VALUED = frozenset({"-f", "-s", "-w"})
_XXD_VALUED = frozenset({"-c", "-g", "-l", "-o", "-s", "-n", "-cols", "-groupsize", "-len",
                         "-offset", "-seek", "-name", "-octets"})


WRITERS = (
    Program(("tee",), "copies its input to files", writes_operands=True, examples=(
        Example("tee out.log", writes=("out.log",)),
        Example("tee -a one.log two.log", writes=("one.log", "two.log")),
        Example("tee -- -odd", writes=("-odd",)),
        Example("tee"),
    )),
    Program(("touch",), "creates files or sets their times", writes_operands=True, examples=(
        Example("touch a b", writes=("a", "b")),
        Example("touch -c"),
    )),
    Program(("truncate",), "sets the size of files", writes_operands=True, examples=(
        # (the size is taken for a file too: over-approximated)
        Example("truncate -s 0 f.log", writes=("0", "f.log")),
        Example("truncate --help"),
    )),
    Program(("sponge",), "soaks up its input, then writes a file", writes_operands=True,
            examples=(
        Example("sponge f.txt", writes=("f.txt",)),
        Example("sponge"),
    )),
    Program(("dd",), "copies and converts data", output_operand="of=", examples=(
        Example("dd if=in.img of=out.img bs=1M", writes=("out.img",)),
        Example("dd if=in.img"),
    )),
    Program(("sort",), "sorts lines", output_options=frozenset({"-o"}),
            code_options={"--compress-program": "runs another program to compress its "
                          "temporary files"},
            value_options=frozenset({"-k", "--key", "-t", "--field-separator", "-S",
                                     "--buffer-size", "-T", "--temporary-directory"}),
            examples=(
        Example("sort -o sorted.txt in.txt", writes=("sorted.txt",)),
        Example("sort -osorted.txt in.txt", writes=("sorted.txt",)),
        Example("sort -ro sorted.txt in.txt", writes=("sorted.txt",)),
        Example("sort -rosorted.txt in.txt", writes=("sorted.txt",)),
        Example("sort --compress-program=./zip big.txt", runs_code=True),
        Example("sort --compress-prog ./zip big.txt", runs_code=True),
        Example("sort --outp=sorted.txt in.txt", writes=("sorted.txt",)),
        Example("sort in.txt"),
        Example("sort -k 2 -t , in.csv"),
    )),
    Program(("uniq",), "drops repeated lines (`uniq IN OUT` writes OUT)",
            writes=_second_operand("uniq", _UNIQ_VALUED), examples=(
        Example("uniq in.txt out.txt", writes=("out.txt",)),
        Example("uniq -c in.txt out.txt", writes=("out.txt",)),
        Example("uniq -c in.txt"),
        Example("uniq -f 1 in.txt"),
    )),
    Program(("xxd",), "hex dumps (`xxd IN OUT` writes OUT, `-r` too)",
            writes=_second_operand("xxd", _XXD_VALUED), examples=(
        Example("xxd -r dump.hex out.bin", writes=("out.bin",)),
        Example("xxd in.bin"),
        Example("xxd -l 16 in.bin"),
    )),
    Program(("gcc", "cc", "g++", "clang", "c++"), "C and C++ compilers",
            output_options=frozenset({"-o"}), clusters=False, examples=(
                Example("gcc -o app main.c", writes=("app",)),
                Example("gcc -fno-omit-frame-pointer -c main.c"),
                Example("clang -c main.c -omain.o", writes=("main.o",)),
                Example("cc -c main.c"),
            )),
    Program(("ld",), "the linker", output_options=frozenset({"-o"}), clusters=False, examples=(
        Example("ld -o app main.o", writes=("app",)),
        Example("ld main.o"),
    )),
    Program(("rustc",), "the Rust compiler", output_options=frozenset({"-o"}), clusters=False,
            examples=(
        Example("rustc -o app main.rs", writes=("app",)),
        Example("rustc main.rs"),
    )),
)

#: long options whose value, if any, is glued on with `=` (the next word is not theirs)
GLUED_VALUE_ONLY = frozenset({"--cov-report", "--debug"})
#: long options whose value is `TYPE:PATH` (the file is the part after the colon; a bare TYPE
#: writes no file of its own naming)
TYPED_VALUE = frozenset({"--cov-report"})
