"""Every example runs as a user would run it, and prints the numbers it promises."""
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def run(name):
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_quickstart_prints_the_hand_checked_values():
    out = run("quickstart.py")
    assert "f(2, 5)           = 11.652" in out
    assert "df/dx1, df/dx2    = 5.5 1.716" in out
    assert "jvp columns       = 5.5 1.716" in out
    assert "vjp of x**2       = [2. 4. 6.]" in out
    assert "[[1.0, 0.0], [0.0, 2.0]]" in out
    assert "[[6.0, 0.0], [0.0, 12.0]]" in out
    assert "d3/dx3 sin at 0   = -1.0" in out
    assert "{'b': -9.0, 'w': [-27.0, -36.0]}" in out
    assert "branches          = 6.0 -1.0" in out


@pytest.mark.parametrize("path", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_example_runs(path):
    run(path)
