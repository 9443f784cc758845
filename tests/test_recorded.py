"""make_tape: the recorded evaluation trace, and forward and reverse sweeps over it."""
import math

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np


def f(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)


def test_entries_are_the_evaluation_trace_with_values():
    tape = fgrad.make_tape(f)(2.0, 5.0)
    assert [e.expression() for e in tape.entries] == [
        "log(x0)", "multiply(x0, x1)", "add(v1, v2)", "sin(x1)", "subtract(v3, v4)"]
    values = [e.value for e in tape.entries]
    assert values == [math.log(2.0), 10.0, math.log(2.0) + 10.0, math.sin(5.0),
                      math.log(2.0) + 10.0 - math.sin(5.0)]
    assert tape.outputs == ["v5"] and tape.value == values[-1]
    assert tape["x1"].value == 5.0 and tape["v4"].primitive == "sin"
    with pytest.raises(KeyError, match="entries are x0..x1 and v1..v5"):
        tape["v9"]


def test_tangent_trace_is_forward_mode():
    tans = fgrad.make_tape(f)(2.0, 5.0).tangents(1.0, 0.0)
    assert tans == {"x0": 1.0, "x1": 0.0, "v1": 0.5, "v2": 5.0, "v3": 5.5, "v4": 0.0,
                    "v5": 5.5}


def test_adjoint_trace_is_reverse_mode_and_repeatable():
    tape = fgrad.make_tape(f)(2.0, 5.0)
    adj = tape.adjoints(1.0)
    assert adj["v5"] == 1.0 and adj["v4"] == -1.0 and adj["v3"] == adj["v1"] == 1.0
    assert adj["x0"] == pytest.approx(5.5)
    assert adj["x1"] == pytest.approx(2.0 - math.cos(5.0))  # 1.716...
    assert tape.adjoints(2.0)["x0"] == pytest.approx(11.0)  # the tape is kept


def test_constants_params_and_arrays_are_shown():
    tape = fgrad.make_tape(lambda x: np.sum(x[1:] * 2.0, axis=0))(onp.ones((3, 2)))
    text = str(tape)
    assert "v1 = getitem(x0, idx=slice(1, None, None))" in text
    assert "v2 = multiply(v1, 2)" in text
    assert "v3 = sum(v2, axis=(0,), keepdims=False)" in text and "-> [4., 4.]" in text
    assert text.splitlines()[-1] == " out = v3"


def test_structure_errors_name_the_sweep():
    tape = fgrad.make_tape(f)(2.0, 5.0)
    with pytest.raises(ValueError, match="tangents: their structure"):
        tape.tangents(1.0)
    with pytest.raises(ValueError, match="adjoints: the cotangent's structure"):
        tape.adjoints((1.0, 2.0))
