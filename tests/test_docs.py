"""The examples in README.md and docs/*.md run as tests: every ```python block of a file runs,
in order and in one fresh process per file (a block may define a primitive: no other test
sees it), and a line ``expression  # value`` checks that the expression gives that value (to
the digits shown: ``1.716...``; ``nan``; the value after `` = `` in ``# sum(x) / 4 = 0.4``).

A block may be preceded by HTML comments, which the site does not show:
``<!-- test-setup: code -->`` runs first (the data a fragment assumes), and
``<!-- test-skip: why -->`` leaves a block out, saying why."""
import ast
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
DIRECTIVE = re.compile(r"<!--\s*test-(setup|skip):(.*?)-->", re.S)


def blocks(text):
    """``(line, code, setup, skip)`` for each ```python block of a markdown text."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            start, i = i + 1, i + 1
            while lines[i].strip() != "```":
                i += 1
            before = "\n".join(lines[:start - 1])
            # the comments directly above the fence (blank lines between them allowed)
            head = re.search(r"(?:\s*<!--(?:(?!-->).)*-->\s*)*$", before, re.S).group(0)
            setup = [body for kind, body in DIRECTIVE.findall(head) if kind == "setup"]
            skip = [body.strip() for kind, body in DIRECTIVE.findall(head) if kind == "skip"]
            out.append((start + 1, "\n".join(lines[start:i]),
                        textwrap.dedent("\n".join(setup)).strip(), skip[0] if skip else None))
        i += 1
    return out


def expected(comment):
    """The value a ``# comment`` states, or None where it states none."""
    candidates = [comment, re.sub(r"\s*\(.*\)\s*$", "", comment)]
    if " = " in comment:
        candidates.append(comment.rsplit(" = ", 1)[1])
    for text in candidates:
        text = text.strip().replace("...", "")
        if text == "nan":
            return float("nan")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, (int, float, complex, tuple, list)):
            return value
    return None


def checked(code, line):
    """The block's source with each ``expression  # value`` line made a check."""
    out = []
    for k, text in enumerate(code.split("\n")):
        m = re.match(r"^(?P<expr>[^#]*?\S)\s+#\s+(?P<comment>.*)$", text)
        if m and not text.startswith((" ", "\t")):
            try:
                ast.parse(m["expr"], mode="eval")
                want = expected(m["comment"])
            except SyntaxError:
                want = None
            if want is not None:
                shown = repr(want).replace("nan", "float('nan')")
                text = f"_check(({m['expr']}), {shown}, {line + k})"
        out.append(text)
    return "\n".join(out)


CHECK = '''
import numpy as _numpy
def _check(got, want, line):
    got = _numpy.asarray(got, dtype=complex if _numpy.iscomplexobj(got) else float)
    assert _numpy.allclose(got, want, rtol=1e-3, atol=1e-3, equal_nan=True), (
        f"line {line}: got {got!r}, the text says {want!r}")
'''


def script(path):
    parts = [CHECK]
    for line, code, setup, skip in blocks(path.read_text()):
        if skip is None:
            parts += [setup, checked(code, line)]
    return "\n".join(parts)


DOCUMENTED = [p for p in FILES if blocks(p.read_text())]


@pytest.mark.parametrize("path", DOCUMENTED, ids=[p.name for p in DOCUMENTED])
def test_the_examples_in_the_docs_run_and_give_the_values_they_state(path):
    run = subprocess.run([sys.executable, "-c", script(path)], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, f"{path.name}'s examples failed:\n{run.stderr[-3000:]}"


def test_every_skipped_block_says_why_and_the_checks_are_read():
    for path in DOCUMENTED:
        for line, code, setup, skip in blocks(path.read_text()):
            assert skip is None or len(skip) > 10, f"{path.name}:{line}: say why it is skipped"
    assert expected("(5.5, 1.716...)") == (5.5, 1.716)
    assert expected("sum(x - mu) / 4 = 0.4") == 0.4
    assert expected("nan (and a RuntimeWarning from sqrt)") != expected("nan")  # nan != nan
    assert expected("traced on its first call per signature") is None
    assert "_check((f(2.0)), 3.0, 7)" in checked("f(2.0)    # 3.0", 7)
