"""``python -m fgrad check`` as a user runs it."""
import subprocess
import re
import sys

import fgrad
from fgrad.tools.check import main


# One entry of each kind the columns tell apart (the whole table is the generated tests'
# work: tests/test_rules.py, test_vmap.py, test_jet.py, test_compositions.py run the same
# checks on every entry; the full command took 40 s of CI's serial run): Taylor rule, JVP jet,
# JVP jet reading its output, composed; batched, looped, reading values
SAMPLE = {  # name: (batching, Taylor, compositions)
    "tanh": ("ok", "rule", "ok"), "linalg.solve": ("ok", "rule", "ok"),
    "einsum": ("ok", "rule", "ok"), "log": ("ok", "jvp", "ok"),
    "linalg.eigh": ("ok", "jvp+", "ok"), "scipy.special.expit": ("ok", "rule", "ok"),
    "scipy.stats.norm.pdf": ("ok", "rule", "ok"), "np.var": ("ok", "comp", "ok"),
    "roots": ("reads", "jvp+", "reads"), "np.unique": ("reads", "comp", "reads"),
    "scipy.optimize.implicit_solution": ("loop", "jvp+", "ok")}


def test_check_passes_builtin_rules_and_lists_each_entry_with_its_columns():
    proc = subprocess.run([sys.executable, "-m", "fgrad", "check", "--trials", "1", *SAMPLE],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["entry", "VJP", "JVP", "order", "worst", "rel", "err",
                                "batching", "Taylor", "compose", "result"]
    rows = {line.split()[0]: line.split() for line in lines[1:] if line.strip()
            and line.split()[0] in SAMPLE}
    assert set(rows) == set(SAMPLE)
    for name, row in rows.items():
        assert row[1:3] == ["ok", "ok"] and row[-1] == "pass", row
        assert int(row[3]) >= 2 and 0 <= float(row[4]) < 1e-3  # pass/fail is per element
        assert tuple(row[5:8]) == SAMPLE[name], row
    # the columns' counts, and the whole table's summary only where no names are given
    batching = [b for b, _, _ in SAMPLE.values()]
    assert "batching: " + ", ".join(f"{batching.count(b)} {b}" for b in sorted(set(batching))) \
        in proc.stdout
    assert "compositions (every transform under every other" in proc.stdout
    assert f"{len(SAMPLE)} of {len(SAMPLE)} table entries pass" in proc.stdout
    assert "differentiable numpy functions" not in proc.stdout


def test_check_without_names_sums_up_the_numpy_functions(monkeypatch, capsys):
    # (the whole table's run, on a table of two entries: the summary counts every
    # differentiable numpy function whose entry did not fail)
    from fgrad.core.table import checked
    from fgrad.tools import check
    from fgrad.tools.coverage import differentiable_names
    two = {n: checked()[n] for n in ("tanh", "np.var")}
    monkeypatch.setattr(check, "checked", lambda: two)
    assert main(["check", "--trials", "1"]) == 0
    n = len(differentiable_names())
    assert f"{n} of {n} differentiable numpy functions" in capsys.readouterr().out


def test_check_fails_with_exit_code_1_on_a_wrong_rule(capsys):
    import numpy as onp
    bad = fgrad.primitive(onp.tanh, name="my_wrong_tanh", spec=fgrad.Spec([(((3,),), {})]))
    fgrad.defvjp(bad, lambda g, ans, x: g * (1 - ans ** 2) * 1.01)
    fgrad.defjvp(bad, lambda t, ans, x: t * (1 - ans ** 2))
    assert main(["check", "my_wrong_tanh", "sin"]) == 1
    out = capsys.readouterr().out
    assert "my_wrong_tanh  FAIL  ok" in out
    assert "1 of 2 table entries pass" in out


def test_check_lists_a_user_primitive_without_a_batching_rule_as_a_loop(capsys):
    import numpy as onp
    p = fgrad.primitive(onp.tanh, name="my_unbatched_tanh", spec=fgrad.Spec([(((3,),), {})]))
    fgrad.defvjp(p, lambda g, ans, x: g * (1 - ans ** 2))
    fgrad.defjvp(p, lambda t, ans, x: t * (1 - ans ** 2))
    assert main(["check", "my_unbatched_tanh"]) == 0
    assert re.search(r"my_unbatched_tanh +ok +ok +2 +\S+ +loop +jvp\+ +ok +pass",
                     capsys.readouterr().out)


def test_check_reports_a_primitive_without_spec_as_failing(capsys):
    import numpy as onp
    fgrad.primitive(onp.tanh, name="my_unspecified")
    assert main(["check", "my_unspecified"]) == 1
    assert "registered without a Spec" in capsys.readouterr().out
