"""Every example runs as a user would run it, and prints the numbers it promises.

Each script runs once (in a scratch directory, so a plot it may save lands there), within the
30 s a new user is promised; the tests below read its headline numbers off that output, and
check some of them independently (by hand, by finite differences) through the script's own
functions.
"""
import importlib.util
import math
import pathlib
import re
import subprocess
import sys
import time

import numpy as onp
import pytest

import fgrad
import fgrad.testing

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py"))
TIME_LIMIT = 30.0
_OUTPUTS = {}
# the small version of an example whose full run takes longer (its own test checks the full
# one's point: tests/test_dask.py runs a gradient over data larger than a worker's memory)
# (with threads, the memory limit would bound this whole process: a generous one)
ARGS = {"dask_regression.py": ["--rows", "400000", "--chunk-rows", "50000", "--steps", "3",
                                "--threads", "--memory-limit", "4GB"]}
NEEDS = {"dask_regression.py": "dask.distributed"}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("examples")


@pytest.fixture(scope="module")
def run(scratch):
    """run(name) -> the script's stdout; each script runs once per session."""
    def run(name):
        if name not in _OUTPUTS:
            if name in NEEDS:
                pytest.importorskip(NEEDS[name], reason=f"{name} needs the {NEEDS[name]} extra")
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, str(EXAMPLES / name), *ARGS.get(name, [])],
                                  capture_output=True,
                                  text=True, timeout=120, cwd=scratch)
            elapsed = time.perf_counter() - start
            assert proc.returncode == 0, proc.stderr
            assert elapsed < TIME_LIMIT, f"{name} took {elapsed:.1f} s"
            _OUTPUTS[name] = proc.stdout
        return _OUTPUTS[name]
    return run


def load(name):
    """The example as a module (its main() does not run on import)."""
    spec = importlib.util.spec_from_file_location(f"example_{name[:-3]}", EXAMPLES / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def squeeze(text):
    """Each line with its runs of blanks made one blank."""
    return [" ".join(line.split()) for line in text.splitlines()]


def numbers(line):
    return [float(v) for v in re.findall(r"-?\d+\.?\d*(?:e[-+]\d+)?", line)]


def line_with(lines, start):
    found = [ln for ln in lines if ln.startswith(start)]
    assert found, f"no line starts with {start!r}"
    return found


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_example_runs_in_time(run, name):
    assert run(name).strip()


def test_every_example_has_a_docstring_naming_its_origin():
    for name in SCRIPTS:
        doc = load(name).__doc__
        assert doc and "seed" in doc, name
        assert f"python examples/{name}" in doc, name


def test_quickstart_prints_the_hand_checked_values(run):
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


# --- evaluation_trace.py ---------------------------------------------------------------------

def test_evaluation_trace_is_fgrads_own_tape(run):
    out = run("evaluation_trace.py")
    tape = fgrad.make_tape(load("evaluation_trace.py").f)(2.0, 5.0)
    assert str(tape) in out                      # printed from the tape, not typed in
    lines = squeeze(out)
    for entry in ("v1 = log(x0)", "v2 = multiply(x0, x1)", "v3 = add(v1, v2)",
                  "v4 = sin(x1)", "v5 = subtract(v3, v4)"):
        assert any(entry in ln for ln in lines), entry
    assert "y = 11.652" in lines


def test_evaluation_trace_tangents_and_adjoints(run):
    lines = squeeze(run("evaluation_trace.py"))
    # the tangent trace along x1: (value, tangent) per entry, as the article's table
    tangents = {ln.split()[0]: numbers(ln.split("=", 1)[1])[-2:]
                for ln in lines if re.match(r"[xv]\d+ = \w+(\(.*\))? -?\d", ln)}
    assert tangents == {"x0": [2, 1], "x1": [5, 0], "v1": [0.693, 0.5], "v2": [10, 5],
                        "v3": [10.693, 5.5], "v4": [-0.959, 0], "v5": [11.652, 5.5]}
    assert "dy/dx1 = 5.5" in lines
    assert any("gives dy/dx2 = 1.716" in ln for ln in lines)
    # the adjoint trace: partial adjoints summed where an input is used twice
    assert "bar v4 = bar v5 * -1 = -1" in lines
    assert "bar x1 = bar v4 * 0.284 + bar v2 * 2 = -0.284 + 2 = 1.716" in lines
    assert "bar x0 = bar v2 * 5 + bar v1 * 0.5 = 5 + 0.5 = 5.5" in lines
    assert "dy/dx1 = bar x0 = 5.5, dy/dx2 = bar x1 = 1.716: one backward sweep gives both." in lines
    assert "4. fgrad.value_and_grad(f, argnums=(0, 1))(2.0, 5.0) = (11.652, (5.5, 1.716))" in lines


# --- linear_regression.py --------------------------------------------------------------------

def test_linear_regression_tinynn_loss_falls_from_thousands_below_one(run):
    lines = squeeze(run("linear_regression.py"))
    epochs = [numbers(ln) for ln in lines if re.match(r"epoch \d+ loss -?\d+\.\d+$", ln)]
    assert [e for e, _ in epochs] == list(range(0, 101, 10))
    losses = [loss for _, loss in epochs]
    assert losses[0] > 1000 and losses[-1] < 1
    assert all(a > b for a, b in zip(losses, losses[1:]))


def test_linear_regression_tinynn_recovers_the_coefficients():
    params, coef, losses = load("linear_regression.py").train_tinynn(report=lambda s: None)
    assert len(losses) == 101 and losses[-1] < 1
    onp.testing.assert_allclose(params["w"], onp.diag(coef), atol=0.05)
    onp.testing.assert_allclose(params["b"], -3.0, atol=0.05)


def test_linear_regression_micrograd_ends_near_w4_b3(run):
    lines = squeeze(run("linear_regression.py"))
    epochs = [numbers(ln) for ln in lines if re.match(r"epoch \d+ loss \S+ w \S+ b \S+$", ln)]
    assert [e[0] for e in epochs] == [0, 5, 10, 15, 20, 25, 30, 35, 39]
    assert epochs[0][1] > 10 and epochs[-1][1] < 0.01
    (last,) = [ln for ln in lines if ln.startswith("loss ") and "w = " in ln]
    w, b = (float(v) for v in re.search(r"w = (\S+), b = (\S+) ", last).groups())
    assert abs(w - 4) < 0.05 and abs(b - 3) < 0.05


# --- static_graph.py -------------------------------------------------------------------------

def test_static_graph_is_built_once_and_run_on_many_feeds(run):
    x1, x2 = 0.6, 0.2
    out = (x1 * x2 + x1) / x2                # = x1 + x1/x2
    d1, d2 = 1 + 1 / x2, -x1 / x2 ** 2       # 6 and -15
    assert math.isclose(out, 3.6) and math.isclose(d1, 6) and math.isclose(d2, -15)
    lines = squeeze(run("static_graph.py"))
    assert (f"feed x1 = 0.6, x2 = 0.2: out = {out:.6g} d out/d x1 = {d1:.6g} "
            f"d out/d x2 = {d2:.6g}") in lines
    for a, b in ((1.0, 0.5), (2.0, 4.0)):  # the other feeds, by the hand formulas
        assert (f"feed x1 = {a:g}, x2 = {b:g}: out = {a + a / b:.6g} d out/d x1 = "
                f"{1 + 1 / b:.6g} d out/d x2 = {-a / b ** 2:.6g}") in lines
    # the forward graph as listed: one node per numpy call of graph()
    assert {"v2:f64[] = multiply v0 v1", "v3:f64[] = add v2 v0",
            "v4:f64[] = divide v3 v1"} <= set(lines)

    graph = load("static_graph.py").graph
    built = fgrad.make_graph(fgrad.value_and_grad(graph, argnums=(0, 1)))(1.0, 1.0)
    value, (g1, g2) = built(x1, x2)
    assert math.isclose(value, out, rel_tol=1e-14)
    assert math.isclose(g1, d1, rel_tol=1e-14) and math.isclose(g2, d2, rel_tol=1e-14)


def test_static_graph_branch_is_guarded_and_jit_takes_both_sides(run):
    lines = squeeze(run("static_graph.py"))
    assert any(ln.startswith("replayed at x = 1: GuardError:") for ln in lines)
    # x * x3 at x = 3: d/dx = x3 = 4, d/dx3 = x = 3; x4 - x at x = 1: d/dx = -1, d/dx4 = 1
    assert "x = 3 value 12 gradient (d/dx, d/dx3, d/dx4) = (4, 3, 0)" in lines
    assert "x = 1 value 9 gradient (d/dx, d/dx3, d/dx4) = (-1, 0, 1)" in lines
    assert "(2 graphs traced for 4 calls)" in lines


def test_static_graph_training_loop_under_jit_equals_eager(run):
    lines = squeeze(run("static_graph.py"))
    (timing,) = [ln for ln in lines if ln.startswith("eager fgrad:")]
    assert "fgrad.jit:" in timing and "x faster" in timing
    assert any(ln.startswith("final weights equal bit for bit: True") for ln in lines)


# --- two_layer_net.py ------------------------------------------------------------------------

def test_two_layer_net_trains_above_95_percent(run):
    lines = squeeze(run("two_layer_net.py"))
    assert any(ln.startswith("check_grads(loss, (params,), order=2) passed") for ln in lines)
    (final,) = line_with(lines, "final loss")
    loss, acc = numbers(final)
    assert acc > 95.0 and loss < 0.1
    (linear,) = [ln for ln in lines if "linear softmax classifier" in ln]
    assert numbers(linear)[-1] < 70.0           # the hidden layer is needed


def test_two_layer_net_gradient_is_checked_on_the_loss():
    net = load("two_layer_net.py")
    rng = onp.random.default_rng(1)
    x, y = net.spirals(rng)
    params = {"W1": rng.normal(size=(3, 8)), "W2": rng.normal(size=(8, 3))}
    g = fgrad.grad(net.cross_entropy)(params, x[::15], y[::15])
    assert set(g) == {"W1", "W2"} and g["W1"].shape == (3, 8)
    # a directional finite difference of the script's own loss
    d = {k: rng.normal(size=v.shape) for k, v in params.items()}
    eps = 1e-6
    shifted = [net.cross_entropy({k: params[k] + s * eps * d[k] for k in params}, x[::15], y[::15])
               for s in (1, -1)]
    fd = (shifted[0] - shifted[1]) / (2 * eps)
    assert math.isclose(sum(onp.sum(g[k] * d[k]) for k in g), fd, rel_tol=1e-6)


# --- higher_order.py -------------------------------------------------------------------------

def tanh_derivative_polynomials(order):
    """Coefficients (lowest first) of P_k with d^k/dx^k tanh = P_k(tanh x)."""
    polys = [[0.0, 1.0]]
    for _ in range(order):
        p = polys[-1]
        dp = [i * c for i, c in enumerate(p)][1:] or [0.0]
        out = [0.0] * (len(dp) + 2)
        for i, c in enumerate(dp):          # dp * (1 - t^2)
            out[i] += c
            out[i + 2] -= c
        polys.append(out)
    return polys


def test_higher_order_table_matches_closed_forms(run):
    lines = squeeze(run("higher_order.py"))
    rows = [numbers(ln) for ln in lines if re.match(r"-?\d\.\d( -?\d+\.\d{5}){7}$", ln)]
    assert len(rows) == 13
    polys = tanh_derivative_polynomials(6)
    for x, *derivs in rows:
        t = math.tanh(x)
        want = [sum(c * t ** i for i, c in enumerate(p)) for p in polys]
        assert derivs == pytest.approx(want, abs=2e-5), x
    assert [0.0, 0.0, 1.0, 0.0, -2.0, 0.0, 16.0, 0.0] in rows   # the Taylor series at 0
    (worst,) = [ln for ln in lines if ln.startswith("worst error over orders 0..6")]
    assert numbers(worst)[2] < 1e-10


def test_higher_order_hessian_vector_product(run):
    lines = squeeze(run("higher_order.py"))
    fwd_rev, = [ln for ln in lines if ln.startswith("fgrad.jvp(fgrad.grad(f)")]
    dense, = [ln for ln in lines if ln.startswith("fgrad.hessian(f)(x) @ v")]
    assert fwd_rev.split("= ")[1] == dense.split("= ")[1]
    (diff,) = [ln for ln in lines if ln.startswith("max difference")]
    assert numbers(diff)[0] < 1e-12
    # independently: H v is the directional derivative of the gradient
    m = load("higher_order.py")
    rng = onp.random.default_rng(3)
    x, v = rng.normal(size=10), rng.normal(size=10)
    g = fgrad.grad(m.energy)
    eps = 1e-5
    fd = (g(x + eps * v) - g(x - eps * v)) / (2 * eps)
    onp.testing.assert_allclose(m.hvp(m.energy, x, v), fd, rtol=1e-7, atol=1e-7)


def test_higher_order_plot_only_with_matplotlib(run, scratch):
    out = run("higher_order.py")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in out
        assert not (scratch / "tanh_derivatives.png").exists()
    else:
        assert "saved the curves to tanh_derivatives.png" in out
        assert (scratch / "tanh_derivatives.png").read_bytes()[:4] == b"\x89PNG"


# --- newton.py -------------------------------------------------------------------------------

def test_newton_converges_quadratically_below_1e10_within_8_steps(run):
    lines = squeeze(run("newton.py"))
    table = [numbers(ln) for ln in lines if re.match(r"\d+ \d\.\d+e[-+]\d+ ", ln)]
    assert [row[0] for row in table] == list(range(9))
    errors = [row[1] for row in table]
    first = next(k for k, e in enumerate(errors) if e < 1e-10)
    assert first <= 8
    assert all(e < 1e-10 for e in errors[first:])
    above_rounding = [k for k in range(1, first + 1) if errors[k] > 1e-14]
    assert len(above_rounding) >= 3
    for k in above_rounding:                    # quadratic: e_k <= C e_{k-1}^2
        assert errors[k] < errors[k - 1] and errors[k] <= 0.5 * errors[k - 1] ** 2
    assert f"error below 1e-10 after {first} steps" in " ".join(lines)


def test_newton_problem_has_the_stated_minimiser():
    m = load("newton.py")
    A, y, theta_star = m.make_problem()
    g = fgrad.grad(m.negative_log_likelihood)(theta_star, A, y)
    assert onp.max(onp.abs(g)) < 1e-12
    H = fgrad.hessian(m.negative_log_likelihood)(theta_star, A, y)
    assert onp.all(onp.linalg.eigvalsh(H) > 0)


# --- jacobian_ode.py -------------------------------------------------------------------------

def test_jacobian_ode_jacfwd_jacrev_and_finite_differences_agree(run):
    lines = squeeze(run("jacobian_ode.py"))
    (rev,) = line_with(lines, "jacfwd vs jacrev")
    (fd,) = line_with(lines, "jacfwd vs finite differences")
    assert numbers(rev)[0] < 1e-12
    assert numbers(fd)[0] < 1e-6


def test_jacobian_ode_printed_sensitivities_are_derivatives(run):
    lines = squeeze(run("jacobian_ode.py"))
    printed = onp.array([numbers(line_with(lines, "prey ")[0]),
                         numbers(line_with(lines, "predators ")[0])])
    # the test's own central differences of the script's solver, in plain numpy
    m = load("jacobian_ode.py")
    cols = []
    for i in range(4):
        h = onp.zeros(4)
        h[i] = 1e-6
        cols.append((m.rk4(m.PARAMS + h, m.STATE0) - m.rk4(m.PARAMS - h, m.STATE0)) / 2e-6)
    onp.testing.assert_allclose(printed, onp.stack(cols, axis=1), rtol=1e-6, atol=1e-5)
    t0 = [ln for ln in lines if ln.startswith("0.0 10.0000")]
    assert t0 and numbers(t0[0])[2:] == [0.0] * 4        # no sensitivity at t = 0


# --- gaussian_process.py -----------------------------------------------------------------------

def test_gaussian_process_fit_agrees_with_finite_differences_in_fewer_evaluations(run):
    lines = squeeze(run("gaussian_process.py"))
    ours = numbers(line_with(lines, "fgrad gradients:")[0])
    fd = numbers(line_with(lines, "finite differences (scipy):")[0])
    assert len(ours) == len(fd) == 4
    onp.testing.assert_allclose(ours, fd, rtol=1e-3)            # the same optimum
    n_ours, n_fd = numbers(line_with(lines, "objective evaluations:")[0])
    assert n_ours < n_fd


def test_gaussian_process_objective_is_the_cholesky_formula_and_its_gradient_vanishes():
    gp = load("gaussian_process.py")
    x, y = gp.data()
    ours, _ = gp.main()
    p = ours.x
    k = onp.asarray(gp.covariance(p, x))
    chol = onp.linalg.cholesky(k)
    alpha = onp.linalg.solve(k, y)
    by_hand = 0.5 * y @ alpha + onp.log(onp.diag(chol)).sum() + 0.5 * len(x) * math.log(
        2 * math.pi)
    assert float(gp.neg_log_marginal(p, x, y)) == pytest.approx(by_hand, rel=1e-10)
    g = fgrad.grad(gp.neg_log_marginal)(p, x, y)
    assert max(abs(float(v)) for v in g.values()) < 1e-4
    # and the gradient itself against finite differences
    check = fgrad.testing.check_grads(lambda v: gp.neg_log_marginal(
        dict(zip(sorted(p), v)), x, y), (onp.array([p[n] for n in sorted(p)]) + 0.1,), order=2,
        eps=1e-5, rtol=1e-5)
    assert check < 1e-5


# --- per_example_gradients.py ------------------------------------------------------------------

def test_per_example_gradients_equal_the_loop_and_average_to_the_mean_gradient(run):
    lines = squeeze(run("per_example_gradients.py"))
    (diff,) = line_with(lines, "largest difference from the loop of grad calls:")
    assert numbers(diff)[-1] <= 1e-12
    (mean,) = line_with(lines, "3. their mean equals the gradient of the mean loss:")
    assert numbers(mean)[-1] <= 1e-12
    (timing,) = line_with(lines, "4. timing: vmap")
    assert "loop of grad" in timing and "one gradient of the mean loss" in timing
    # the shapes: one gradient per example, each layer's as its parameters'
    assert "shapes: [((128, 8, 64), (128, 64)), ((128, 64, 64), (128, 64)), " \
           "((128, 64, 1), (128, 1))]" in lines


# --- taylor_ode.py ---------------------------------------------------------------------------

def test_taylor_integrator_reaches_1e12_with_far_fewer_steps_than_rk4(run):
    lines = squeeze(run("taylor_ode.py"))
    taylor = numbers(line_with(lines, "Taylor order 16:")[0].split(":", 1)[1])
    rk4 = numbers(line_with(lines, "RK4:")[0].split(":", 1)[1])
    # steps, h, error, seconds
    assert taylor[2] <= 1e-12 and rk4[2] <= 1e-12
    assert taylor[0] * 50 <= rk4[0], (taylor, rk4)
    assert taylor[1] == pytest.approx(2 * math.pi / taylor[0], rel=1e-2)


def test_taylor_integrators_terms_are_the_solutions_derivatives():
    ex = load("taylor_ode.py")
    y0 = ex.start()
    terms = ex.taylor_terms(ex.kepler, y0, 4)
    # y'' = f'(y) f(y) by forward mode, y''' = f''(y)[f, f] + f'(y) f'(y) f
    f1 = ex.kepler(y0)
    _, f2 = fgrad.jvp(ex.kepler, (y0,), (f1,))
    onp.testing.assert_allclose(terms[1], f1, rtol=1e-14)
    onp.testing.assert_allclose(terms[2], f2, rtol=1e-13)
    _, f3 = fgrad.jvp(lambda y: fgrad.jvp(ex.kepler, (y,), (ex.kepler(y),))[1], (y0,), (f1,))
    onp.testing.assert_allclose(terms[3], f3, rtol=1e-12, atol=1e-12)


def test_taylor_example_prints_tanhs_derivatives(run):
    line = line_with(squeeze(run("taylor_ode.py")), "tanh^(k)(0.5)")[0]
    got = numbers(line.split(":", 1)[1])
    y, poly, want = math.tanh(0.5), onp.polynomial.Polynomial([0.0, 1.0]), []
    for _ in range(13):  # tanh^(n) = P_n(tanh), P_{n+1} = (1 - y^2) P_n'
        want.append(poly(y))
        poly = onp.polynomial.Polynomial([1.0, 0.0, -1.0]) * poly.deriv()
    onp.testing.assert_allclose(got, want, rtol=1e-5)


def test_dask_regression_matches_the_hand_gradient_and_learns(run):
    lines = squeeze(run("dask_regression.py"))
    assert numbers(line_with(lines, "gradient vs hand-written")[0])[0] < 1e-12
    losses = [numbers(ln)[-1] for ln in line_with(lines, "step ")]
    assert abs(losses[0] - math.log(2)) < 1e-6  # (w = 0: log 2 for every example, 6 digits)
    assert all(b < a for a, b in zip(losses, losses[1:])), losses


# --- print_trace.py and dot_graph.py (autograd's tracer examples) -----------------------------

def test_print_trace_prints_fgrads_tape_of_fun_and_of_its_gradient(run):
    out = run("print_trace.py")
    module = load("print_trace.py")
    assert str(fgrad.make_tape(module.fun)(1.23)) in out
    lines = squeeze(out)
    assert numbers(line_with(lines, "v2 = sin(v1)")[0])[-1] == pytest.approx(
        math.sin(2.46), abs=1e-6)
    # the gradient's tape ends in 2 cos(2x)
    assert numbers(line_with(lines, "v7 = add(v6, v6)")[0])[-1] == pytest.approx(
        2 * math.cos(2.46), abs=1e-5)


def test_dot_graph_writes_the_graph_of_fun_and_of_its_gradient(run, scratch):
    out = run("dot_graph.py")
    module = load("dot_graph.py")
    dot = (scratch / "fun.dot").read_text()
    assert dot.startswith("digraph fgrad {")
    assert dot.count('label="sin') == 1 and dot.count('label="exp') == 1
    grad_dot = (scratch / "grad_fun.dot").read_text()
    assert 'label="cos' in grad_dot  # the backward pass is in the graph
    graph = fgrad.make_graph(fgrad.grad(module.fun))(1.0)
    assert f"grad_fun.dot: {len(graph.nodes)} operations" in out
    # the graph is the gradient: run on a new value it gives the derivative
    x = 0.7
    want = math.cos(x) * (2 * math.sin(x) + math.exp(x) - 0.5) + math.sin(x) * math.exp(x)
    assert float(graph(x)) == pytest.approx(want, rel=1e-14)
