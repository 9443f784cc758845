"""The benchmark suite's workloads compute what they claim: for every workload, at a tiny size,
fgrad's result matches numpy's hand-written backprop or closed form (and the forward rows match
fgrad's forward value). Timing is never asserted here. No peer is needed: the peers are left
out, and a missing one must be skipped with a note."""
import importlib
import json
import pathlib
import sys

import numpy
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ sits beside the package, not inside it
    sys.path.insert(0, str(ROOT))

from benchmarks import backends  # noqa: E402
from benchmarks.__main__ import main  # noqa: E402
from benchmarks.case import FGRAD, FWD, HAND, JIT  # noqa: E402
from benchmarks.names import NAMES, PEERS  # noqa: E402
from benchmarks.runner import TINY, agree, run_workload  # noqa: E402
from benchmarks.workloads import BY_NAME, WORKLOADS  # noqa: E402
from benchmarks.workloads.scalar import chain_grad_by_hand, tanh_derivative_polys  # noqa: E402


@pytest.fixture(scope="module")
def base():
    found, notes = backends.load(peers=())
    assert set(found) == {"fgrad", JIT, "numpy"}  # (fgrad.jit: fgrad's own, always there)
    return found


def test_names_listed_without_numpy_match_the_workloads():
    assert tuple(w.name for w in WORKLOADS) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_fgrad_matches_numpy_by_hand(name, base):
    for case in BY_NAME[name].build(base, "tiny"):
        fgrad_impl = case.impl(FGRAD)
        other = case.impl(FWD if fgrad_impl.kind == "forward" else HAND)
        got, want = fgrad_impl(), other()
        assert agree(got, want, case.rtol, case.atol) is None, (name, case.name)
        # and every numpy row matches fgrad's reference of its kind
        for impl in case.impls:
            assert agree(impl(), case.refs[impl.kind], case.rtol, case.atol) is None, \
                (name, case.name, impl.label)


@pytest.mark.parametrize("name", NAMES)
def test_workload_runs_and_checks_at_tiny_size(name, base):
    result = run_workload(BY_NAME[name], base, TINY, "tiny")
    assert result.cases
    built = {c.name: c for c in BY_NAME[name].build(base, "tiny")}
    for case in result.cases:
        assert case.failures == {}, (name, case.name, case.failures)
        assert {FGRAD, FWD} <= set(case.stats), (name, case.name)
        for st in case.stats.values():
            assert st.median > 0 and st.lo <= st.median <= st.hi
        if JIT in case.stats:  # its first call timed anew in each round, on fresh jits
            assert case.first_call[JIT] > 0
            # (and the eager row's call timed alone, which its target compares with)
            assert set(case.lone_call) == {FGRAD} and case.lone_call[FGRAD] > 0
            twin = built[case.name]
            impl = twin.impl(JIT)
            fresh = impl.remake()
            assert fresh is not impl.fn
            assert agree(impl.backend.finish(fresh()), twin.refs[impl.kind], twin.rtol,
                         twin.atol) is None
    if name == "elementwise_1e6":
        assert set(result.cases[0].memory) == {FGRAD, FWD, HAND, JIT}
    if name == "tanh_derivatives":
        assert "growth per order (x)" in result.summary[FGRAD]


def test_closed_forms_themselves():
    # tanh' = 1 - t^2, tanh'' = -2t(1 - t^2), tanh''' = (6t^2 - 2)(1 - t^2)
    p1, p2, p3 = tanh_derivative_polys(3)
    t = numpy.tanh(0.4)
    assert numpy.isclose(numpy.polyval(p1, t), 1 - t * t)
    assert numpy.isclose(numpy.polyval(p2, t), -2 * t * (1 - t * t))
    assert numpy.isclose(numpy.polyval(p3, t), (6 * t * t - 2) * (1 - t * t))
    # the scalar chain's hand backprop against a central difference
    from benchmarks.workloads.scalar import chain
    h, x = 1e-6, 0.3
    fd = (chain(numpy, x + h, 7) - chain(numpy, x - h, 7)) / (2 * h)
    assert numpy.isclose(chain_grad_by_hand(x, 7), fd, rtol=1e-7)


def test_a_disagreeing_backend_is_left_out_of_the_timing(base):
    from benchmarks.case import Case, Impl
    from benchmarks.runner import run_case
    np_ = base["numpy"]
    case = Case("c", [Impl(FGRAD, np_, lambda: numpy.ones(3)),
                      Impl("wrong", np_, lambda: numpy.ones(3) * 1.1),
                      Impl("raises", np_, lambda: 1 / 0)], {"deriv": numpy.ones(3)})
    res = run_case(case, TINY)
    assert set(res.stats) == {FGRAD}
    assert "differs from fgrad's" in res.failures["wrong"]
    assert "ZeroDivisionError" in res.failures["raises"]


@pytest.fixture
def no_peers(monkeypatch):
    """Make every peer's import fail, as on a machine without the bench extra."""
    real = importlib.import_module

    def fake(name, *args, **kwargs):
        if name.split(".")[0] in ("autograd", "jax", "torch"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(backends.importlib, "import_module", fake)


def test_missing_peer_is_skipped_with_a_note(no_peers):
    found, notes = backends.load(PEERS)
    assert set(found) == {"fgrad", JIT, "numpy"}
    for peer in PEERS:
        assert any(n.startswith(f"{peer}: skipped, not installed") and ".[bench]" in n
                   for n in notes), (peer, notes)


def test_command_line_without_peers(no_peers, tmp_path, capsys):
    out = tmp_path / "run.json"
    assert main(["--smoke", "--threads", "0", "--peers", "autograd,torch",
                 "--only", "scalar_chain,logreg", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "autograd: skipped, not installed" in printed
    assert "== scalar_chain" in printed and "== logreg" in printed and "== mlp" not in printed
    data = json.loads(out.read_text())
    assert [w["name"] for w in data["workloads"]] == ["scalar_chain", "logreg"]
    assert set(data["workloads"][0]["cases"][0]["stats"]) == {FGRAD, JIT, FWD, HAND}
    assert any("torch: skipped" in n for n in data["notes"])
    assert data["alive"]["without_gc"] >= 0


def test_unknown_workload_is_refused(capsys):
    assert main(["--smoke", "--threads", "0", "--only", "nope"]) == 2
    assert "unknown workload" in capsys.readouterr().err
