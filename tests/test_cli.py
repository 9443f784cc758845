"""``python -m fgrad check`` as a user runs it."""
import subprocess
import sys

import re

import fgrad
from fgrad.tools.check import main
from fgrad.tools.coverage import differentiable_names
from fgrad.core.table import Primitive, checked


def test_check_passes_every_builtin_rule_and_lists_each_entry():
    proc = subprocess.run([sys.executable, "-m", "fgrad", "check", "--trials", "1"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["entry", "VJP", "JVP", "order", "worst", "rel", "err",
                                "batching", "Taylor", "compose", "result"]
    entries = checked()
    rows = {line.split()[0]: line.split() for line in lines[1:] if line.strip()
            and line.split()[0] in entries}
    assert set(rows) == set(entries)
    for name, row in rows.items():
        assert row[1:3] == ["ok", "ok"] and row[-1] == "pass", row
        assert int(row[3]) >= 2 and 0 <= float(row[4]) < 1e-3  # pass/fail is per element
    # the batching column: the loops are primitives declaring one (test_vmap; roots' checked
    # call sorts the roots by value, so it shows as reading values)
    batching = {name: row[5] for name, row in rows.items()}
    assert [n for n, b in batching.items() if b == "loop"] == [
        "scipy.integrate.odeint", "scipy.integrate.solve_ivp",
        "scipy.optimize.implicit_solution"]
    assert set(batching.values()) <= {"ok", "loop", "reads", "-"}
    counts = {b: list(batching.values()).count(b) for b in set(batching.values())}
    assert "batching: " + ", ".join(f"{n} {b}" for b, n in sorted(counts.items())) \
        in proc.stdout
    # the Taylor column: a primitive's own rule, or its JVP rule's jet; composed entries go
    # through their primitives'
    taylor = {name: row[6] for name, row in rows.items()}
    for name, how in taylor.items():
        prim = entries[name]
        if not isinstance(prim, Primitive):
            assert how == "comp", (name, how)
        else:  # (a rule may leave a call to the JVP rule: a complex abs)
            assert how in (("rule", "jvp", "jvp+") if prim.taylor else ("jvp", "jvp+")), \
                (name, how)
    assert taylor["tanh"] == taylor["linalg.solve"] == taylor["einsum"] == "rule"
    assert taylor["log"] == "jvp" and taylor["linalg.eigh"] == "jvp+"
    assert taylor["scipy.special.expit"] == taylor["scipy.stats.norm.pdf"] == "rule"  # (composed)
    # the compositions column: every entry composes; those reading their values for their
    # result's shape raise under the forms with vmap, as under vmap alone
    composed = {name: row[7] for name, row in rows.items()}
    assert set(composed.values()) <= {"ok", "reads", "-"}
    assert {n for n, c in composed.items() if c == "reads"} <= \
        {n for n, b in batching.items() if b == "reads"}
    assert "compositions (every transform under every other" in proc.stdout
    assert f"{len(rows)} of {len(rows)} table entries pass" in proc.stdout
    # the bar: at least 200 numpy functions differentiable, both rules, order 2
    n_ok, n_all = map(int, re.search(r"(\d+) of (\d+) differentiable numpy functions",
                                     proc.stdout).groups())
    assert n_ok == n_all == len(differentiable_names()) >= 200, (n_ok, n_all)


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
