"""fgrad.scipy: what the generated tests (test_rules.py, every table entry against finite
differences, both modes, order 2) cannot see: the public functions' call forms give scipy's
exact values, derivatives equal closed forms, arguments without a derivative are refused by
name, scipy's own functions handed a traced value say what to use, odeint on a stiff and a
non-stiff problem, the optimisers, and ``import fgrad`` without scipy.
"""
import math
import subprocess
import sys
import warnings

import numpy as onp
import pytest

pytest.importorskip("scipy", reason="fgrad.scipy needs scipy; the test extra installs it")

import scipy.integrate as si  # noqa: E402
import scipy.linalg as sl  # noqa: E402
import scipy.optimize as so  # noqa: E402
from fgrad.traces.passes import optimize as optimize_graph  # noqa: E402
import scipy.signal as ss  # noqa: E402
import scipy.special as sc  # noqa: E402
import scipy.stats as st  # noqa: E402

import fgrad  # noqa: E402
import fgrad.numpy as np  # noqa: E402
from fgrad.core.errors import (ClosedOverTracerError, ConcretizationError,  # noqa: E402
                               NoDerivativeRuleError, TracerMutationError)
from fgrad.scipy import integrate, linalg, optimize, signal, special, stats  # noqa: E402
from fgrad.testing import check_grads  # noqa: E402
from numeric import central_gradient  # noqa: E402

rng = onp.random.default_rng(0)
X = rng.uniform(0.5, 2.0, 4)
M = rng.uniform(-1, 1, (3, 3))
SPD = M @ M.T + 3 * onp.eye(3)


# --- import -------------------------------------------------------------------------------

def _python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


def test_import_fgrad_does_not_import_scipy():
    proc = _python("import sys, fgrad, fgrad.numpy; print('scipy' in sys.modules)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_fgrad_scipy_without_scipy_says_to_install_the_extra():
    proc = _python("import sys\nsys.modules['scipy'] = None  # scipy hidden\n"
                   "import fgrad, fgrad.numpy as np\n"
                   "print(float(fgrad.grad(np.sin)(0.0)))\n"
                   "try:\n    import fgrad.scipy\nexcept ImportError as e:\n    print(e)\n")
    assert proc.returncode == 0, proc.stderr
    first, message = proc.stdout.strip().splitlines()
    assert first == "1.0"
    assert "fgrad.scipy needs scipy" in message and "pip install 'fgrad[scipy]'" in message


# --- plain values are scipy's, exactly ----------------------------------------------------

A23 = rng.uniform(-1, 1, (2, 3))
PLAIN = [
    (special.iv, sc.iv, (1.5, X)),
    (special.polygamma, sc.polygamma, (2, X)),
    (special.multigammaln, sc.multigammaln, (3.5, 3)),
    (special.gammainc, sc.gammainc, (1.5, X)),
    (special.expn, sc.expn, (2, X)),
    (special.zeta, sc.zeta, (3.0, X)),
    (special.lambertw, sc.lambertw, (X,)),
    (special.gammaln, sc.gammaln, (onp.float32(2.5),)),
    (lambda a: special.logsumexp(a, axis=1, b=A23 + 2, return_sign=True),
     lambda a: sc.logsumexp(a, axis=1, b=A23 + 2, return_sign=True), (A23,)),
    (lambda a: special.softmax(a, 1), lambda a: sc.softmax(a, 1), (A23,)),
    (lambda x: stats.t.logpdf(x, 3.0, loc=0.5, scale=2.0),
     lambda x: st.t.logpdf(x, 3.0, loc=0.5, scale=2.0), (X,)),
    (lambda x: stats.t.logpdf(x, df=3.0), lambda x: st.t.logpdf(x, df=3.0), (X,)),
    (stats.norm.cdf, st.norm.cdf, (X,)),
    (stats.gamma.ppf, st.gamma.ppf, (0.3, 2.0)),
    (stats.poisson.logpmf, st.poisson.logpmf, ([0, 1, 3], 2.5)),
    (lambda k: stats.binom.cdf(k, 6, p=0.3), lambda k: st.binom.cdf(k, 6, p=0.3), ([0, 2],)),
    (stats.dirichlet.logpdf, st.dirichlet.logpdf, ([0.2, 0.3], [1.0, 2.0, 3.0])),
    (stats.multivariate_normal.logpdf, st.multivariate_normal.logpdf, (X[:3], None, 2.0)),
    (stats.multivariate_normal.entropy, st.multivariate_normal.entropy, (None, SPD)),
    (linalg.cho_factor, sl.cho_factor, (SPD,)),
    (linalg.lu_factor, sl.lu_factor, (M,)),
    (lambda a, b: linalg.solve_triangular(a, b, lower=True),
     lambda a, b: sl.solve_triangular(a, b, lower=True), (SPD, X[:3])),
    (linalg.expm, sl.expm, (M,)),
    (lambda a, b: signal.convolve(a, b, mode="same"),
     lambda a, b: ss.convolve(a, b, mode="same"), (X, X[:2])),
    (integrate.simpson, si.simpson, (X,)),
]


@pytest.mark.parametrize("ours, theirs, args", PLAIN)
def test_plain_values_are_scipys_exactly(ours, theirs, args):
    got, want = ours(*args), theirs(*args)
    for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want))):
        onp.testing.assert_array_equal(g, w)
        assert type(g) is type(w) and onp.result_type(g) == onp.result_type(w)


# --- traced values: scipy's values, closed-form derivatives -------------------------------

def test_gammaln_digamma_polygamma_chain():
    # d/dx gammaln = digamma, and its derivatives are polygamma(n, x), to the third order
    f = special.gammaln
    for n, d in enumerate([fgrad.grad(f), fgrad.grad(fgrad.grad(f)),
                           fgrad.grad(fgrad.grad(fgrad.grad(f)))]):
        assert d(1.7) == pytest.approx(sc.polygamma(n, 1.7), rel=1e-12)


@pytest.mark.parametrize("ours, theirs, args", [
    (special.dawsn, sc.dawsn, (0.7,)), (special.poch, sc.poch, (1.3, 2.2)),
    (special.owens_t, sc.owens_t, (0.8, -1.4)), (special.boxcox, sc.boxcox, (2.3, 0.6)),
    (special.boxcox1p, sc.boxcox1p, (0.4, -1.2)),
    (lambda x: special.hyp1f1(0.5, 1.5, x), lambda x: sc.hyp1f1(0.5, 1.5, x), (-1.1,)),
    (lambda x: special.hyp2f1(0.5, 1.5, 2.5, x), lambda x: sc.hyp2f1(0.5, 1.5, 2.5, x), (0.6,)),
    (special.expm1, sc.expm1, (0.3,)), (special.log1p, sc.log1p, (-0.4,)),
    (special.cbrt, sc.cbrt, (-2.5,)), (special.exp2, sc.exp2, (1.3,)),
    (special.exp10, sc.exp10, (0.4,)), (special.cosm1, sc.cosm1, (1e-3,)),
    (special.sindg, sc.sindg, (33.0,)), (special.cosdg, sc.cosdg, (123.0,)),
    (special.tandg, sc.tandg, (-40.0,)), (special.cotdg, sc.cotdg, (70.0,)),
    (special.exprel, sc.exprel, (0.3,)), (special.exprel, sc.exprel, (-1.7,)),
    (special.powm1, sc.powm1, (1.7, -0.4)), (special.binom, sc.binom, (4.5, 1.3)),
    (special.inv_boxcox, sc.inv_boxcox, (0.8, 0.5)), (special.inv_boxcox, sc.inv_boxcox,
                                                      (0.8, -0.3)),
    (special.huber, sc.huber, (1.2, -0.7)), (special.huber, sc.huber, (1.2, 2.5)),
    (special.pseudo_huber, sc.pseudo_huber, (0.8, -1.9)),
    (special.ndtri_exp, sc.ndtri_exp, (-2.3,)), (special.ellipk, sc.ellipk, (0.4,)),
    (special.ellipe, sc.ellipe, (0.7,)),
    (lambda t: special.stdtr(3.5, t), lambda t: sc.stdtr(3.5, t), (0.7,)),
    (lambda p: special.stdtrit(3.5, p), lambda p: sc.stdtrit(3.5, p), (0.3,)),
    (lambda x: special.chdtr(2.5, x), lambda x: sc.chdtr(2.5, x), (1.3,)),
    (lambda x: special.chdtrc(2.5, x), lambda x: sc.chdtrc(2.5, x), (1.3,)),
    (lambda m: special.pdtr(3, m), lambda m: sc.pdtr(3, m), (2.2,)),
    (lambda m: special.pdtrc(3.7, m), lambda m: sc.pdtrc(3.7, m), (2.2,))])
def test_more_special_functions_against_scipys_own_values(ours, theirs, args):
    got = fgrad.grad(ours, argnums=tuple(range(len(args))))(*args)
    assert ours(*args) == theirs(*args)
    for i, g in enumerate(got):
        up, down = list(args), list(args)
        up[i] += 1e-6
        down[i] -= 1e-6
        assert g == pytest.approx((theirs(*up) - theirs(*down)) / 2e-6, rel=1e-7), i


def test_inv_boxcox_and_exprel_at_and_near_their_limits():
    # (1 + l y)^(1/l) -> exp(y): its derivative in l, -y^2 exp(y) / 2 at 0 (the series of
    # boxcox's rule); exprel' = 1/2 at 0 and its series (no cancellation) up to |x| = 1/2
    y = 0.8
    d = fgrad.grad(special.inv_boxcox, argnums=1)
    assert d(y, 0.0) == pytest.approx(-y * y * onp.exp(y) / 2, rel=1e-14)
    for lam in (1e-9, -3e-5, 2e-4, 0.01):
        assert d(y, lam) == pytest.approx(
            (sc.inv_boxcox(y, lam + 1e-6) - sc.inv_boxcox(y, lam - 1e-6)) / 2e-6, rel=1e-7)
    e = fgrad.grad(special.exprel)
    assert e(0.0) == 0.5 and fgrad.grad(e)(0.0) == pytest.approx(1 / 3, rel=1e-15)
    for x in (1e-7, 0.01, 0.49, 0.51):
        assert e(x) == pytest.approx((x * onp.exp(x) - onp.expm1(x)) / x ** 2, rel=1e-9)
    # the elliptic integrals' jets, by their recurrence, against nested derivatives
    for f in (special.ellipk, special.ellipe):
        nested, want = f, []
        for _ in range(4):
            nested = fgrad.grad(nested)
            want.append(nested(0.4))
        onp.testing.assert_allclose(fgrad.derivatives(f, 4)(0.4)[1:], want, rtol=1e-12)


def test_boxcox_in_lambda_at_and_near_zero():
    # (x^l - 1) / l -> log x: its derivative in l, (log x)^2 / 2 at 0, cancels in the
    # closed form near 0 (a series there)
    x = 2.3
    d = fgrad.grad(special.boxcox, argnums=1)
    assert d(x, 0.0) == pytest.approx(onp.log(x) ** 2 / 2, rel=1e-15)
    for lam in (1e-9, -3e-5, 2e-4, 0.3):
        assert d(x, lam) == pytest.approx(
            (sc.boxcox(x, lam + 1e-6) - sc.boxcox(x, lam - 1e-6)) / 2e-6, rel=1e-7)
    assert fgrad.grad(fgrad.grad(special.boxcox, argnums=1), argnums=1)(x, 0.0) == \
        pytest.approx(onp.log(x) ** 3 / 3, rel=1e-12)


def test_logsumexp_gradient_is_softmax_and_hessian_its_covariance():
    a = rng.standard_normal(4)
    s = sc.softmax(a)
    onp.testing.assert_allclose(fgrad.grad(special.logsumexp)(a), s, rtol=1e-13)
    onp.testing.assert_allclose(fgrad.hessian(special.logsumexp)(a),
                                onp.diag(s) - onp.outer(s, s), atol=1e-13)


def test_logsumexp_with_a_negative_sum_gives_the_sign_and_its_derivative():
    a, b = onp.array([0.1, 0.5]), onp.array([1.0, -2.0])
    (val, sign), pull = fgrad.vjp(lambda a: special.logsumexp(a, b=b, return_sign=True), a)
    want = sc.logsumexp(a, b=b, return_sign=True)
    assert val == want[0] and sign == want[1] == -1
    total = onp.sum(b * onp.exp(a))  # d log|S| / da = b e^a / S
    onp.testing.assert_allclose(pull((1.0, 0.0))[0], b * onp.exp(a) / total, rtol=1e-13)
    # staged and batched, the same derivative: the weights where the result could be
    # infinite (a staged or batched result) had left out the sum's sign
    f = lambda a: special.logsumexp(a, b=b, return_sign=True)[0]  # noqa: E731
    want = fgrad.grad(f)(a)
    for got in (fgrad.jit(fgrad.grad(f))(a), fgrad.grad(fgrad.jit(f))(a),
                fgrad.vmap(fgrad.grad(f))(onp.stack([a, a]))[1],
                fgrad.jacfwd(fgrad.jit(f))(a)):
        onp.testing.assert_array_equal(got, want)


def test_normal_logpdf_derivatives_in_point_loc_and_scale():
    x, loc, scale = 1.3, 0.4, 1.7
    z = (x - loc) / scale
    g = fgrad.grad(stats.norm.logpdf, argnums=(0, 1, 2))(x, loc, scale)
    assert g == pytest.approx((-z / scale, z / scale, (z * z - 1) / scale), rel=1e-13)


def test_t_logpdf_takes_keyword_parameters_and_differentiates_in_df():
    def f(df):
        return np.sum(stats.t.logpdf(X, df=df, scale=2.0))
    value, g = fgrad.value_and_grad(f)(3.0)
    assert value == onp.sum(st.t.logpdf(X, df=3.0, scale=2.0))
    eps = 1e-6
    assert g == pytest.approx((f(3.0 + eps) - f(3.0 - eps)) / (2 * eps), rel=1e-7)


@pytest.mark.parametrize("name, x, shapes", [
    ("gumbel_r", 0.7, {}), ("gumbel_l", -0.4, {}), ("pareto", 3.1, {"b": 2.5}),
    ("weibull_min", 1.2, {"c": 1.7}), ("truncnorm", 0.6, {"a": -1.2, "b": 2.1}),
    ("vonmises", 0.9, {"kappa": 2.2}), ("gennorm", -0.8, {"beta": 1.6}),
    ("wrapcauchy", 2.5, {"c": 0.35}),
    # (plain-only before the third audit)
    ("gompertz", 1.1, {"c": 0.8}), ("fisk", 1.3, {"c": 2.2}), ("genpareto", 1.6, {"c": 0.6}),
    ("invgauss", 1.2, {"mu": 0.9}), ("johnsonsu", 0.4, {"a": 0.3, "b": 1.6})])
def test_more_distributions_against_scipys_own_values(name, x, shapes):
    # every parameter by keyword, loc and scale too: the gradient of logpdf against central
    # differences of scipy's logpdf; cdf's derivative in the point is scipy's pdf
    ours, theirs = getattr(stats, name), getattr(st, name)
    params = dict(shapes, loc=0.2, scale=1.4)
    keys = list(params)

    def f(x, *vals):
        return ours.logpdf(x, **dict(zip(keys, vals)))

    vals = [params[k] for k in keys]
    assert f(x, *vals) == theirs.logpdf(x, **params)
    got = fgrad.grad(f, argnums=tuple(range(len(vals) + 1)))(x, *vals)
    eps = 1e-6
    for i, g in enumerate(got):
        up, down = [x, *vals], [x, *vals]
        up[i] += eps
        down[i] -= eps
        fd = (theirs.logpdf(up[0], **dict(zip(keys, up[1:]))) -
              theirs.logpdf(down[0], **dict(zip(keys, down[1:])))) / (2 * eps)
        assert g == pytest.approx(fd, rel=1e-6, abs=1e-8), (name, i)
    assert fgrad.grad(lambda x: ours.cdf(x, **params))(x) == pytest.approx(
        theirs.pdf(x, **params), rel=1e-12)


def test_scipy_lstsq_gives_scipys_values_and_numpys_derivatives():
    a, b = rng.standard_normal((5, 3)), rng.standard_normal(5)
    for got, want in zip(fgrad.jit(linalg.lstsq)(a, b), sl.lstsq(a, b)):  # (residues: a 0-d
        onp.testing.assert_array_equal(got, want)  # array for a vector b, as scipy's)

    def total(lstsq):
        return lambda a, b: sum(np.sum(out) for i, out in enumerate(lstsq(a, b)) if i != 2)
    got = fgrad.grad(total(linalg.lstsq), argnums=(0, 1))(a, b)
    want = fgrad.grad(total(np.linalg.lstsq), argnums=(0, 1))(a, b)
    for g, w in zip(got, want):
        onp.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    # of a fixed matrix, b's values are not read: vmap maps over b, jit traces once
    bs = rng.standard_normal((4, 5))
    onp.testing.assert_allclose(fgrad.vmap(lambda b: linalg.lstsq(a, b)[0])(bs),
                                [sl.lstsq(a, b)[0] for b in bs], rtol=1e-12)
    staged = fgrad.jit(lambda b: linalg.lstsq(a, b)[:2])
    for b in bs:
        for got, want in zip(staged(b), sl.lstsq(a, b)):
            onp.testing.assert_array_equal(got, want)
    assert sum(len(graphs) for graphs in staged.cache.values()) == 1


def _linalg_cases():
    r = onp.random.default_rng(7)
    c = r.uniform(-1, 1, 3) + [6.0, 0, 0]
    ab = r.uniform(-1, 1, (3, 5)) + [[0.0], [0.0], [6.0]]
    return {
        "solve_discrete_lyapunov": ((0.3 * r.uniform(-1, 1, (3, 3)), r.uniform(-1, 1, (3, 3))),
                                    {}),
        "eigvalsh_tridiagonal": ((r.uniform(-1, 1, 4), r.uniform(-1, 1, 3)), {}),
        "eigh_tridiagonal": ((r.uniform(-1, 1, 4), r.uniform(-1, 1, 3)), {}),
        "solveh_banded": ((ab, r.uniform(-1, 1, (5, 2))), {}),
        "orthogonal_procrustes": ((r.uniform(-1, 1, (4, 3)), r.uniform(-1, 1, (4, 3))), {}),
        "pinvh": ((r.uniform(-1, 1, (3, 3)) + 4 * onp.eye(3),), {"lower": False}),
        "solve_toeplitz": ((c, r.uniform(-1, 1, (3, 2))), {}),
        "solve_circulant": ((c, r.uniform(-1, 1, 3)), {}),
        "matmul_toeplitz": ((c, r.uniform(-1, 1, (3, 2))), {}),
        "khatri_rao": ((r.uniform(-1, 1, (2, 3)), r.uniform(-1, 1, (4, 3))), {}),
        "diagsvd": ((c,), {"M": 3, "N": 5}),
        "signm": ((r.uniform(-1, 1, (3, 3)) + onp.diag([3.0, -3.0, 3.0]),), {})}


@pytest.mark.parametrize("name", sorted(_linalg_cases()))
def test_more_scipy_linalg_functions_have_scipys_values_and_its_central_differences(name):
    args, kw = _linalg_cases()[name]
    ours, theirs = getattr(linalg, name), getattr(sl, name)

    def parts(out):
        return out if isinstance(out, tuple) else (out,)
    for got, want in zip(parts(fgrad.jit(lambda *a: ours(*a, **kw))(*args)),
                         parts(theirs(*args, **kw)), strict=True):
        onp.testing.assert_array_equal(got, want)
    # a smooth scalar of every output (eigenvectors through their squares: signs are free)
    for i, x in enumerate(args):
        def at(v, f, m):
            out = parts(f(*args[:i], v, *args[i + 1:], **kw))
            return sum(m.sum(m.sin(o) if k == 0 or name != "eigh_tridiagonal" else o * o)
                       for k, o in enumerate(out))
        got = fgrad.grad(lambda v: at(v, ours, np))(x)
        onp.testing.assert_allclose(got, central_gradient(lambda v: at(v, theirs, onp), x),
                                    rtol=1e-6, atol=1e-7)


def test_riccati_solutions_match_scalar_closed_forms_and_scipys_differences():
    # scalar equations: 2 a x - x^2 b^2 / r + q = 0 and b^2 x^2 + (r - a^2 r - q b^2) x = q r
    def care(a, b, q, r):
        return r * (a + np.sqrt(a * a + b * b * q / r)) / (b * b)

    def dare(a, b, q, r):
        c = r - a * a * r - q * b * b
        return (-c + np.sqrt(c * c + 4 * b * b * q * r)) / (2 * b * b)
    p = (0.3, 0.7, 1.5, 0.8)
    for name, closed in (("solve_continuous_are", care), ("solve_discrete_are", dare)):
        ours = getattr(linalg, name)

        def f(*v):
            return ours(*[np.reshape(x, (1, 1)) for x in v])[0, 0]
        onp.testing.assert_allclose(f(*p), closed(*p), rtol=1e-13)
        onp.testing.assert_allclose(fgrad.grad(f, argnums=(0, 1, 2, 3))(*p),
                                    fgrad.grad(closed, argnums=(0, 1, 2, 3))(*p), rtol=1e-10)
        onp.testing.assert_allclose(fgrad.hessian(f)(*p), fgrad.hessian(closed)(*p),
                                    rtol=1e-8)
    # matrices: scipy's values, and its differences along symmetric q and r
    r = onp.random.default_rng(11)
    a, b = r.uniform(-1, 1, (3, 3)), r.uniform(-1, 1, (3, 2))
    q0, r0 = r.uniform(-1, 1, (3, 3)), r.uniform(-1, 1, (2, 2))
    for name in ("solve_continuous_are", "solve_discrete_are"):
        def at(a, b, q0, r0, f, m):
            x = f(a, b, q0 @ q0.T + onp.eye(3), r0 @ r0.T + onp.eye(2))
            return m.sum(m.sin(x))
        args = (a, b, q0, r0)
        onp.testing.assert_array_equal(
            fgrad.jit(getattr(linalg, name))(a, b, onp.eye(3), onp.eye(2)),
            getattr(sl, name)(a, b, onp.eye(3), onp.eye(2)))
        for i, x in enumerate(args):
            def along(v, f, m):
                return at(*args[:i], v, *args[i + 1:], f, m)
            onp.testing.assert_allclose(
                fgrad.grad(lambda v: along(v, getattr(linalg, name), np))(x),
                central_gradient(lambda v: along(v, getattr(sl, name), onp), x, 1e-5),
                rtol=1e-5, atol=1e-7)
    with pytest.raises(NotImplementedError, match="e= and s="):
        fgrad.grad(lambda q: np.sum(linalg.solve_continuous_are(a, b, q, onp.eye(2),
                                                                 s=onp.ones((3, 2)))))(onp.eye(3))


def test_more_scipy_linalg_functions_refuse_what_they_do_not_differentiate_by_name():
    d, e, c = onp.array([1.0, 2.0, 3.0]), onp.array([0.5, 0.5]), onp.array([4.0, 1.0, 0.5])
    for f, what in [(lambda d: linalg.eigh_tridiagonal(d, e, select="i", select_range=(0, 1)),
                     "select= and select_range="),
                    (lambda c: linalg.solve_circulant(c, d, singular="lstsq"), "singular"),
                    (lambda c: linalg.solve_circulant(c, d, tol=1e-3), "tol"),
                    (lambda c: linalg.pinvh(onp.eye(3) * c[0], atol=c[1]), "atol")]:
        with pytest.raises((NotImplementedError, NoDerivativeRuleError), match=what):
            fgrad.grad(lambda v: np.sum(f(v)[0]))(d if "select" in what else c)
    # a stack of right-hand sides: one band solve, the examples as its columns
    ab = onp.array([[0.0, 0.3, -0.2], [4.0, 5.0, 6.0]])
    bs = rng.standard_normal((4, 3))
    onp.testing.assert_allclose(fgrad.vmap(lambda b: linalg.solveh_banded(ab, b))(bs),
                                [sl.solveh_banded(ab, b) for b in bs], rtol=1e-12)


def test_generalized_eigh_against_the_diagonal_pencils_closed_form():
    # a v = w b v with a and b diagonal: w_i = a_ii / b_ii, v_i = e_i / sqrt(b_ii); beside an
    # off-diagonal a, dw_i = v_i^T (da - w_i db) v_i (the eigenvalue's derivative in b)
    a, b = onp.array([1.0, -2.0, 3.5]), onp.array([2.0, 0.5, 1.5])

    def eig(a, b):
        return linalg.eigh(np.diag(a), np.diag(b))

    w, v = eig(a, b)
    onp.testing.assert_allclose(w, onp.sort(a / b), rtol=1e-14)
    order = onp.argsort(a / b)
    for i, k in enumerate(order):  # (the eigenvalues ascending: k is its diagonal entry)
        da, db = fgrad.grad(lambda a, b: eig(a, b)[0][i], argnums=(0, 1))(a, b)
        onp.testing.assert_allclose(da, onp.eye(3)[k] / b[k], atol=1e-14)
        onp.testing.assert_allclose(db, -onp.eye(3)[k] * a[k] / b[k] ** 2, atol=1e-14)
        dv = fgrad.grad(lambda b: eig(a, b)[1][k, i] ** 2)(b)  # (v_ki^2 = 1 / b_k)
        onp.testing.assert_allclose(dv, -onp.eye(3)[k] / b[k] ** 2, atol=1e-14)
    A = rng.normal(size=(3, 3))
    B = onp.diag(b) + 0.1 * rng.normal(size=(3, 3))
    w, v = sl.eigh(A, B)
    dB = rng.normal(size=(3, 3))
    tangent = fgrad.jvp(lambda B: linalg.eigh(A, B, eigvals_only=True), (B,), (dB,))[1]
    sym = onp.tril(dB) + onp.tril(dB, -1).T  # (the lower triangle read)
    onp.testing.assert_allclose(tangent, -w * onp.einsum("ki,kl,li->i", v, sym, v),
                                rtol=1e-10)
    with pytest.raises(NotImplementedError, match="type=2"):
        fgrad.grad(lambda A: np.sum(linalg.eigh(A, B, type=2)[0]))(A)


def test_lfilter_smoothing_derivative_in_its_coefficient_against_the_closed_form():
    # (an audit's lfilter of traced values raised NoDerivativeRuleError)
    # exponential smoothing y[n] = al x[n] + (1 - al) y[n-1] = al sum_k (1 - al)^k x[n-k]
    x = onp.array([0.3, -1.2, 0.8, 2.0, -0.5, 0.1])
    n = onp.arange(6)
    k = n[:, None] - n[None, :]  # (n, m): the lag n - m, where m <= n
    lower = k >= 0

    def smoothed(al):
        return signal.lfilter(al * onp.ones(1), np.stack([1.0, al - 1.0]), x)

    al = 0.35
    onp.testing.assert_array_equal(smoothed(al), ss.lfilter([al], [1.0, al - 1.0], x))
    onp.testing.assert_array_equal(fgrad.jit(smoothed)(al), smoothed(al))
    kk = onp.where(lower, k, 0)
    d = onp.where(lower, (1 - al) ** kk - al * kk * (1 - al) ** onp.maximum(kk - 1, 0), 0) @ x
    onp.testing.assert_allclose(fgrad.jacfwd(smoothed)(al), d, rtol=1e-12)
    onp.testing.assert_allclose(fgrad.jacrev(smoothed)(al), d, rtol=1e-12)
    # in x: the lower-triangular Toeplitz matrix of the impulse response al (1 - al)^k
    b, a = onp.array([0.5, 0.3, -0.2]), onp.array([1.2, -0.4, 0.1])
    J = fgrad.jacrev(lambda x: signal.lfilter(b, a, x))(x)
    onp.testing.assert_allclose(J, onp.stack([ss.lfilter(b, a, e) for e in onp.eye(6)], 1),
                                rtol=1e-13, atol=1e-15)
    check_grads(lambda b, a, x: signal.lfilter(b, a, x), (b, a, x), order=2)
    X = onp.stack([x, x[::-1], 2 * x])
    for how in (fgrad.vmap, lambda f: fgrad.jit(fgrad.vmap(f))):
        onp.testing.assert_allclose(how(lambda x: signal.lfilter(b, a, x))(X),
                                    ss.lfilter(b, a, X), rtol=1e-14)
    onp.testing.assert_allclose(
        fgrad.vmap(fgrad.grad(lambda a, x: np.sum(signal.lfilter(b, a, x) ** 2)),
                   in_axes=(None, 0))(a, X),
        onp.stack([fgrad.grad(lambda a: np.sum(signal.lfilter(b, a, xi) ** 2))(a) for xi in X]),
        rtol=1e-12)
    # with initial conditions (refused on traced values before): smoothing from a state s,
    # y[n] = al y[n-1] + (1 - al) x[n] with y[-1] = s / al, so dy[n]/ds = al^n, and the final
    # state zf = al y[N-1] has d zf / ds = al^N; scipy's values, eager and staged
    al, s0 = 0.3, onp.array([0.7])
    ys = signal.lfilter([1 - al], [1, -al], x, zi=np.asarray(s0) * 1.0)
    for got, want in zip(fgrad.jit(lambda s: signal.lfilter([1 - al], [1, -al], x, zi=s))(s0),
                         ss.lfilter([1 - al], [1, -al], x, zi=s0)):
        onp.testing.assert_array_equal(got, want)
    onp.testing.assert_array_equal(ys[0], ss.lfilter([1 - al], [1, -al], x, zi=s0)[0])
    dy, dzf = fgrad.jacfwd(lambda s: signal.lfilter([1 - al], [1, -al], x, zi=s))(s0)
    onp.testing.assert_allclose(dy[:, 0], al ** onp.arange(6), rtol=1e-14)
    assert dzf[0, 0] == pytest.approx(al ** 6, rel=1e-13)
    zi = onp.array([0.4, -0.3])
    check_grads(lambda b, a, x, zi: signal.lfilter(b, a, x, zi=zi), (b, a, x, zi), order=2)
    check_grads(lambda b, a, x, zi: signal.lfilter(b, a, x[:1], zi=zi), (b, a, x, zi), order=1)
    Z = onp.stack([zi, -zi, 2 * zi])
    for got, want in zip(fgrad.vmap(lambda x, z: signal.lfilter(b, a, x, zi=z))(X, Z),
                         ss.lfilter(b, a, X, zi=Z)):
        onp.testing.assert_allclose(got, want, rtol=1e-14)


def test_sosfilt_is_scipys_and_its_sections_differentiate_as_lfilter_cascaded():
    # (plain-only before: NoDerivativeRuleError)
    sos = ss.butter(4, 0.2, output="sos")
    x = onp.sin(onp.arange(12.0)) + 0.1 * onp.arange(12.0)
    onp.testing.assert_array_equal(signal.sosfilt(sos, x), ss.sosfilt(sos, x))
    onp.testing.assert_array_equal(fgrad.jit(signal.sosfilt)(sos, x), ss.sosfilt(sos, x))
    # linear in x: the Jacobian is the filter's impulse responses, scipy's own
    J = fgrad.jacfwd(lambda x: signal.sosfilt(sos, x))(x)
    onp.testing.assert_allclose(J, onp.stack([ss.sosfilt(sos, e) for e in onp.eye(12)], 1),
                                rtol=1e-10, atol=1e-15)
    # in the sections: the derivative of the cascade of lfilters (its a_0 held at 1)
    def cascade(s):
        y = x
        for k in range(2):
            y = ss.lfilter(s[k, :3], s[k, 3:], y)
        return y
    s2 = sos[:2]
    g = fgrad.grad(lambda s: np.sum(signal.sosfilt(s, x) ** 2))(s2)
    eps, want = 1e-6, onp.zeros_like(s2)
    for i in onp.ndindex(*s2.shape):
        e = onp.zeros_like(s2)
        e[i] = eps
        want[i] = (onp.sum(cascade(s2 + e) ** 2) - onp.sum(cascade(s2 - e) ** 2)) / (2 * eps)
    onp.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)
    X = onp.stack([x, -x, 2 * x])
    onp.testing.assert_allclose(fgrad.vmap(lambda x: signal.sosfilt(sos, x))(X),
                                ss.sosfilt(sos, X), rtol=1e-13)
    # from a steady state (scipy's sosfilt_zi) scaled by the first sample: y and zf against
    # scipy's, their derivatives in x and zi against its central differences
    zi = ss.sosfilt_zi(sos) * x[0]
    for got, want in zip(fgrad.jit(lambda x, z: signal.sosfilt(sos, x, zi=z))(x, zi),
                         ss.sosfilt(sos, x, zi=zi)):
        onp.testing.assert_array_equal(got, want)

    def loss(sosfilt, x, z):
        y, zf = sosfilt(sos, x, zi=z)
        return np.sum(y * onp.arange(12.0)) + np.sum(zf ** 2)

    gx, gz = fgrad.grad(lambda x, z: loss(signal.sosfilt, x, z), argnums=(0, 1))(x, zi)
    for arg, g, at in ((x, gx, 0), (zi, gz, 1)):
        want = onp.zeros_like(arg)
        for i in onp.ndindex(*arg.shape):
            e = onp.zeros_like(arg)
            e[i] = eps
            up, down = [x, zi], [x, zi]
            up[at], down[at] = arg + e, arg - e
            want[i] = (loss(ss.sosfilt, *up) - loss(ss.sosfilt, *down)) / (2 * eps)
        onp.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6)


def test_filtfilt_is_scipys_linear_in_the_signal_and_differentiable_in_the_filter():
    # (plain-only before: NoDerivativeRuleError) its Jacobian in x is scipy's filtfilt of
    # the unit signals; in b, scipy's central differences; lfilter_zi of the one-pole
    # smoother y[n] = al y[n-1] + (1 - al) x[n] is its state al at a unit step
    b, a = onp.array([0.3, 0.4, 0.2]), onp.array([1.1, -0.35])
    x = onp.cos(onp.arange(14.0) / 3) + 0.05 * onp.arange(14.0)
    for kw in ({}, {"padtype": "even"}, {"padtype": "constant", "padlen": 4},
               {"padtype": None}):
        onp.testing.assert_array_equal(fgrad.jit(lambda x: signal.filtfilt(b, a, x, **kw))(x),
                                       ss.filtfilt(b, a, x, **kw))
        J = fgrad.jacrev(lambda x: signal.filtfilt(b, a, x, **kw))(x)
        onp.testing.assert_allclose(J, onp.stack([ss.filtfilt(b, a, e, **kw)
                                                  for e in onp.eye(14)], 1),
                                    rtol=1e-11, atol=1e-14)
    g, eps = fgrad.grad(lambda b: np.sum(signal.filtfilt(b, a, x) ** 2))(b), 1e-6
    want = [(onp.sum(ss.filtfilt(b + e, a, x) ** 2) - onp.sum(ss.filtfilt(b - e, a, x) ** 2))
            / (2 * eps) for e in eps * onp.eye(3)]
    onp.testing.assert_allclose(g, want, rtol=1e-7)
    assert fgrad.grad(lambda al: signal.lfilter_zi([1 - al], [1, -al])[0])(0.3) == \
        pytest.approx(1.0, rel=1e-14)
    with pytest.raises(NotImplementedError, match="method='gust'"):
        fgrad.grad(lambda x: np.sum(signal.filtfilt(b, a, x, method="gust")))(x)


def test_medfilt_picks_each_windows_median_sample():
    # (plain-only before: NoDerivativeRuleError) each output's derivative is 1 at the sample
    # its zero-padded window's median is, 0 where that is a padded zero
    x = onp.random.default_rng(5).uniform(0.5, 2.0, (4, 6))
    for k in (None, 3, [3, 5], [1, 3]):
        ks = onp.broadcast_to(3 if k is None else k, (2,))
        J = fgrad.jacobian(lambda x: signal.medfilt(x, k))(x)
        onp.testing.assert_array_equal(signal.medfilt(np.asarray(x) * 1.0, k), ss.medfilt(x, k))
        index = onp.pad(onp.arange(x.size).reshape(x.shape) + 1, [(n // 2, n // 2) for n in ks])
        values = onp.pad(x, [(n // 2, n // 2) for n in ks])
        want = onp.zeros(x.shape + x.shape)
        for i in range(4):
            for j in range(6):
                w = values[i:i + ks[0], j:j + ks[1]].ravel()
                at = index[i:i + ks[0], j:j + ks[1]].ravel()[onp.argsort(w)[w.size // 2]]
                if at:
                    want[i, j].flat[at - 1] = 1.0
        onp.testing.assert_array_equal(J, want)
    onp.testing.assert_array_equal(fgrad.jit(signal.medfilt2d)(x), ss.medfilt2d(x))
    onp.testing.assert_array_equal(fgrad.jacobian(signal.medfilt2d)(x),
                                   fgrad.jacobian(signal.medfilt)(x))
    # tied samples share the derivative evenly, as median's
    onp.testing.assert_array_equal(fgrad.jacobian(signal.medfilt)(onp.array([1.0, 2, 2, 3])),
                                   [[1, 0, 0, 0], [0, 0.5, 0.5, 0], [0, 0.5, 0.5, 0],
                                    [0, 0, 1, 0]])
    with pytest.raises(ValueError, match="odd"):
        fgrad.grad(lambda x: np.sum(signal.medfilt(x, 4)))(x[0])


def test_savgol_filter_is_linear_in_the_signal_and_keeps_polynomials():
    # (plain-only before) a polynomial of its order passes unchanged (deriv=1: its slope), so
    # the derivative of the filtered quadratic in its coefficient c is the monomial itself;
    # the Jacobian in x is scipy's filter of the unit signals in every mode
    t = onp.linspace(-1, 1, 11)

    def smooth(c, **kw):
        return signal.savgol_filter(c * t ** 2 + t, 5, 2, **kw)

    onp.testing.assert_allclose(fgrad.jacfwd(smooth)(1.5), t ** 2, atol=1e-13)
    onp.testing.assert_allclose(fgrad.jacrev(lambda c: smooth(c, deriv=1, delta=0.2))(1.5),
                                2 * t, atol=1e-12)
    x = onp.sin(3 * t)
    for mode in ("interp", "mirror", "nearest", "constant", "wrap"):
        J = fgrad.jacrev(lambda x: signal.savgol_filter(x, 5, 3, mode=mode, cval=0.5))(x)
        onp.testing.assert_allclose(
            J, onp.stack([ss.savgol_filter(e, 5, 3, mode=mode) for e in onp.eye(11)], 1),
            atol=1e-13)
        onp.testing.assert_array_equal(fgrad.jit(lambda x: signal.savgol_filter(
            x, 5, 3, mode=mode, cval=0.5))(x), ss.savgol_filter(x, 5, 3, mode=mode, cval=0.5))
    X = onp.stack([x, -x, 2 * x])
    onp.testing.assert_allclose(fgrad.vmap(lambda x: signal.savgol_filter(x, 5, 2))(X),
                                ss.savgol_filter(X, 5, 2), rtol=1e-13)
    # a signal longer than 4 windows: the band and the ends' blocks in place of the matrix
    x = onp.sin(onp.linspace(0, 7, 40))
    for mode in ("interp", "wrap"):
        for jac in (fgrad.jacfwd, fgrad.jacrev):
            onp.testing.assert_allclose(
                jac(lambda x: signal.savgol_filter(x, 7, 2, deriv=1, mode=mode))(x),
                onp.stack([ss.savgol_filter(e, 7, 2, deriv=1, mode=mode)
                           for e in onp.eye(40)], 1), atol=1e-13)
    with pytest.raises(NoDerivativeRuleError, match="cval"):
        fgrad.grad(lambda c: np.sum(signal.savgol_filter(x, 5, 2, mode="constant", cval=c)))(
            0.5)


def test_pairwise_distances_are_scipys_and_differentiable_in_the_points():
    # (scipy.spatial was not mirrored) d|x_i - x_j| / dx_i = (x_i - x_j) / |x_i - x_j|; every
    # metric's values scipy's, its gradient scipy's central differences; a point's distance
    # to itself has derivative zero, not NaN
    from fgrad.scipy.spatial import distance
    import scipy.spatial.distance as sd
    X = rng.normal(size=(4, 3))
    i, j = onp.triu_indices(4, 1)
    J = fgrad.jacrev(distance.pdist)(X)
    for k, (a, b) in enumerate(zip(i, j)):
        unit = (X[a] - X[b]) / onp.linalg.norm(X[a] - X[b])
        onp.testing.assert_allclose(J[k, a], unit, rtol=1e-12)
        onp.testing.assert_allclose(J[k, b], -unit, rtol=1e-12)
    assert onp.isfinite(fgrad.grad(lambda X: np.sum(distance.cdist(X, X)))(X)).all()
    Y, eps = rng.normal(size=(2, 3)), 1e-6
    for kw in ({}, {"metric": "sqeuclidean"}, {"metric": "cityblock"},
               {"metric": "minkowski", "p": 3.0}, {"metric": "cosine"},
               {"metric": "correlation"}, {"metric": "chebyshev"},
               {"metric": "seuclidean", "V": onp.array([0.5, 1.0, 2.0])},
               {"metric": "mahalanobis", "VI": onp.eye(3) + 0.1},
               {"metric": lambda u, v: np.sum((u - v) ** 4)}):
        plain = kw if not callable(kw.get("metric")) else \
            {"metric": lambda u, v: onp.sum((u - v) ** 4)}
        onp.testing.assert_array_equal(fgrad.jit(lambda X: distance.cdist(X, Y, **kw))(X),
                                       sd.cdist(X, Y, **plain))
        onp.testing.assert_array_equal(fgrad.jit(lambda X: distance.pdist(X, **kw))(X),
                                       sd.pdist(X, **plain))
        g = fgrad.grad(lambda X: np.sum(distance.cdist(X, Y, **kw) ** 2))(X)
        want = onp.zeros_like(X)
        for idx in onp.ndindex(*X.shape):
            e = onp.zeros_like(X)
            e[idx] = eps
            want[idx] = (onp.sum(sd.cdist(X + e, Y, **plain) ** 2) -
                         onp.sum(sd.cdist(X - e, Y, **plain) ** 2)) / (2 * eps)
        onp.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8 * onp.abs(want).max())
    # an RBF kernel matrix from the condensed distances, and back: squareform is linear
    def kernel(X):
        return np.exp(-distance.squareform(distance.pdist(X, "sqeuclidean")) / 2)

    onp.testing.assert_array_equal(kernel(np.asarray(X) * 1.0),
                                   onp.exp(-sd.squareform(sd.pdist(X, "sqeuclidean")) / 2))
    onp.testing.assert_allclose(distance.squareform(kernel(np.asarray(X) * 1.0),
                                                    checks=False),
                                onp.exp(-sd.pdist(X, "sqeuclidean") / 2), rtol=1e-15)
    onp.testing.assert_allclose(fgrad.vmap(distance.pdist)(onp.stack([X, 2 * X])),
                                [sd.pdist(X), 2 * sd.pdist(X)], rtol=1e-14)
    with pytest.raises(NoDerivativeRuleError, match="'V'"):
        fgrad.grad(lambda v: np.sum(distance.cdist(X, Y, "seuclidean", V=v)))(onp.ones(3))


def test_cubic_spline_reproduces_a_cubic_and_is_differentiable_in_values_and_points():
    # (scipy.interpolate was not mirrored) not-a-knot reproduces a cubic exactly, so the
    # spline's derivative in the point is the cubic's; in the values its Jacobian is scipy's
    # splines of the unit vectors; the values scipy's own, eager, staged and batched
    from fgrad.scipy import interpolate
    import scipy.interpolate as si
    knots = onp.array([0.0, 0.4, 1.1, 1.5, 2.3, 3.0])
    cubic = onp.polynomial.Polynomial([0.5, -1.0, 0.3, 0.7])
    spline = interpolate.CubicSpline(knots, cubic(knots))
    for q in (0.2, 1.1, 2.9):
        assert fgrad.grad(spline)(q) == pytest.approx(cubic.deriv()(q), rel=1e-12)
        assert fgrad.grad(fgrad.grad(spline))(q) == pytest.approx(cubic.deriv(2)(q), rel=1e-11)
        assert fgrad.grad(spline.derivative())(q) == pytest.approx(cubic.deriv(2)(q), rel=1e-11)
    y, q = onp.sin(knots), onp.array([-0.3, 0.25, 1.1, 2.95, 3.2])
    for bc in ("not-a-knot", "natural", "clamped"):
        for nu in (0, 1, 2):
            def ours(y, q):
                return interpolate.CubicSpline(knots, y, bc_type=bc)(q, nu)

            want = si.CubicSpline(knots, y, bc_type=bc)(q, nu)
            onp.testing.assert_array_equal(fgrad.jit(ours)(y, q), want)
            onp.testing.assert_array_equal(ours(np.asarray(y) * 1.0, q), want)
            onp.testing.assert_allclose(
                fgrad.jacrev(lambda y: ours(y, q))(y),
                onp.stack([si.CubicSpline(knots, e, bc_type=bc)(q, nu)
                           for e in onp.eye(6)], 1), atol=1e-12)
    Y = onp.stack([y, 2 * y, y ** 2], 1)  # (three curves along axis 0)
    onp.testing.assert_array_equal(
        fgrad.vmap(lambda y: interpolate.CubicSpline(knots, y)(q))(Y.T),
        si.CubicSpline(knots, Y)(q).T)
    # the curves along the last axis (axis=-1), at a 2-d array of points: the points' axes
    # where scipy puts them (a negative axis put them elsewhere in the derivative)
    points = onp.linspace(0.1, 2.9, 10).reshape(2, 5)
    for axis in (-1, 1):
        jac = fgrad.jacfwd(lambda Y: interpolate.CubicSpline(knots, Y, axis=axis)(points))(Y.T)
        want = onp.stack([si.CubicSpline(knots, e.reshape(3, 6), axis=axis)(points)
                          for e in onp.eye(18)], -1).reshape(jac.shape)
        onp.testing.assert_allclose(jac, want, atol=1e-12)
    # without extrapolation: scipy's NaN outside the knots, the unit splines' sums inside
    outside = interpolate.CubicSpline(knots, np.asarray(y) * 1.0, extrapolate=False)(q)
    assert onp.isnan(outside[[0, 4]]).all() and not onp.isnan(outside[1:4]).any()
    onp.testing.assert_allclose(
        fgrad.grad(lambda y: np.sum(interpolate.CubicSpline(knots, y,
                                                            extrapolate=False)(q[1:4])))(y),
        [onp.sum(si.CubicSpline(knots, e)(q[1:4])) for e in onp.eye(6)], atol=1e-12)
    with pytest.raises(NoDerivativeRuleError, match="'x'"):
        fgrad.grad(lambda k: np.sum(interpolate.CubicSpline(k, y)(q)))(knots)
    with pytest.raises(NotImplementedError, match="at most 1000 knots"):
        fgrad.grad(lambda y: np.sum(interpolate.CubicSpline(onp.arange(1001.0), y)(0.5)))(
            onp.ones(1001))
    with pytest.raises(NotImplementedError, match="not 'periodic'"):
        fgrad.grad(lambda y: np.sum(interpolate.CubicSpline(knots, y, bc_type="periodic")(q)))(
            onp.r_[y[:-1], y[0]])


@pytest.mark.parametrize("kind", ["hermite", "pchip", "akima", "makima"])
def test_hermite_pchip_and_akima_are_scipys_and_differentiable_in_values_and_points(kind):
    # (plain-only before) scipy's values eager, staged and batched; the Jacobian in the values
    # (pchip's and akima's slopes are not linear in them) and the derivative in the points
    # against central differences of scipy's own, away from the knots (where the second
    # derivative jumps); the data change direction, so pchip's slopes are 0 at some knots
    from fgrad.scipy import interpolate
    import scipy.interpolate as si
    knots = onp.array([0.0, 0.4, 1.1, 1.5, 2.3, 3.0])
    y = onp.array([0.3, 0.9, 0.7, 1.6, 1.5, 2.4])
    q = onp.array([-0.3, 0.25, 1.13, 2.95, 3.2])
    slopes = onp.cos(3 * y)
    make = {"hermite": lambda m, y, **k: m.CubicHermiteSpline(
                knots, y, onp.broadcast_to(slopes, onp.shape(y)), **k),
            "pchip": lambda m, y, **k: m.PchipInterpolator(knots, y, **k),
            "akima": lambda m, y, **k: m.Akima1DInterpolator(knots, y, extrapolate=True, **k),
            "makima": lambda m, y, **k: m.Akima1DInterpolator(knots, y, method="makima",
                                                              extrapolate=True, **k)}[kind]
    h = 1e-6
    for nu in (0, 1, 2):
        def ours(y, q):
            return make(interpolate, y)(q, nu)

        def theirs(y, q):
            return make(si, y)(q, nu)

        want = theirs(y, q)
        for got in (ours(np.asarray(y) * 1.0, q), fgrad.jit(ours)(y, q)):
            onp.testing.assert_array_equal(got, want)
        onp.testing.assert_array_equal(make(interpolate, np.asarray(y) * 1.0).derivative(nu)(q),
                                       make(si, y).derivative(nu)(q))
        numeric = onp.stack([(theirs(y + h * e, q) - theirs(y - h * e, q)) / (2 * h)
                             for e in onp.eye(6)], 1)
        onp.testing.assert_allclose(fgrad.jacrev(lambda y: ours(y, q))(y), numeric, atol=1e-7)
        onp.testing.assert_allclose(fgrad.jacfwd(lambda q: ours(y, q))(q).diagonal(),
                                    (theirs(y, q + h) - theirs(y, q - h)) / (2 * h), rtol=1e-6,
                                    atol=1e-6)
    Y = onp.stack([y, 2 * y, y ** 2])  # (three curves along the last axis)
    onp.testing.assert_array_equal(fgrad.vmap(lambda y: make(interpolate, y)(q))(Y),
                                   make(si, Y, axis=1)(q))
    if kind != "hermite":  # (two points: the line through them, in the values too)
        def line(y):
            return make(interpolate, y)(q)

        knots = knots[:2]  # (make reads it when called)
        onp.testing.assert_allclose(line(np.asarray(y[:2]) * 1.0), y[0] + (y[1] - y[0]) /
                                    0.4 * q, rtol=1e-12)
        onp.testing.assert_allclose(fgrad.jacrev(line)(y[:2]),
                                    onp.stack([1 - q / 0.4, q / 0.4], 1), rtol=1e-12)
    with pytest.raises(NoDerivativeRuleError, match="'x'"):
        fgrad.grad(lambda k: np.sum(interpolate.PchipInterpolator(k, y)(q)))(knots)


def test_a_hermite_splines_slopes_and_pchip_interpolate():
    # the Hermite spline is linear in its slopes: its Jacobian in them is scipy's spline of
    # zero values and the unit slopes
    from fgrad.scipy import interpolate
    import scipy.interpolate as si
    knots = onp.array([0.0, 0.5, 1.2, 2.0])
    y, d, q = onp.array([1.0, 0.2, 0.8, -0.3]), onp.array([0.5, -1.0, 0.3, 2.0]), \
        onp.array([0.1, 0.7, 1.9])
    onp.testing.assert_allclose(
        fgrad.jacrev(lambda d: interpolate.CubicHermiteSpline(knots, y, d)(q))(d),
        onp.stack([si.CubicHermiteSpline(knots, 0 * y, e)(q) for e in onp.eye(4)], 1),
        atol=1e-14)
    got = interpolate.pchip_interpolate(knots, np.asarray(y) * 1.0, q, der=[0, 1])
    for g, w in zip(got, si.pchip_interpolate(knots, y, q, der=[0, 1])):
        onp.testing.assert_array_equal(g, w)
    onp.testing.assert_allclose(
        fgrad.grad(lambda q: np.sum(interpolate.pchip_interpolate(knots, y, q)))(q),
        si.pchip_interpolate(knots, y, q, der=1), rtol=1e-12)


def test_interp1d_is_scipys_and_differentiable_in_the_values_and_the_points():
    # (plain-only before) every kind's Jacobian in y is scipy's interpolation of the unit
    # vectors; in the point, a linear piece's slope, the spline's derivative, zero for the
    # piecewise-constant kinds; unsorted knots, fills and extrapolation; scipy's values
    from fgrad.scipy import interpolate
    import scipy.interpolate as si
    x = onp.array([0.0, 0.7, 0.3, 1.5, 2.0, 1.1])
    y = onp.cos(3 * x)
    inside, outside = onp.array([0.1, 0.31, 0.65, 1.2, 1.99]), onp.array([-0.5, 0.31, 2.5])
    for kind in ("linear", "slinear", "nearest", "nearest-up", "previous", "next", "cubic"):
        for kw, q in (({}, inside), ({"bounds_error": False, "fill_value": 0.5}, outside),
                      ({"fill_value": "extrapolate"}, outside)):
            def ours(y, q):
                return interpolate.interp1d(x, y, kind, **kw)(q)

            def theirs(y, q):
                return si.interp1d(x, y, kind, **kw)(q)

            onp.testing.assert_array_equal(fgrad.jit(ours)(y, q), theirs(y, q))
            want = onp.stack([theirs(e, q) - theirs(0 * e, q) for e in onp.eye(6)], 1)
            known = onp.isfinite(want)  # (scipy's NaN past the ends for previous and next)
            onp.testing.assert_allclose(fgrad.jacrev(lambda y: ours(y, q))(y)[known],
                                        want[known], atol=1e-12)
            if kind not in ("previous", "next") or "fill_value" not in kw:
                h = 1e-6
                onp.testing.assert_allclose(
                    fgrad.jacfwd(lambda q: ours(y, q))(q).diagonal(),
                    (theirs(y, q + h) - theirs(y, q - h)) / (2 * h), rtol=1e-6, atol=1e-6)
    Y = onp.stack([y, 2 * y, y ** 2])  # (three curves along the last axis)
    onp.testing.assert_array_equal(fgrad.vmap(lambda y: interpolate.interp1d(x, y)(inside))(Y),
                                   si.interp1d(x, Y)(inside))
    with pytest.raises(ValueError, match="below the interpolation range"):
        fgrad.grad(lambda y: np.sum(interpolate.interp1d(x, y)(outside)))(y)


def test_detrend_is_the_projection_off_a_line_its_own_transpose():
    n = 7
    basis = onp.stack([onp.ones(n), onp.arange(n) / n], axis=1)
    projection = onp.eye(n) - basis @ onp.linalg.solve(basis.T @ basis, basis.T)
    x = rng.standard_normal((4, n))
    onp.testing.assert_allclose(fgrad.jacfwd(signal.detrend)(x[0]), projection, atol=1e-12)
    onp.testing.assert_allclose(fgrad.jacrev(signal.detrend)(x[0]), projection, atol=1e-12)
    for got in (fgrad.jit(signal.detrend)(x), fgrad.vmap(signal.detrend)(x)):
        onp.testing.assert_array_equal(got, ss.detrend(x))
    with pytest.raises(ValueError, match="Trend type must be 'linear' or 'constant'"):
        fgrad.grad(lambda v: np.sum(signal.detrend(v, type="quadratic")))(x[0])


def test_wofz_is_holomorphic_with_its_closed_form_derivative():
    # w' = -2 z w + 2 i / sqrt(pi); a real x gets the real gradient of the part asked for
    z = onp.array([0.3 + 0.4j, -1.2 + 0.1j, 0.7 - 0.5j])
    w, t = fgrad.jvp(special.wofz, (z,), (onp.ones(3, complex),))
    onp.testing.assert_array_equal(w, sc.wofz(z))
    onp.testing.assert_allclose(t, -2 * z * w + 2j / onp.sqrt(onp.pi), rtol=1e-14)
    x = onp.array([0.3, -1.2, 1.7])
    g = fgrad.grad(lambda v: np.sum(np.imag(special.wofz(v))))(x)
    onp.testing.assert_allclose(g, onp.imag(-2 * x * sc.wofz(x) + 2j / onp.sqrt(onp.pi)),
                                rtol=1e-14)


def test_scaled_bessel_ellipkm1_and_wrightomega_against_closed_forms():
    # (plain-only before: NoDerivativeRuleError under grad)
    x = onp.array([0.6, 1.3, 2.7])
    d = lambda f: fgrad.vmap(fgrad.grad(f))(x)  # noqa: E731
    # on the real line jve and yve are jv and yv (the scale is exp(-|Im z|))
    onp.testing.assert_allclose(d(lambda z: special.jve(1.0, z)),
                                0.5 * (sc.jv(0, x) - sc.jv(2, x)), rtol=1e-13)
    onp.testing.assert_allclose(d(lambda z: special.yve(0.0, z)), -sc.y1(x), rtol=1e-13)
    # ellipkm1(p) = ellipk(1 - p); 2 m (1 - m) K'(m) = E - (1 - m) K
    p = onp.array([0.2, 0.5, 0.8])
    m = 1 - p
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(special.ellipkm1))(p),
                                -(sc.ellipe(m) - (1 - m) * sc.ellipk(m)) / (2 * m * (1 - m)),
                                rtol=1e-13)
    # w + log w = z, so w' (1 + 1 / w) = 1, and w'' = w' / (1 + w)^2
    w = sc.wrightomega(x)
    onp.testing.assert_allclose(d(special.wrightomega), w / (1 + w), rtol=1e-14)
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(fgrad.grad(special.wrightomega)))(x),
                                w / (1 + w) ** 3, rtol=1e-13)


def test_incomplete_elliptic_integrals_against_the_complete_ones_and_their_integrands():
    # at phi = pi / 2 they are K(m) and E(m), so their m-derivatives are ellipk's and
    # ellipe's; in phi they are the integrands 1 / D and D, D = sqrt(1 - m sin^2 phi)
    m, phi = 0.4, 0.9
    for inc, complete in ((special.ellipkinc, special.ellipk),
                          (special.ellipeinc, special.ellipe)):
        assert fgrad.grad(inc, argnums=1)(onp.pi / 2, m) == \
            pytest.approx(fgrad.grad(complete)(m), rel=1e-12)
        assert fgrad.grad(fgrad.grad(inc, argnums=1), argnums=1)(onp.pi / 2, m) == \
            pytest.approx(fgrad.grad(fgrad.grad(complete))(m), rel=1e-10)
    d = onp.sqrt(1 - m * onp.sin(phi) ** 2)
    assert fgrad.grad(special.ellipkinc)(phi, m) == pytest.approx(1 / d, rel=1e-14)
    assert fgrad.grad(special.ellipeinc)(phi, m) == pytest.approx(d, rel=1e-14)
    # E(phi | m)'s m-derivative (E - F) / (2 m), against scipy's central difference
    h = 1e-5
    want = (sc.ellipeinc(phi, m + h) - sc.ellipeinc(phi, m - h)) / (2 * h)
    assert fgrad.grad(special.ellipeinc, argnums=1)(phi, m) == pytest.approx(want, rel=1e-8)


def test_voigt_profile_is_the_gaussian_at_gamma_zero_and_its_derivatives_too():
    # V(x, sigma, 0) = N(x; 0, sigma): d/dx -x N / sigma^2, d/dsigma N (x^2 / sigma^3 - 1 / sigma)
    x, sigma = 0.7, 1.3
    n = onp.exp(-x * x / (2 * sigma ** 2)) / (sigma * onp.sqrt(2 * onp.pi))
    dx, ds = fgrad.grad(special.voigt_profile, argnums=(0, 1))(x, sigma, 0.0)
    assert dx == pytest.approx(-x * n / sigma ** 2, rel=1e-12)
    assert ds == pytest.approx(n * (x * x / sigma ** 3 - 1 / sigma), rel=1e-12)
    # in gamma, against scipy's central difference
    h, gamma = 1e-5, 0.4
    want = (sc.voigt_profile(x, sigma, gamma + h) - sc.voigt_profile(x, sigma, gamma - h)) / (2 * h)
    assert fgrad.grad(special.voigt_profile, argnums=2)(x, sigma, gamma) == \
        pytest.approx(want, rel=1e-8)


def test_pdtri_is_pdtrs_inverse_in_the_mean():
    # m = pdtri(k, y) solves pdtr(k, m) = y, so dm/dy = 1 / (d pdtr / dm) = -1 / pmf(k; m)
    k, y = 3, 0.4
    m = special.pdtri(k, y)
    assert special.pdtr(k, m) == pytest.approx(y, rel=1e-12)
    assert fgrad.grad(special.pdtri, argnums=1)(k, y) == \
        pytest.approx(-1 / st.poisson.pmf(k, m), rel=1e-10)
    with pytest.raises(NoDerivativeRuleError, match="count"):
        fgrad.grad(lambda k: special.pdtri(k, y))(3.0)


def test_special_functions_differentiable_since_the_third_audit_against_closed_forms():
    # (plain-only before: NoDerivativeRuleError under grad)
    x = onp.array([0.4, 1.3, 2.7])
    d = lambda f: fgrad.vmap(fgrad.grad(f))(x)  # noqa: E731
    onp.testing.assert_allclose(d(special.softplus), sc.expit(x), rtol=1e-14)
    onp.testing.assert_allclose(d(special.erfi), 2 / onp.sqrt(onp.pi) * onp.exp(x * x),
                                rtol=1e-14)
    # j0(z) = sin z / z, whose derivative is cos z / z - sin z / z^2; and the second one, from
    # the ODE, against the closed form's: -sin z / z - 2 cos z / z^2 + 2 sin z / z^3
    sin, cos = onp.sin(x), onp.cos(x)
    onp.testing.assert_allclose(d(lambda z: special.spherical_jn(0, z)), cos / x - sin / x ** 2,
                                rtol=1e-13)
    onp.testing.assert_allclose(
        d(lambda z: special.spherical_jn(0, z, derivative=True)),
        -sin / x - 2 * cos / x ** 2 + 2 * sin / x ** 3, rtol=1e-12)
    # i0(z) = sinh z / z, k0(z) = pi exp(-z) / (2 z)
    onp.testing.assert_allclose(d(lambda z: special.spherical_in(0, z)),
                                onp.cosh(x) / x - onp.sinh(x) / x ** 2, rtol=1e-13)
    onp.testing.assert_allclose(d(lambda z: special.spherical_kn(0, z)),
                                -onp.pi / 2 * onp.exp(-x) * (1 / x + 1 / x ** 2), rtol=1e-13)
    # polynomials: H_3 = 8x^3 - 12x, He_3 = x^3 - 3x, P_3 = (5x^3 - 3x) / 2, T_3 = 4x^3 - 3x,
    # U_2 = 4x^2 - 1, L_2 = (x^2 - 4x + 2) / 2, and their derivatives, to second order
    y = onp.array([-0.7, 0.2, 0.55])
    for f, d1, d2 in ((lambda v: special.eval_hermite(3, v), 24 * y ** 2 - 12, 48 * y),
                      (lambda v: special.eval_hermitenorm(3, v), 3 * y ** 2 - 3, 6 * y),
                      (lambda v: special.eval_legendre(3, v), 7.5 * y ** 2 - 1.5, 15 * y),
                      (lambda v: special.eval_chebyt(3, v), 12 * y ** 2 - 3, 24 * y),
                      (lambda v: special.eval_chebyu(2, v), 8 * y, 8 + 0 * y),
                      (lambda v: special.eval_laguerre(2, v), y - 2, 1 + 0 * y)):
        onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(f))(y), d1, rtol=1e-12, atol=1e-12)
        onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(fgrad.grad(f)))(y), d2, rtol=1e-12,
                                    atol=1e-12)
    # the order or degree is not differentiable: refused by name
    with pytest.raises(NoDerivativeRuleError, match="eval_gegenbauer has no derivative in "
                       "its argument 'alpha'"):
        fgrad.grad(lambda a: special.eval_gegenbauer(2, a, 0.3))(1.5)
    with pytest.raises(NoDerivativeRuleError, match="spherical_jn has no derivative in its "
                       "argument 'n'"):
        fgrad.grad(lambda n: special.spherical_jn(n, 0.3))(1.0)


def test_sici_and_fresnel_derivatives_are_their_integrands():
    x = onp.array([0.4, -1.3, 2.7])
    si, ci = fgrad.jacfwd(special.sici)(x)
    onp.testing.assert_allclose(onp.diag(si), onp.sin(x) / x, rtol=1e-14)
    onp.testing.assert_allclose(onp.diag(ci), onp.cos(x) / x, rtol=1e-14)
    g = fgrad.vmap(fgrad.grad(lambda z: special.fresnel(z)[0] + 2 * special.fresnel(z)[1]))(x)
    onp.testing.assert_allclose(g, onp.sin(onp.pi * x * x / 2) + 2 * onp.cos(onp.pi * x * x / 2),
                                rtol=1e-14)
    for fn, theirs in ((special.sici, sc.sici), (special.fresnel, sc.fresnel)):
        for got, want in zip(fgrad.jit(fn)(x), theirs(x)):  # (scipy's values, staged too)
            onp.testing.assert_array_equal(got, want)


def test_shichi_and_airy_derivatives():
    # (plain-only before) Shi' = sinh(x)/x, Chi' = cosh(x)/x, and at 0 the series of Shi,
    # x + x^3/18 + ..., gives its first three derivatives 1, 0, 1/3
    x = onp.array([0.4, -1.3, 2.7])
    shi, chi = fgrad.jacfwd(special.shichi)(x)
    onp.testing.assert_allclose(onp.diag(shi), onp.sinh(x) / x, rtol=1e-14)
    onp.testing.assert_allclose(onp.diag(chi), onp.cosh(x) / x, rtol=1e-14)
    d = [lambda z: special.shichi(z)[0]]
    for _ in range(3):
        d.append(fgrad.grad(d[-1]))
    assert [float(f(0.0)) for f in d[1:]] == pytest.approx([1.0, 0.0, 1 / 3], abs=1e-15)
    # Ai' and Bi' are outputs, and each solves y'' = x y
    ai, aip, bi, bip = sc.airy(x)
    jac = fgrad.jacfwd(special.airy)(x)
    for j, want in zip(jac, (aip, x * ai, bip, x * bi)):
        onp.testing.assert_allclose(onp.diag(j), want, rtol=1e-13)
    second = fgrad.vmap(fgrad.grad(fgrad.grad(lambda z: special.airy(z)[2])))(x)
    onp.testing.assert_allclose(second, x * bi, rtol=1e-13)
    for fn, theirs in ((special.shichi, sc.shichi), (special.airy, sc.airy)):
        for got, want in zip(fgrad.jit(fn)(x), theirs(x)):  # (scipy's values, staged too)
            onp.testing.assert_array_equal(got, want)


def test_betabinom_logpmf_in_its_shapes_and_no_cdf():
    # d/da log pmf = psi(k + a) - psi(n + a + b) - psi(a) + psi(a + b), b alike with n - k
    k, n, a, b = onp.array([0, 2, 5]), 6, 1.3, 2.1
    ga, gb = fgrad.grad(lambda a, b: np.sum(stats.betabinom.logpmf(k, n, a, b)),
                        argnums=(0, 1))(a, b)
    psi = sc.digamma
    assert ga == pytest.approx(onp.sum(psi(k + a) - psi(n + a + b) - psi(a) + psi(a + b)),
                               rel=1e-13)
    assert gb == pytest.approx(onp.sum(psi(n - k + b) - psi(n + a + b) - psi(b) + psi(a + b)),
                               rel=1e-13)
    onp.testing.assert_array_equal(stats.betabinom.pmf(k, n, a, b), st.betabinom.pmf(k, n, a, b))
    with pytest.raises(AttributeError, match=r"betabinom has logpmf and pmf only .* call "
                                             r"scipy\.stats\.betabinom\.cdf"):
        stats.betabinom.cdf


def test_ppf_derivative_is_the_reciprocal_density():
    q = 0.3
    x = st.gamma.ppf(q, 2.5)
    assert fgrad.grad(lambda q: stats.gamma.ppf(q, 2.5))(q) == pytest.approx(
        1 / st.gamma.pdf(x, 2.5), rel=1e-10)


def test_poisson_cdf_derivative_in_mu_is_minus_the_pmf():
    assert fgrad.grad(lambda mu: stats.poisson.cdf(3, mu))(2.2) == pytest.approx(
        -st.poisson.pmf(3, 2.2), rel=1e-12)


def test_counts_passed_to_a_jitted_or_batched_likelihood_are_operands():
    # a Poisson regression's counts, passed to a jitted gradient or mapped per example, are a
    # staged or batched k: refused as "being differentiated", which they were not
    X, b = rng.standard_normal((20, 3)), onp.array([0.1, -0.2, 0.3])
    y = rng.poisson(2.0, size=20)

    def nll(b, X, y):
        return -np.sum(stats.poisson.logpmf(y, np.exp(X @ b)))

    def binomial(p, k):
        return np.sum(stats.binom.logpmf(k, 6, p) + stats.nbinom.logcdf(k, 3.0, p, loc=1))

    staged = fgrad.jit(fgrad.value_and_grad(nll))
    for y_ in (y, y[::-1]):
        want = fgrad.value_and_grad(nll)(b, X, y_)
        got = staged(b, X, y_)
        assert got[0] == want[0] and onp.array_equal(got[1], want[1])
    assert sum(len(graphs) for graphs in staged.cache.values()) == 1  # (no guard on y)
    per_example = fgrad.vmap(fgrad.grad(nll), in_axes=(None, 0, 0))(b, X[:, None], y[:, None])
    onp.testing.assert_allclose(per_example, [fgrad.grad(nll)(b, X[i:i + 1], y[i:i + 1])
                                              for i in range(20)], rtol=1e-12)
    P, K = rng.uniform(0.2, 0.8, (4, 3)), rng.integers(1, 6, (4, 3))  # (k - loc >= 0)
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(binomial))(P, K),
                                [fgrad.grad(binomial)(p, k) for p, k in zip(P, K)], rtol=1e-12)
    # differentiated, k is still refused by name
    with pytest.raises(NoDerivativeRuleError, match="argument 'k' .* is being differentiated"):
        fgrad.grad(lambda k: np.sum(stats.poisson.logpmf(k, 2.0)))(onp.array([1.0, 2.0]))


def test_an_order_staged_or_batched_is_an_operand_unless_a_rule_needs_its_value():
    # polygamma's n, an argument of a jitted function: refused as "'n' is being
    # differentiated", which it was not; it is an operand now (a batch of orders too)
    x = onp.array([1.5, 2.5])
    staged = fgrad.jit(fgrad.grad(lambda x, n: np.sum(special.polygamma(n, x))))
    for n in (1, 2):
        onp.testing.assert_array_equal(staged(x, n), sc.polygamma(n + 1, x))
    onp.testing.assert_allclose(
        fgrad.vmap(fgrad.grad(lambda x, v: np.sum(special.iv(v, x))))(onp.stack([x, x]),
                                                                     onp.array([0.5, 1.5])),
        [0.5 * (sc.iv(v - 1, x) + sc.iv(v + 1, x)) for v in (0.5, 1.5)], rtol=1e-12)
    # a rule that needs the value (multigammaln counts its terms by d), and scipy's
    # functions with no closed form in an argument, refuse it staged or batched, saying so
    with pytest.raises(ConcretizationError, match=r"fgrad.scipy.special.multigammaln takes "
                       r"its argument 'd' as a fixed value \(it is a dimension\), and it is "
                       r"a staged or batched value here .*static_argnums"):
        fgrad.jit(lambda x, d: special.multigammaln(x, d))(3.0, 2)
    with pytest.raises(ConcretizationError, match="hyp1f1 takes its argument 'a'"):
        fgrad.vmap(lambda a, x: special.hyp1f1(a, 2.0, x))(x, x / 4)
    with pytest.raises(NoDerivativeRuleError, match="'n' is being differentiated"):
        fgrad.grad(lambda n: np.sum(special.polygamma(n, x)))(1.0)


def test_multivariate_normal_allow_singular_differentiates_in_x_and_mean():
    # a covariance of rank 2 in 4 dimensions; points on its support (as autograd's test)
    cov = onp.zeros((4, 4))
    cov[:2, :2] = [[1.0, 0.3], [0.3, 1.0]]
    x, mean = onp.array([0.4, -0.7, 0.0, 0.0]), onp.array([-0.2, 0.5, 0.0, 0.0])
    for method in ("logpdf", "pdf"):
        ours, ref = getattr(stats.multivariate_normal, method), getattr(st.multivariate_normal,
                                                                         method)
        assert ours(x, mean, cov, allow_singular=True) == ref(x, mean, cov, allow_singular=True)

        def f(x, mean):
            return ours(x, mean, cov, allow_singular=True)
        # the density in the support's coordinates: the quadratic form of the 2x2 block
        prec = onp.linalg.inv(cov[:2, :2])
        dx = -onp.concatenate([prec @ (x - mean)[:2], [0.0, 0.0]])
        scale = ref(x, mean, cov, allow_singular=True) if method == "pdf" else 1.0
        for how in (fgrad.grad, lambda f, **k: fgrad.jit(fgrad.grad(f, **k)), fgrad.jacfwd):
            gx, gm = how(f, argnums=(0, 1))(x, mean)
            onp.testing.assert_allclose(gx, scale * dx, rtol=1e-12, atol=1e-15)
            onp.testing.assert_allclose(gm, -scale * dx, rtol=1e-12, atol=1e-15)
        batch = onp.stack([x, 0.5 * x])
        onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(f), in_axes=(0, None))(batch, mean),
                                    [fgrad.grad(f)(b, mean) for b in batch], rtol=1e-12)
        with pytest.raises(NoDerivativeRuleError, match=f"multivariate_normal.{method} has no "
                                                        "derivative in its argument 'cov'"):
            fgrad.grad(lambda c: ours(x, mean, c, allow_singular=True))(cov)


def test_multivariate_normal_takes_scipys_covariance_forms():
    x, mean = rng.standard_normal((5, 3)), rng.standard_normal(3)
    for cov in (2.0, onp.array([1.0, 2.0, 3.0]), SPD):
        def f(x, mean):
            return np.sum(stats.multivariate_normal.logpdf(x, mean, cov))
        value, (gx, gm) = fgrad.value_and_grad(f, argnums=(0, 1))(x, mean)
        full = onp.diag(onp.broadcast_to(cov, (3,))) if onp.ndim(cov) < 2 else cov
        assert value == pytest.approx(onp.sum(st.multivariate_normal.logpdf(x, mean, cov)),
                                      rel=1e-12)
        onp.testing.assert_allclose(gx, -onp.linalg.solve(full, (x - mean).T).T, rtol=1e-10)
        onp.testing.assert_allclose(gm, -gx.sum(0), rtol=1e-10)


def _read_lower(g):
    """The gradient with respect to a matrix of which scipy reads the lower triangle, from the
    symmetric gradient ``g``: the diagonal once, each entry below it twice, zero above."""
    return onp.tril(2 * g) - g * onp.eye(g.shape[-1])


def test_multivariate_normal_covariance_gradient_reads_the_lower_triangle_as_scipy():
    x = rng.standard_normal(3)
    g = fgrad.grad(lambda c: stats.multivariate_normal.logpdf(x, None, c))(SPD)
    p = onp.linalg.inv(SPD)
    onp.testing.assert_allclose(g, _read_lower(-0.5 * (p - p @ onp.outer(x, x) @ p)),
                                atol=1e-12)
    # scipy's function along a non-symmetric direction: its upper triangle is not read
    t = rng.uniform(-1, 1, (3, 3))
    h = 1e-6
    fd = (st.multivariate_normal.logpdf(x, None, SPD + h * t)
          - st.multivariate_normal.logpdf(x, None, SPD - h * t)) / (2 * h)
    assert onp.sum(g * t) == pytest.approx(fd, abs=1e-8)
    tangent = fgrad.jvp(lambda c: stats.multivariate_normal.logpdf(x, None, c), (SPD,), (t,))[1]
    assert tangent == pytest.approx(fd, abs=1e-8)
    entropy = (st.multivariate_normal.entropy(cov=SPD + h * t)
               - st.multivariate_normal.entropy(cov=SPD - h * t)) / (2 * h)
    ge = fgrad.grad(lambda c: stats.multivariate_normal.entropy(cov=c))(SPD)
    assert onp.sum(ge * t) == pytest.approx(entropy, abs=1e-8)


def test_dirichlet_with_one_component_left_out():
    alpha = onp.array([1.5, 2.0, 3.0])
    x = onp.array([0.2, 0.3])
    value, g = fgrad.value_and_grad(lambda x: stats.dirichlet.logpdf(x, alpha))(x)
    assert value == pytest.approx(st.dirichlet.logpdf(x, alpha), rel=1e-13)
    last = 1 - x.sum()
    onp.testing.assert_allclose(g, (alpha[:2] - 1) / x - (alpha[2] - 1) / last, rtol=1e-12)


def test_lambertw_real_branch_derivative():
    x = 1.3
    w = sc.lambertw(x).real
    assert fgrad.grad(lambda x: np.real(special.lambertw(x)))(x) == pytest.approx(
        w / (x * (1 + w)), rel=1e-12)
    assert fgrad.grad(lambda x: np.real(special.lambertw(x)))(0.0) == 1.0


def test_cho_solve_and_lu_solve_match_solve_in_value_and_gradient():
    b = rng.standard_normal(3)

    def via(solver):
        return lambda a, b: np.sum(solver(a, b) ** 2)

    ref = fgrad.grad(via(np.linalg.solve), argnums=(0, 1))(SPD, b)
    # the Cholesky route reads one triangle (scipy's default: the upper one): each entry read
    # stands for two of the symmetric matrix, so its gradient is both entries of solve's
    sym = (ref[0] + ref[0].T) / 2
    lower = _read_lower(sym)
    for solver, want in ((lambda a, b: linalg.cho_solve(linalg.cho_factor(a), b), lower.T),
                         (lambda a, b: linalg.cho_solve(linalg.cho_factor(a, lower=True), b),
                          lower),
                         (lambda a, b: linalg.lu_solve(linalg.lu_factor(a), b), ref[0])):
        got = fgrad.grad(via(solver), argnums=(0, 1))(SPD, b)
        onp.testing.assert_allclose(got[0], want, rtol=1e-9, atol=1e-12)
        onp.testing.assert_allclose(got[1], ref[1], rtol=1e-9)


def test_expm_jvp_is_scipys_frechet_derivative():
    e = rng.standard_normal((3, 3))
    _, tangent = fgrad.jvp(linalg.expm, (M,), (e,))
    onp.testing.assert_allclose(tangent, sl.expm_frechet(M, e, compute_expm=False),
                                rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["sqrtm", "logm"])
def test_sqrtm_and_logm_second_derivatives_at_negative_eigenvalues(name):
    # a real matrix with negative eigenvalues: a complex square root or logarithm, on the
    # branch cut. Reverse over forward mode gave 1e12 times the second derivative (sqrtm)
    # or NaN (logm) before their rules stopped taking the function of a block matrix there.
    f = getattr(linalg, name)
    rng = onp.random.default_rng(3)
    for _ in range(3):
        a = rng.normal(size=(3, 3))
        a = 0.5 * (a + a.T) - 0.5 * onp.eye(3)
        assert onp.linalg.eigvalsh(a)[0] < 0 and onp.iscomplexobj(getattr(sl, name)(a))
        check_grads(lambda x: np.real(f(x)) + np.imag(f(x)), (a,), order=2)


@pytest.mark.parametrize("l, u, b_shape", [(1, 1, (5,)), (2, 0, (5, 2)), (0, 3, (5,))])
def test_solve_banded_in_the_band_storage_and_the_right_hand_side(l, u, b_shape):
    ab = rng.standard_normal((l + u + 1, 5))
    ab[u] += 4.0  # (the diagonal: well conditioned)
    b = rng.standard_normal(b_shape)
    assert onp.array_equal(linalg.solve_banded((l, u), ab, b), sl.solve_banded((l, u), ab, b))
    check_grads(lambda ab, b: linalg.solve_banded((l, u), ab, b), (ab, b), order=2)
    # the storage's entries outside the matrix are not read: their derivative is zero
    g = fgrad.grad(lambda ab: np.sum(linalg.solve_banded((l, u), ab, b) ** 2))(ab)
    for r in range(l + u + 1):
        for j in range(5):
            if not 0 <= r - u + j < 5:
                assert g[r, j] == 0.0
    gv = fgrad.vmap(fgrad.grad(lambda b: np.sum(linalg.solve_banded((l, u), ab, b) ** 3)))(
        onp.stack([b, -b]))
    onp.testing.assert_allclose(gv[1], fgrad.grad(
        lambda b: np.sum(linalg.solve_banded((l, u), ab, b) ** 3))(-b), rtol=1e-12)


def test_scipys_eig_and_eigvals_are_numpys_rules_with_scipys_complex_values():
    # (plain-only before) a real spectrum: w complex as scipy's, vr real, and each
    # eigenvalue's derivative u_i v_i^T / (u_i . v_i) from the left and right eigenvectors
    a = onp.array([[2.0, 1.0, 0.3], [0.5, 3.0, -0.4], [0.1, 0.2, -1.0]])
    w, v = sl.eig(a)
    for got in (linalg.eig(np.asarray(a) * 1.0), fgrad.jit(linalg.eig)(a)):
        for g, want in zip(got, (w, v)):
            assert g.dtype == want.dtype
            onp.testing.assert_array_equal(g, want)
    onp.testing.assert_array_equal(linalg.eigvals(np.asarray(a) * 1.0), sl.eigvals(a))
    u = onp.linalg.inv(v).T  # (the left eigenvectors, u_i . v_i = 1)
    for i in range(3):
        onp.testing.assert_allclose(
            fgrad.grad(lambda a: np.real(linalg.eigvals(a)[i]))(a),
            onp.real(onp.outer(u[:, i], v[:, i])), rtol=1e-10, atol=1e-12)
    # a complex pair: scipy's complex vectors, the imaginary part differentiable too
    r = onp.array([[0.0, 1.0], [-2.0, 0.3]])
    assert linalg.eig(np.asarray(r) * 1.0)[1].dtype == onp.complex128
    onp.testing.assert_allclose(
        fgrad.grad(lambda r: np.sum(np.imag(linalg.eig(r, right=False)) ** 2))(r),
        fgrad.grad(lambda r: np.sum(np.imag(np.linalg.eigvals(r)) ** 2))(r), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="one matrix"):
        fgrad.grad(lambda r: np.real(np.sum(linalg.eigvals(r, onp.eye(2)))))(r)


def test_eigh_of_a_complex_matrix_reads_one_hermitian_triangle_as_scipy():
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    for lower in (True, False):
        w, v = linalg.eigh(a, lower=lower)
        assert w.dtype == sl.eigh(a, lower=lower)[0].dtype == onp.float64
        check_grads(lambda a: linalg.eigh(a, lower=lower)[0], (a,))
        check_grads(lambda a: np.abs(linalg.eigh(a, lower=lower)[1]), (a,))
        check_grads(lambda a: linalg.eigh(a, lower=lower, eigvals_only=True), (a,))


# --- scipy.stats' summary statistics ----------------------------------------------------------

def test_summary_statistics_have_their_closed_form_derivatives_and_scipys_values():
    # (plain-only before: NoDerivativeRuleError)
    x = onp.array([0.5, 1.3, 2.0, 0.8, 3.1, 1.7])
    n = x.size
    for name, f, scipys, want in (
            ("gmean", stats.gmean, st.gmean, st.gmean(x) / (n * x)),
            ("hmean", stats.hmean, st.hmean, st.hmean(x) ** 2 / (n * x ** 2)),
            # z = (x - m) / s has Jacobian (I - 1/n - z z^T / n) / s; its first row here
            ("zscore", lambda x: stats.zscore(x)[0], lambda x: st.zscore(x)[0],
             (onp.eye(n)[0] - 1 / n - st.zscore(x)[0] * st.zscore(x) / n) / x.std()),
            # a fifth cut from each end of 6 samples: the 4 middle ones, 1/4 each
            ("trim_mean", lambda x: stats.trim_mean(x, 0.2), lambda x: st.trim_mean(x, 0.2),
             onp.where((x > x.min()) & (x < x.max()), 0.25, 0.0)),
            # H = -sum p log p of p = x / S: dH/dx_j = -(log p_j + H) / S
            ("entropy", stats.entropy, st.entropy,
             -(onp.log(x / x.sum()) + st.entropy(x)) / x.sum())):
        assert f(np.asarray(x) * 1.0) == scipys(x), name
        onp.testing.assert_allclose(fgrad.grad(f)(x), want, rtol=1e-12, err_msg=name)
    # the divergence of p from q = y / Q in y: (1 - p_j / q_j) / Q
    y = onp.array([1.0, 0.4, 2.2, 0.9, 1.1, 0.6])
    p, q = x / x.sum(), y / y.sum()
    onp.testing.assert_allclose(fgrad.grad(lambda y: stats.entropy(x, y))(y),
                                (1 - p / q) / y.sum(), rtol=1e-12)
    # two samples of one size: W1 = mean |sort(u) - sort(v)|, so each sample's derivative is
    # the sign of its difference to the other's sample of its rank, over n
    u, v = onp.array([0.3, -1.0, 2.0, 0.9]), onp.array([0.1, 0.5, -0.2, 3.0])
    gu = onp.empty(4)
    gu[onp.argsort(u)] = onp.sign(onp.sort(u) - onp.sort(v)) / 4
    assert stats.wasserstein_distance(np.asarray(u) * 1.0, v) == st.wasserstein_distance(u, v)
    onp.testing.assert_allclose(fgrad.grad(stats.wasserstein_distance)(u, v), gu, rtol=1e-12)
    # the circular mean's derivative in an angle: (C cos t_j + S sin t_j) / (S^2 + C^2)
    t = onp.array([0.3, 1.1, 5.9, 0.7])
    S, C = onp.sin(t).sum(), onp.cos(t).sum()
    onp.testing.assert_allclose(fgrad.grad(stats.circmean)(t),
                                (C * onp.cos(t) + S * onp.sin(t)) / (S * S + C * C), rtol=1e-12)
    # settings stay fixed; nan_policy='omit' is not followed on traced values
    with pytest.raises(NoDerivativeRuleError, match="argument 'ddof'"):
        fgrad.grad(lambda d: stats.sem(x, ddof=d))(1.0)
    with pytest.raises(NotImplementedError, match="nan_policy='omit'"):
        fgrad.grad(lambda x: stats.skew(x, nan_policy="omit"))(x)


def test_boxcox_llf_is_differentiable_at_every_lambda_and_its_maximum_scipys():
    # (plain-only before) at lmb = 0 the transform is log(d) + lmb log(d)^2 / 2 + ..., so the
    # derivative there is sum(L) - n/2 cov(L, L^2) / var(L), L = log(d)
    d = onp.array([0.7, 1.3, 2.2, 3.1, 0.9, 5.0])
    L = onp.log(d)
    for lmb in (0.0, 0.5, -1.2):
        assert stats.boxcox_llf(np.asarray(lmb) * 1.0, d) == st.boxcox_llf(lmb, d)
    cov = onp.mean((L - L.mean()) * (L * L - onp.mean(L * L)))
    assert fgrad.grad(lambda lmb: stats.boxcox_llf(lmb, d))(0.0) == \
        pytest.approx(L.sum() - 3 * cov / L.var(), rel=1e-12)
    h = 1e-6
    onp.testing.assert_allclose(
        fgrad.grad(lambda d: stats.boxcox_llf(0.5, d))(d),
        [(st.boxcox_llf(0.5, d + h * e) - st.boxcox_llf(0.5, d - h * e)) / (2 * h)
         for e in onp.eye(6)], rtol=1e-7)
    # the maximum likelihood lambda by fgrad's gradients is scipy's boxcox_normmax
    best = optimize.minimize(lambda lmb: -stats.boxcox_llf(lmb[0], d), [0.5], tol=1e-12).x[0]
    assert best == pytest.approx(st.boxcox_normmax(d, method="mle"), rel=1e-6)


def test_summary_statistics_keep_scipys_axes_and_batch():
    X = rng.uniform(0.5, 2.0, (3, 5))
    for f, kw in ((stats.skew, {"axis": 1, "bias": False}), (stats.kurtosis, {"axis": None}),
                  (stats.moment, {"order": [2, 3], "axis": 0}), (stats.gstd, {"axis": 1}),
                  (stats.iqr, {"axis": 1, "keepdims": True}), (stats.variation, {"axis": 0}),
                  (stats.median_abs_deviation, {"axis": 1, "scale": "normal"}),
                  (stats.circstd, {"axis": 0, "normalize": True}),
                  (stats.gmean, {"axis": None, "keepdims": True})):
        want = getattr(st, f.__name__)(X, **kw)
        for got in (f(np.asarray(X) * 1.0, **kw), fgrad.jit(lambda X: f(X, **kw))(X)):
            onp.testing.assert_array_equal(got, want)
    onp.testing.assert_array_equal(fgrad.vmap(stats.skew)(X), st.skew(X, axis=1))


# --- scipy.linalg's decompositions and matrix functions -----------------------------------

TALL, WIDE = rng.standard_normal((4, 3)), rng.standard_normal((3, 4))
STAGED_LINALG = [  # (fgrad's call, scipy's, the argument): traced values are scipy's bits
    (lambda a: linalg.svd(a), lambda a: sl.svd(a), M),
    (lambda a: linalg.svd(a, full_matrices=False), lambda a: sl.svd(a, full_matrices=False),
     TALL),
    (lambda a: linalg.svd(a, full_matrices=False, lapack_driver="gesvd"),
     lambda a: sl.svd(a, full_matrices=False, lapack_driver="gesvd"), WIDE),
    (lambda a: linalg.svd(a, compute_uv=False), lambda a: sl.svd(a, compute_uv=False), TALL),
    (linalg.svdvals, sl.svdvals, WIDE),
    (linalg.qr, sl.qr, M), (linalg.qr, sl.qr, WIDE),
    (lambda a: linalg.qr(a, mode="economic"), lambda a: sl.qr(a, mode="economic"), TALL),
    (lambda a: linalg.qr(a, mode="r"), lambda a: sl.qr(a, mode="r"), TALL),
    (linalg.lu, sl.lu, M),
    (lambda a: linalg.lu(a, permute_l=True), lambda a: sl.lu(a, permute_l=True), M),
    (lambda a: linalg.lu(a, p_indices=True), lambda a: sl.lu(a, p_indices=True), M),
    (linalg.polar, sl.polar, M), (linalg.polar, sl.polar, TALL),
    (lambda a: linalg.polar(a, "left"), lambda a: sl.polar(a, "left"), WIDE),
    (lambda a: linalg.expm_frechet(a, SPD), lambda a: sl.expm_frechet(a, SPD), M),
    (linalg.cosm, sl.cosm, M), (linalg.sinm, sl.sinm, M), (linalg.tanm, sl.tanm, 0.4 * M),
    (linalg.coshm, sl.coshm, M), (linalg.sinhm, sl.sinhm, M), (linalg.tanhm, sl.tanhm, M),
    (linalg.eigvalsh, sl.eigvalsh, SPD),
    (lambda a: linalg.norm(a, 2), lambda a: sl.norm(a, 2), TALL),
    (lambda a: linalg.norm(a, axis=0), lambda a: sl.norm(a, axis=0), TALL),
]


@pytest.mark.parametrize("ours, theirs, a", STAGED_LINALG)
def test_scipy_linalg_on_traced_values_is_scipys_exactly(ours, theirs, a):
    want = theirs(a)
    for got in (fgrad.jit(ours)(a), fgrad.vmap(ours)(a[None])):
        if isinstance(want, tuple):
            assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want))):
            g = g[0] if g.shape != w.shape else g
            onp.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype


def test_structured_matrices_are_scipys_and_a_companions_eigenvalues_move_as_the_roots():
    c, r, f = rng.standard_normal(3), rng.standard_normal(4), rng.standard_normal(3)
    for ours, theirs, args in ((linalg.hankel, sl.hankel, (c, r)), (linalg.hankel, sl.hankel,
                                                                     (c,)),
                               (linalg.leslie, sl.leslie, (f, r[:2])),
                               (linalg.companion, sl.companion, (r,))):
        onp.testing.assert_array_equal(fgrad.jit(ours)(*args), theirs(*args))
        check_grads(ours, args, order=2)
    # the roots 1, 2, 3 of x^3 - 6x^2 + 11x - 6: dr/da_k = -r^(3-k) / p'(r)
    a = onp.array([1.0, -6.0, 11.0, -6.0])
    roots = onp.array([1.0, 2.0, 3.0])
    jac = fgrad.jacfwd(lambda a: np.sort(np.real(np.linalg.eigvals(linalg.companion(a)))))(a)
    want = -roots[:, None] ** (3 - onp.arange(4))[None, :] / (
        3 * roots ** 2 - 12 * roots + 11)[:, None]
    onp.testing.assert_allclose(jac, want, rtol=1e-9, atol=1e-12)


def test_svd_qr_lu_derivatives_against_finite_differences_and_closed_forms():
    for a in (M, TALL, WIDE):
        check_grads(lambda a: linalg.svd(a, full_matrices=False)[1], (a,), order=2)
        check_grads(lambda a: linalg.qr(a, mode="economic")[1], (a,), order=2)
    check_grads(lambda a: linalg.qr(a, mode="r")[0], (TALL,), order=2)
    e = rng.standard_normal((3, 3))
    u, s, vh = sl.svd(M)
    _, (_, ds, _) = fgrad.jvp(linalg.svd, (M,), (e,))
    onp.testing.assert_allclose(ds, onp.einsum("ij,ik,kj->j", u, e, vh.T), rtol=1e-12)
    for kw in ({}, {"permute_l": True}):
        check_grads(lambda a: linalg.lu(a, **kw)[-2], (M,), order=2)
        check_grads(lambda a: linalg.lu(a, **kw)[-1], (M,), order=2)
    # a = p l u with p constant: dl is strictly lower, du upper, and p (dl u + l du) = da
    (p, lo, up), (dp, dl, du) = fgrad.jvp(linalg.lu, (M,), (e,))
    assert onp.all(dp == 0) and onp.all(onp.triu(dl) == 0) and onp.all(onp.tril(du, -1) == 0)
    onp.testing.assert_allclose(p @ (dl @ up + lo @ du), e, atol=1e-12)


def test_pinv_is_scipys_and_its_derivative_numpys():
    # scipy's cutoffs give the values (bit for bit, staged and batched); the derivative is
    # numpy's pinv's, here checked against central differences of scipy's own pinv
    for a in (M, TALL, WIDE):
        onp.testing.assert_array_equal(fgrad.jit(linalg.pinv)(a), sl.pinv(a))
        onp.testing.assert_array_equal(fgrad.vmap(linalg.pinv)(onp.stack([a, 2 * a])),
                                       onp.stack([sl.pinv(a), sl.pinv(2 * a)]))
        check_grads(linalg.pinv, (a,), order=2)
        g = fgrad.grad(lambda x: np.sum(linalg.pinv(x, rtol=1e-3) ** 2))(a)
        e, h = rng.standard_normal(a.shape), 1e-6
        fd = (onp.sum(sl.pinv(a + h * e, rtol=1e-3) ** 2) -
              onp.sum(sl.pinv(a - h * e, rtol=1e-3) ** 2)) / (2 * h)
        onp.testing.assert_allclose(onp.sum(g * e), fd, rtol=1e-6)
    staged = fgrad.jit(lambda a: linalg.pinv(a, return_rank=True))
    for a, want in ((TALL, 3), (onp.outer(TALL[:, 0], WIDE[0]), 1), (TALL, 3)):
        out, rank = staged(a)  # (the rank is a guard: read again at each replay)
        assert rank == want and onp.array_equal(out, sl.pinv(a))
    with pytest.raises(NotImplementedError, match="fgrad.scipy.linalg.pinv: the argument"):
        fgrad.grad(lambda a: np.sum(linalg.pinv(a, cond=1e-3)))(M)


def test_polar_derivative_holds_at_repeated_singular_values():
    # at an orthogonal q (every singular value 1) u = q, p = I, and a tangent e moves them by
    # q skew(q^T e) and sym(q^T e); rules through the SVD divide by the zero gaps there
    q = sl.expm(M - M.T)
    e = rng.standard_normal((3, 3))
    x = q.T @ e
    for side, (du_want, dp_want) in (("right", (q @ (x - x.T) / 2, (x + x.T) / 2)),
                                     ("left", ((e @ q.T - q @ e.T) @ q / 2,
                                               (e @ q.T + q @ e.T) / 2))):
        _, (du, dp) = fgrad.jvp(lambda a: linalg.polar(a, side), (q,), (e,))
        onp.testing.assert_allclose(du, du_want, atol=1e-12)
        onp.testing.assert_allclose(dp, dp_want, atol=1e-12)
    for a, side in ((M, "right"), (M, "left"), (TALL, "right"), (WIDE, "left")):
        check_grads(lambda a: linalg.polar(a, side)[0], (a,), order=2)
        check_grads(lambda a: linalg.polar(a, side)[1], (a,), order=2)


@pytest.mark.parametrize("name, f, df", [
    ("cosm", onp.cos, lambda x: -onp.sin(x)), ("sinm", onp.sin, onp.cos),
    ("tanm", onp.tan, lambda x: 1 / onp.cos(x) ** 2),
    ("coshm", onp.cosh, onp.sinh), ("sinhm", onp.sinh, onp.cosh),
    ("tanhm", onp.tanh, lambda x: 1 / onp.cosh(x) ** 2)])
def test_matrix_functions_derivative_at_a_diagonal_matrix_is_the_divided_differences(
        name, f, df):
    # L_f(diag(d), E)_ij = E_ij (f(d_i) - f(d_j)) / (d_i - d_j), f'(d_i) on the diagonal
    d = onp.array([0.3, -0.5, 0.9])
    e = rng.standard_normal((3, 3))
    diff = d[:, None] - d[None, :]
    ratio = onp.where(onp.eye(3, dtype=bool), df(d)[:, None],
                      (f(d)[:, None] - f(d)[None, :]) / (diff + onp.eye(3)))
    _, tangent = fgrad.jvp(getattr(linalg, name), (onp.diag(d),), (e,))
    onp.testing.assert_allclose(tangent, e * ratio, rtol=1e-10, atol=1e-13)
    g = fgrad.grad(lambda a: np.sum(getattr(linalg, name)(a) * e))(onp.diag(d))
    onp.testing.assert_allclose(g, e * ratio, rtol=1e-10, atol=1e-13)  # (symmetric ratio)


def test_expm_frechet_in_both_arguments():
    e, f = rng.standard_normal((2, 3, 3))
    check_grads(lambda a, e: linalg.expm_frechet(a, e)[1], (M, e), order=2)
    # linear in E; the second derivative of expm is symmetric in its two directions
    _, lin = fgrad.jvp(lambda e: linalg.expm_frechet(M, e, compute_expm=False), (e,), (f,))
    onp.testing.assert_allclose(lin, sl.expm_frechet(M, f, compute_expm=False), rtol=1e-12)
    _, ef = fgrad.jvp(lambda a: linalg.expm_frechet(a, e)[1], (M,), (f,))
    _, fe = fgrad.jvp(lambda a: linalg.expm_frechet(a, f)[1], (M,), (e,))
    onp.testing.assert_allclose(ef, fe, rtol=1e-10)


def test_scipy_linalg_decompositions_under_vmap_and_jit_of_grad():
    stack = onp.stack([M, M.T, SPD / 4])

    def loss(a):
        u, p = linalg.polar(a)
        q, r = linalg.qr(a)
        return np.sum(u * p) + np.sum(linalg.svd(a)[1] ** 3) + np.sum(r ** 2) + \
            np.sum(linalg.lu(a)[2])

    got = fgrad.jit(fgrad.vmap(fgrad.grad(loss)))(stack)
    for g, a in zip(got, stack):
        onp.testing.assert_allclose(g, fgrad.grad(loss)(a), rtol=1e-12)
    check_grads(loss, (M,), order=2)


def test_scipy_linalg_decompositions_refuse_what_has_no_derivative():
    for call, match in (
            (lambda a: linalg.svd(a), "full_matrices=True .scipy's default. on a non-square"),
            (lambda a: linalg.qr(a), "mode='full' .scipy's default. on a tall matrix"),
            (lambda a: linalg.qr(a, pivoting=True), "pivoting=True"),
            (lambda a: linalg.qr(a, mode="raw"), "mode='raw'"),
            (lambda a: linalg.lu(a), "a 4 x 3 matrix on traced values"),
            (lambda a: linalg.polar(a.T), "a 3 x 4 matrix with side='right'")):
        with pytest.raises(NotImplementedError, match=match):
            fgrad.grad(lambda a: np.sum(call(a)[0]))(TALL)
    with pytest.raises(NotImplementedError, match="a complex matrix with side='right'"):
        fgrad.jvp(linalg.polar, (M + 0j,), (M + 0j,))


def test_convolve_vjp_in_every_mode_against_the_full_jacobian():
    x, y = rng.standard_normal(6), rng.standard_normal(3)
    for mode in ("full", "same", "valid"):
        jac = fgrad.jacrev(lambda x: signal.convolve(x, y, mode=mode))(x)
        cols = [ss.convolve(e, y, mode=mode) for e in onp.eye(6)]
        onp.testing.assert_allclose(jac, onp.array(cols).T, atol=1e-12)


# --- odeint ---------------------------------------------------------------------------------

def _decay(y, t, k):
    return -k * y


def test_correlate2d_in_every_mode_with_even_and_larger_kernels():
    # correlate2d centres 'same' one later than correlate for an even kernel; 'valid' with the
    # kernel the larger input swaps them in scipy
    for s1, s2 in (((4, 5), (2, 2)), ((3, 3), (4, 5)), ((5, 4), (3, 2))):
        x, y = rng.standard_normal(s1), rng.standard_normal(s2)
        for mode in ("full", "same", "valid"):
            if mode == "valid" and not (all(a >= b for a, b in zip(s1, s2)) or
                                        all(a <= b for a, b in zip(s1, s2))):
                continue
            f = lambda x, y: signal.correlate2d(x, y, mode)  # noqa: E731
            onp.testing.assert_array_equal(fgrad.jit(f)(x, y), ss.correlate2d(x, y, mode))
            check_grads(f, (x, y), order=1)
            onp.testing.assert_allclose(
                fgrad.vmap(f, in_axes=(0, None))(onp.stack([x, -x]), y),
                onp.stack([ss.correlate2d(x, y, mode), ss.correlate2d(-x, y, mode)]),
                rtol=1e-12, atol=1e-12)


def test_odeint_gradient_against_the_closed_form():
    t = onp.array([0.0, 0.5, 1.5])

    def final(y0, k):
        return integrate.odeint(_decay, y0, t, args=(k,), rtol=1e-12, atol=1e-12)[-1, 0]

    gy0, gk = fgrad.grad(final, argnums=(0, 1))(onp.array([2.0]), 0.7)
    assert gy0[0] == pytest.approx(math.exp(-0.7 * 1.5), rel=1e-8)
    assert gk == pytest.approx(-1.5 * 2.0 * math.exp(-0.7 * 1.5), rel=1e-8)
    # forward mode: the same numbers by forward sensitivities
    _, tk = fgrad.jvp(lambda k: final(onp.array([2.0]), k), (0.7,), (1.0,))
    assert tk == pytest.approx(gk, rel=1e-8)


def _van_der_pol(y, t, mu):  # stiff for large mu
    return np.stack([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]])


def _pendulum(y, t, g, damping):
    return np.stack([y[1], -g * np.sin(y[0]) - damping * y[1]])


@pytest.mark.parametrize("func, args", [(_pendulum, (9.8, 0.3)), (_van_der_pol, (50.0,))],
                         ids=["non-stiff", "stiff"])
def test_odeint_derivatives_in_y0_t_and_args_against_finite_differences(func, args):
    y0, t = onp.array([1.0, 0.0]), onp.array([0.0, 0.3, 0.7])

    def f(y0, t, *args):
        return integrate.odeint(func, y0, t, args=args, rtol=1e-12, atol=1e-12)

    check_grads(f, (y0, t) + args, order=1, modes=("fwd", "rev"), eps=1e-5, rtol=1e-4,
                atol=1e-6)


_HELD = {}


@pytest.mark.parametrize("solver", ["odeint", "solve_ivp"])
def test_a_closure_over_traced_values_is_taken_as_args_and_a_global_refused(solver):
    tight = dict(rtol=1e-11, atol=1e-12)

    def solve(func, args=()):  # func(t, y, *args)
        if solver == "odeint":
            return integrate.odeint(func, np.ones(2), onp.array([0.0, 1.0, 2.0]), args=args,
                                    tfirst=True, **tight)[1:].T
        return integrate.solve_ivp(func, (0.0, 2.0), np.ones(2), t_eval=[1.0, 2.0], args=args,
                                   **tight).y

    def by_args(k, c):
        return solve(lambda t, y, k, c: -k * y + c * np.sin(t), (k, c))

    def by_closure(k, c):
        p = {"k": k, "c": [c]}  # (a dict and a list in the cell, traced leaves inside)

        def rhs(t, y):
            return -p["k"] * y + p["c"][0] * np.sin(t)
        return solve(rhs)

    for transform in (lambda f: fgrad.jacrev(f, argnums=(0, 1))(0.7, 0.3),
                      lambda f: fgrad.jacfwd(f, argnums=(0, 1))(0.7, 0.3),
                      lambda f: fgrad.hessian(lambda k, c: np.sum(f(k, c)))(0.7, 0.3),
                      lambda f: fgrad.jit(fgrad.grad(lambda k, c: np.sum(f(k, c))))(0.7, 0.3),
                      lambda f: fgrad.vmap(lambda k: np.sum(f(k, 0.3)))(onp.array([0.7, 0.9]))):
        want, got = transform(by_args), transform(by_closure)
        for a, b in zip(fgrad.tree_util.tree_leaves(want), fgrad.tree_util.tree_leaves(got)):
            onp.testing.assert_array_equal(a, b)
    # a traced value reached through a global (or an attribute) cannot be taken: refused

    def via_global(k):
        _HELD["k"] = k
        return solve(lambda t, y: -_HELD["k"] * y)[0, -1]

    with pytest.raises(ClosedOverTracerError, match=f"{solver}'s func .*args="):
        fgrad.grad(via_global)(0.5)


# --- quad ----------------------------------------------------------------------------------

def _decaying(a, b, k):  # the integral of exp(-k t) over [a, b]
    return integrate.quad(lambda t, k: np.exp(-k * t), a, b, args=(k,), epsabs=1e-13,
                          epsrel=1e-13)[0]


def test_cumulative_trapezoid_of_a_line_is_exact_in_its_slope_and_its_points():
    # the rule is exact on a line: the running integral of a * t from t_0 is
    # a * (t**2 - t_0**2) / 2, whose derivative in a is (t**2 - t_0**2) / 2, in t_k a * t_k,
    # and in t_0 -a * t_0
    t = onp.cumsum(onp.r_[0.5, rng.uniform(0.5, 1.0, 5)])
    d_slope = fgrad.grad(lambda a: np.sum(integrate.cumulative_trapezoid(a * t, t)))(2.0)
    assert d_slope == pytest.approx(onp.sum(t[1:] ** 2 - t[0] ** 2) / 2, rel=1e-13)
    jac = fgrad.jacfwd(lambda s: integrate.cumulative_trapezoid(2.0 * s, s, initial=0))(t)
    want = onp.diag(2.0 * t)
    want[0, 0], want[1:, 0] = 0.0, -2.0 * t[0]
    onp.testing.assert_allclose(jac, want, atol=1e-12)
    got = fgrad.jit(lambda y: integrate.cumulative_trapezoid(y, dx=0.3, axis=0))(M)
    onp.testing.assert_array_equal(got, si.cumulative_trapezoid(M, dx=0.3, axis=0))
    with pytest.raises(ValueError, match="`initial` must be `None` or `0`."):
        fgrad.grad(lambda y: np.sum(integrate.cumulative_trapezoid(y, initial=1)))(X)


def test_quad_derivatives_in_the_limits_and_args_against_the_closed_form():
    # (exp(-k a) - exp(-k b)) / k: d/da = -exp(-k a), d/db = exp(-k b), and in k below
    a, b, k = 0.2, 1.3, 0.7
    ea, eb = math.exp(-k * a), math.exp(-k * b)
    dk = (-a * ea + b * eb) / k - (ea - eb) / k ** 2
    assert _decaying(a, b, k) == pytest.approx((ea - eb) / k, rel=1e-12)
    assert _decaying(a, b, k) == si.quad(lambda t: math.exp(-k * t), a, b, epsabs=1e-13,
                                         epsrel=1e-13)[0]  # (scipy's value, the same call)
    for d in (fgrad.grad(_decaying, argnums=(0, 1, 2)),
              lambda *v: fgrad.jacfwd(_decaying, argnums=(0, 1, 2))(*v)):
        onp.testing.assert_allclose(d(a, b, k), [-ea, eb, dk], rtol=1e-10)
    # second derivatives: d2/dadb = 0, d2/da2 = k exp(-k a), d2/dk da = a exp(-k a)
    h = fgrad.hessian(_decaying, argnums=(0, 1, 2))(a, b, k)
    onp.testing.assert_allclose([h[0][0], h[0][1], h[0][2]], [k * ea, 0.0, a * ea],
                                rtol=1e-9, atol=1e-12)
    # an infinite limit (plain): the integral of exp(-k t^2) over [0, inf), sqrt(pi / k) / 2
    gauss = lambda k: integrate.quad(lambda t: np.exp(-k * t * t), 0.0, np.inf)[0]  # noqa
    assert fgrad.grad(gauss)(k) == pytest.approx(-math.sqrt(math.pi / k) / (4 * k), rel=1e-7)
    # an array argument (its cotangent one vector integral): the moments of exp(-t)
    moments = lambda p: integrate.quad(  # noqa: E731
        lambda t, p: np.exp(-t) * np.sum(p * t ** onp.arange(3)), 0.0, np.inf, args=(p,))[0]
    onp.testing.assert_allclose(fgrad.grad(moments)(onp.ones(3)), [1.0, 1.0, 2.0], rtol=1e-8)
    check_grads(lambda v: _decaying(v[0], v[1], v[2]), (onp.array([a, b, k]),), order=2,
                rtol=1e-6)


def test_dblquad_is_quad_of_quad_differentiable_in_args_limits_and_closures():
    # (plain-only before) the integral of exp(-k x y) over 0 <= y <= x <= 1: scipy's value;
    # its derivative in k the integral of -x y exp(-k x y), by scipy
    def f(y, x, k):
        return np.exp(-k * x * y)

    want = si.dblquad(lambda y, x: onp.exp(-2.0 * x * y), 0.0, 1.0, 0.0, lambda x: x)
    assert integrate.dblquad(f, 0.0, 1.0, 0.0, lambda x: x, args=(np.asarray(2.0) * 1.0,)) \
        == want
    dk = si.dblquad(lambda y, x: -x * y * onp.exp(-2.0 * x * y), 0.0, 1.0, 0.0, lambda x: x,
                    epsabs=1e-13, epsrel=1e-13)[0]
    assert fgrad.grad(lambda k: integrate.dblquad(f, 0.0, 1.0, 0.0, lambda x: x,
                                                  args=(k,))[0])(2.0) == pytest.approx(dk,
                                                                                      rel=1e-9)
    # x + y over 0 <= y <= c x, 0 <= x <= b: c b^3 / 3 + c^2 b^3 / 6, in c through the
    # limit function's closure, in b through the outer limit, and in a closure of func
    def area(b, c, s=1.0):
        return integrate.dblquad(lambda y, x: s * (x + y), 0.0, b, 0.0, lambda x: c * x)[0]

    b, c = 1.5, 2.0
    grads = fgrad.grad(area, argnums=(0, 1, 2))(b, c, 1.0)
    assert grads == (pytest.approx(c * b ** 2 + c * c * b ** 2 / 2, rel=1e-10),
                     pytest.approx(b ** 3 / 3 + c * b ** 3 / 3, rel=1e-10),
                     pytest.approx(c * b ** 3 / 3 + c * c * b ** 3 / 6, rel=1e-10))
    assert fgrad.grad(fgrad.grad(lambda c: area(b, c)))(c) == pytest.approx(b ** 3 / 3,
                                                                             rel=1e-8)
    onp.testing.assert_allclose(fgrad.vmap(lambda c: area(b, c))(onp.array([1.0, 2.0])),
                                [b ** 3 / 3 + b ** 3 / 6, c * b ** 3 / 3 + c * c * b ** 3 / 6],
                                rtol=1e-12)
    assert fgrad.jit(lambda c: area(b, c))(c) == area(b, c)


def test_fixed_quad_and_romb_are_scipys_sums_differentiable_in_everything_they_read():
    # (plain-only before) Gauss-Legendre's sum of f at scipy's nodes: d/db is f(b) to the
    # rule's accuracy, d/dk the rule applied to df/dk; scipy's value, traced or staged
    def f(t, k):
        return np.exp(k * t) * np.sin(t)

    want = si.fixed_quad(lambda t, k: onp.exp(k * t) * onp.sin(t), 0.0, 2.0, args=(0.5,))
    assert integrate.fixed_quad(f, 0.0, np.asarray(2.0) * 1.0, args=(0.5,)) == want
    assert fgrad.jit(lambda b: integrate.fixed_quad(f, 0.0, b, args=(0.5,))[0])(2.0) == want[0]
    assert fgrad.grad(lambda b: integrate.fixed_quad(f, 0.0, b, args=(0.5,), n=12)[0])(2.0) \
        == pytest.approx(onp.exp(1.0) * onp.sin(2.0), rel=1e-12)
    dk = si.fixed_quad(lambda t: t * onp.exp(0.5 * t) * onp.sin(t), 0.0, 2.0)[0]
    assert fgrad.grad(lambda k: integrate.fixed_quad(f, 0.0, 2.0, args=(k,))[0])(0.5) == \
        pytest.approx(dk, rel=1e-13)
    # Romberg's rule is linear in the samples (its Jacobian scipy's rule of the unit vectors)
    # and in dx (its derivative the rule at dx = 1)
    y = onp.sin(onp.linspace(0.0, 2.0, 9))
    assert integrate.romb(np.asarray(y) * 1.0, dx=0.25) == si.romb(y, dx=0.25)
    onp.testing.assert_allclose(fgrad.grad(lambda y: integrate.romb(y, 0.25))(y),
                                si.romb(onp.eye(9), dx=0.25, axis=0), rtol=1e-14)
    assert fgrad.grad(lambda dx: integrate.romb(y, dx))(0.25) == pytest.approx(si.romb(y),
                                                                                rel=1e-14)
    with pytest.raises(ValueError, match="one plus a non-negative power of 2"):
        fgrad.grad(lambda y: integrate.romb(y))(y[:8])


def test_quad_of_a_closure_under_every_transform_and_what_it_refuses():
    def by_args(k, c):
        return integrate.quad(lambda t, k, c: np.cos(c * t) * np.exp(-k * t), 0.0, 2.0,
                              args=(k, c))[0]

    def by_closure(k, c):
        return integrate.quad(lambda t: np.cos(c * t) * np.exp(-k * t), 0.0, 2.0)[0]

    for transform in (lambda f: fgrad.grad(f, argnums=(0, 1))(0.7, 0.3),
                      lambda f: fgrad.jacfwd(f, argnums=(0, 1))(0.7, 0.3),
                      lambda f: fgrad.hessian(f, argnums=(0, 1))(0.7, 0.3),
                      lambda f: fgrad.jit(fgrad.grad(f))(0.7, 0.3),
                      lambda f: fgrad.vmap(fgrad.grad(f), (0, None))(onp.array([0.7, 0.9]), 0.3)):
        want, got = transform(by_args), transform(by_closure)
        for x, y in zip(fgrad.tree_util.tree_leaves(want), fgrad.tree_util.tree_leaves(got)):
            onp.testing.assert_array_equal(x, y)
    ks = onp.array([0.7, 0.9])
    staged = fgrad.jit(fgrad.grad(by_closure))
    assert [staged(k, 0.3) for k in ks] == [fgrad.grad(by_closure)(k, 0.3) for k in ks]
    assert sum(len(graphs) for graphs in staged.cache.values()) == 1
    onp.testing.assert_array_equal(fgrad.vmap(by_closure, (0, None))(ks, 0.3),
                                   [by_closure(k, 0.3) for k in ks])

    def via_global(k):
        _HELD["k"] = k
        return integrate.quad(lambda t: np.exp(-_HELD["k"] * t), 0.0, 1.0)[0]

    with pytest.raises(ClosedOverTracerError, match="quad's func .*args="):
        fgrad.grad(via_global)(0.5)
    with pytest.raises(NotImplementedError, match="quad: full_output= is not supported"):
        fgrad.grad(lambda k: integrate.quad(lambda t: k * t, 0.0, 1.0, full_output=1)[0])(1.0)
    with pytest.raises(NoDerivativeRuleError, match="quad has no derivative in its argument "
                       "'epsabs' \\(a setting: how close the result is to the integral"):
        fgrad.grad(lambda k: integrate.quad(lambda t: t, 0.0, 1.0, epsabs=k)[0])(1e-9)


def test_odeint_under_jit_and_vmap_through_its_public_function():
    # its check for a closure ran func on the arguments' values: under jit that guarded them
    # (and func's own fgrad.numpy calls were staged, so it refused every func), under vmap it
    # read a batch
    def final(k):
        ys = integrate.odeint(lambda y, t, k: -k * y + np.sin(t), np.array([1.0, 2.0]),
                              np.linspace(0.0, 1.0, 4), args=(k,), rtol=1e-12, atol=1e-12)
        return np.sum(ys[-1])

    ks = onp.array([0.7, 1.1])
    want = [fgrad.grad(final)(k) for k in ks]
    staged = fgrad.jit(fgrad.grad(final))
    assert [staged(k) for k in ks] == want
    assert sum(len(graphs) for graphs in staged.cache.values()) == 1
    assert [fgrad.grad(fgrad.jit(final))(k) for k in ks] == want
    onp.testing.assert_array_equal(fgrad.vmap(fgrad.grad(final))(ks), want)
    onp.testing.assert_array_equal(fgrad.vmap(final)(ks), [final(k) for k in ks])
    # a y0 given as a list holding a traced value (the probe went through lists before)
    y0_list = lambda x: np.sum(integrate.odeint(  # noqa: E731
        lambda y, t: -y, [x, 1.0], onp.array([0.0, 1.0]), rtol=1e-12, atol=1e-12)[-1])
    assert fgrad.grad(y0_list)(2.0) == pytest.approx(math.exp(-1.0), rel=1e-8)
    assert fgrad.jit(fgrad.grad(y0_list))(2.0) == fgrad.grad(y0_list)(2.0)
    # a closure over the traced value: taken as an argument, under jit and vmap as eagerly
    def closing(k):
        return integrate.odeint(lambda y, t: -k * y, onp.array([1.0]), onp.array([0.0, 1.0]))

    eager = [closing(k) for k in ks]
    staged = fgrad.jit(closing)
    onp.testing.assert_array_equal([staged(k) for k in ks], eager)
    onp.testing.assert_array_equal(fgrad.vmap(closing)(ks), eager)


def test_odeint_tfirst_and_plain_values():
    t = onp.array([0.0, 1.0])
    ours = integrate.odeint(lambda t, y, k: -k * y, onp.array([1.0]), t, args=(0.5,),
                            tfirst=True)
    onp.testing.assert_array_equal(
        ours, si.odeint(lambda t, y, k: -k * y, onp.array([1.0]), t, args=(0.5,), tfirst=True))
    g = fgrad.grad(lambda k: integrate.odeint(lambda t, y, k: -k * y, onp.array([1.0]), t,
                                              args=(k,), tfirst=True, rtol=1e-12,
                                              atol=1e-12)[-1, 0])(0.5)
    assert g == pytest.approx(-math.exp(-0.5), rel=1e-8)


# --- solve_ivp ------------------------------------------------------------------------------

def _forced(t, y, k, c):  # a damped, driven oscillator in solve_ivp's order (t first)
    return np.stack([y[1], -k * y[0] - c * y[1] + 0.1 * np.sin(t)])


def _forced_numpy(t, y, k, c):
    return onp.array([y[1], -k * y[0] - c * y[1] + 0.1 * onp.sin(t)])


IVP_METHODS = ["RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA"]


@pytest.mark.parametrize("method", IVP_METHODS)
def test_solve_ivp_values_are_scipys_bit_for_bit_traced_and_staged(method):
    y0, t_eval = onp.array([1.0, 0.2]), onp.linspace(0.5, 3.0, 6)
    want = si.solve_ivp(_forced_numpy, (0.0, 3.5), y0, method=method, t_eval=t_eval,
                        args=(2.0, 0.3))

    def total(y0, k):
        return np.sum(integrate.solve_ivp(_forced, (0.0, 3.5), y0, method=method,
                                          t_eval=t_eval, args=(k, 0.3)).y ** 2)

    # traced: the solve runs over the whole span with the start added to t_eval, and y is
    # laid out as scipy's, so even a sum over it is scipy's to the last bit
    assert fgrad.value_and_grad(total, argnums=(0, 1))(y0, 2.0)[0] == onp.sum(want.y ** 2)
    staged = fgrad.jit(lambda y0, k: integrate.solve_ivp(
        _forced, (0.0, 3.5), y0, method=method, t_eval=t_eval, args=(k, 0.3)).y)
    for _ in range(2):  # the trace's value, then the replay's
        onp.testing.assert_array_equal(staged(y0, 2.0), want.y)
    plain = integrate.solve_ivp(_forced_numpy, (0.0, 3.5), y0, method=method, t_eval=t_eval,
                                args=(2.0, 0.3))
    assert plain.nfev == want.nfev  # (plain values: scipy's own call and result)
    onp.testing.assert_array_equal(plain.y, want.y)


@pytest.mark.parametrize("method", ["RK45", "Radau"])
def test_solve_ivp_derivatives_against_finite_differences(method):
    def f(y0, k, c):
        return integrate.solve_ivp(_forced, (0.0, 1.5), y0, method=method,
                                   t_eval=[0.5, 1.5], args=(k, c), rtol=1e-11, atol=1e-12).y

    check_grads(f, (onp.array([1.0, 0.2]), 2.0, 0.3), order=1, modes=("fwd", "rev"),
                eps=1e-5, rtol=1e-4, atol=1e-6)


def test_solve_ivp_against_closed_forms_in_the_rate_the_start_and_the_times():
    tight = dict(rtol=1e-11, atol=1e-13)

    def y(k, t0, t_eval):  # y' = -k y, y(t0) = 2: y(t) = 2 exp(-k (t - t0))
        return integrate.solve_ivp(lambda t, y, k: -k * y, (t0, 3.0), 2.0 * np.ones(1),
                                   t_eval=t_eval, args=(k,), **tight).y[0]

    times = onp.array([1.0, 2.5])
    exact = 2.0 * onp.exp(-0.7 * (times - 0.2))
    onp.testing.assert_allclose(fgrad.jacfwd(y)(0.7, 0.2, times), -(times - 0.2) * exact,
                                rtol=1e-8)
    onp.testing.assert_allclose(fgrad.jacrev(y, argnums=1)(0.7, 0.2, times), 0.7 * exact,
                                rtol=1e-8)
    onp.testing.assert_allclose(fgrad.jacrev(y, argnums=2)(0.7, 0.2, times),
                                onp.diag(-0.7 * exact), rtol=1e-8)
    # the second derivative in the rate, reverse over forward and under vmap and jit
    second = fgrad.grad(fgrad.grad(lambda k: y(k, 0.0, [1.5])[0]))
    assert second(0.7) == pytest.approx(2.0 * 1.5 ** 2 * math.exp(-0.7 * 1.5), rel=1e-7)
    ks = onp.array([0.7, 1.3])
    onp.testing.assert_array_equal(fgrad.jit(fgrad.vmap(second))(ks), [second(k) for k in ks])
    # a span run backwards, and a t_eval that starts at t_span[0] (no time added twice)
    back = fgrad.grad(lambda k: integrate.solve_ivp(
        lambda t, y, k: -k * y, (2.0, 0.0), np.ones(1), t_eval=[0.0], args=(k,),
        **tight).y[0, 0])
    assert back(0.5) == pytest.approx(2.0 * math.exp(1.0), rel=1e-8)
    onp.testing.assert_allclose(fgrad.grad(lambda k: np.sum(y(k, 0.0, [0.0, 1.0])))(0.7),
                                -2.0 * math.exp(-0.7), rtol=1e-8)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
@pytest.mark.parametrize("solver", ["odeint", "solve_ivp"])
def test_a_conversion_in_the_odes_function_is_named_there_not_blamed_on_scipy(solver, mode):
    # The forward solve runs the function on plain values, the rules on traced ones: a
    # float() there was reported as "scipy.integrate.solve_ivp was called on a traced value
    # ... use fgrad.scipy.integrate.solve_ivp" (scipy's frames were on the stack) and as
    # fgrad's own rule reading a value
    def rhs(t, y, k):
        return -k * y * float(y[0])

    def end(k):
        if solver == "odeint":
            return integrate.odeint(lambda y, t, k: rhs(t, y, k), np.ones(1),
                                    onp.array([0.0, 1.0]), args=(k,))[-1, 0]
        return integrate.solve_ivp(rhs, (0.0, 1.0), np.ones(1), t_eval=[1.0],
                                   args=(k,)).y[0, -1]

    run = (lambda: fgrad.grad(end)(0.5)) if mode == "grad" else (
        lambda: fgrad.jvp(end, (0.5,), (1.0,)))
    with pytest.raises(ConcretizationError) as info:
        run()
    message = str(info.value)
    assert message.startswith("float() of a traced value would silently drop its derivative")
    assert f"rule of fgrad.scipy.integrate.{solver}, which runs your rhs() (" in message
    assert "was called on a traced value" not in message and "to fix" not in message


def test_an_odes_branches_keep_the_rules_staging_quiet():
    # the rules stage their systems; a function whose branches come out differently along
    # the solve stops being traced after jit's limit and runs eagerly, with no jit warning
    # the user did not ask for
    def rhs(t, y, k):
        out = -k * y
        for c in onp.linspace(0.05, 0.95, 12):
            if y[0] > c:
                out = out - 0.01 * k
        return out

    def end(k):
        return integrate.solve_ivp(rhs, (0.0, 5.0), np.ones(1), t_eval=[5.0], args=(k,),
                                   rtol=1e-9, atol=1e-11).y[0, -1]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = fgrad.grad(end)(0.7)
    assert onp.isfinite(g) and g < 0


def test_solve_ivp_refusals_name_what_to_do():
    def decay(k, **kw):
        return integrate.solve_ivp(lambda t, y, k: -k * y, (0.0, 1.0), np.ones(1),
                                   args=(k,), **kw).y[0, -1]

    with pytest.raises(NotImplementedError, match=r"give t_eval=, the times the solution is "
                       r"wanted at \(t_eval=\[t_end\] for the end alone\)"):
        fgrad.grad(decay)(0.5)
    with pytest.raises(NotImplementedError, match="solve_ivp: events= is not supported on "
                       "traced values"):
        fgrad.grad(lambda k: decay(k, t_eval=[1.0], events=lambda t, y, k: y[0]))(0.5)
    with pytest.raises(NotImplementedError, match="solve_ivp: jac= is not supported"):
        fgrad.grad(lambda k: decay(k, t_eval=[1.0], method="Radau", jac=lambda t, y, k: -k))(
            0.5)
    with pytest.raises(ValueError, match="Values in `t_eval` are not within `t_span`."):
        fgrad.grad(lambda k: decay(k, t_eval=[1.5]))(0.5)


def test_a_traced_solver_setting_is_refused_by_name_before_scipy_sees_it():
    # (handed to scipy, a traced rtol made odepack print the conversion's error and raise its
    # own; within a few such calls the process died in the garbage collector)
    def ode(p, setting):
        return np.sum(integrate.odeint(lambda y, t: -y, p[:1], onp.array([0.0, 1.0]),
                                       **{setting: p[1]}))

    def ivp(p, setting):
        return np.sum(integrate.solve_ivp(lambda t, y: -y, (0.0, 1.0), p[:1], t_eval=[1.0],
                                          method="LSODA", **{setting: p[1]}).y)

    p = onp.array([1.0, 1e-6])
    for f, settings in ((ode, ("rtol", "atol", "h0", "hmax", "hmin")),
                        (ivp, ("rtol", "atol", "first_step", "max_step"))):
        for setting in settings:
            for plain_y0 in (False, True):
                g = (lambda q: f(onp.concatenate([p[:1], q[None]]), setting)) if plain_y0 \
                    else (lambda q: f(q, setting))
                with pytest.raises(NoDerivativeRuleError,
                                   match=f"no derivative in its argument '{setting}'"):
                    fgrad.grad(g)(p[1] if plain_y0 else p)
            with pytest.raises(ConcretizationError, match=f"make '{setting}' static"):
                fgrad.jit(lambda q: f(q, setting))(p)


def test_scipys_traced_singular_value_cutoffs_are_refused_by_name():
    A = onp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
    b = onp.array([1.0, 2.0, 3.0])
    for name, f in (("cond", lambda c: linalg.lstsq(A, b, cond=c)[0]),
                    ("atol", lambda c: linalg.pinv(A, atol=c)),
                    ("rtol", lambda c: linalg.pinv(A, rtol=c))):
        with pytest.raises(NoDerivativeRuleError, match=f"argument '{name}' \\(a cutoff"):
            fgrad.jacfwd(f)(1e-10)


def test_scipys_other_functions_run_on_plain_values_and_refuse_traced_ones_by_name():
    # (fgrad.scipy.optimize.brentq and the like were AttributeErrors; only scipy.linalg had
    # scipy's other functions)
    x = onp.array([0.3, 1.2, -0.5, 2.0])
    for module, name, call, want in (
            (optimize, "approx_fprime", lambda f, t: f(t * onp.ones(2), lambda z: z @ z),
             "root, minimize, root_scalar"),
            (integrate, "tplquad", lambda f, t: f(lambda w, y, z, t: t * z * y * w, 0.0, 1.0,
                                                  0.0, 1.0, 0.0, 1.0, args=(t,))[0],
             "odeint, solve_ivp, quad"),
            (signal, "wiener", lambda f, t: f(x * t, 3), "stop_gradient"),
            (special, "kolmogorov", lambda f, t: f(t), "stop_gradient"),
            (stats, "tmean", lambda f, t: f(x * t), "stop_gradient")):
        fn = getattr(module, name)
        theirs = getattr(sys.modules[module.__name__.replace("fgrad.", "")], name)
        onp.testing.assert_array_equal(call(fn, 0.5), call(theirs, 0.5))
        with pytest.raises(NoDerivativeRuleError, match=rf"{module.__name__}\.{name} has no "
                           rf"derivative rule: it runs scipy's function on plain values only; .*"
                           rf"{want}"):
            fgrad.jacrev(lambda t: call(fn, t))(0.5)
    with pytest.raises(AttributeError, match="fgrad has no derivatives of "
                       "scipy.stats.rv_histogram; on plain values use scipy's own"):
        stats.rv_histogram  # noqa: B018
    assert not hasattr(optimize, "no_such_function")


# --- optimisation -----------------------------------------------------------------------------

def _quadratic(p, a=3.0):
    return np.sum((p["w"] - a) ** 2) + (p["b"] + 1.0) ** 2 + 0.1 * np.sum(p["w"] ** 4)


@pytest.mark.parametrize("method", ["BFGS", "L-BFGS-B", "Newton-CG", "trust-ncg", "trust-exact",
                                    "dogleg", "trust-constr"])
def test_minimize_on_a_pytree_with_fgrads_derivatives(method):
    x0 = {"w": onp.zeros(2), "b": 0.5}
    res = optimize.minimize(_quadratic, x0, method=method)
    assert res.success, res.message
    assert set(res.x) == {"w", "b"} and onp.shape(res.x["w"]) == (2,)
    # stationarity: 2 (w - 3) + 0.4 w^3 = 0
    w = so.brentq(lambda w: 2 * (w - 3) + 0.4 * w ** 3, 0, 3)
    onp.testing.assert_allclose(res.x["w"], [w, w], rtol=1e-5)
    assert float(res.x["b"]) == pytest.approx(-1.0, abs=1e-5)


def test_minimize_takes_a_list_of_numbers_as_an_array_as_scipy():
    # (a list x0 reached the function as a list: `x - 1.0` raised TypeError) a list or tuple
    # of numbers is an array, as scipy takes it; a list of other pytrees stays a pytree
    res = optimize.minimize(lambda x: np.sum((x - 1.0) ** 2 + x ** 4), [0.0, 0.5])
    want = so.minimize(lambda x: onp.sum((x - 1.0) ** 2 + x ** 4), [0.0, 0.5])
    assert isinstance(res.x, onp.ndarray)
    onp.testing.assert_allclose(res.x, want.x, rtol=1e-5)
    assert fgrad.grad(lambda a: optimize.minimize(lambda x: np.sum((x - a) ** 2), (a, 0.0),
                                                  tol=1e-12).x[1])(1.0) == pytest.approx(1.0)
    nested = optimize.minimize(lambda p: (p[0]["w"] - 1.0) ** 2, [{"w": 0.0}]).x
    assert nested[0]["w"] == pytest.approx(1.0)


def test_minimize_uses_fewer_evaluations_than_finite_differences():
    def rosen(x):
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    x0 = onp.full(6, -0.5)
    ours = optimize.minimize(rosen, x0, method="BFGS")
    fd = so.minimize(so.rosen, x0, method="BFGS")
    onp.testing.assert_allclose(ours.x, onp.ones(6), atol=1e-4)
    assert ours.nfev < fd.nfev


def test_minimizer_is_differentiable_in_its_arguments():
    # argmin_x (x - a)^2 + b x^2 = a / (1 + b)
    def argmin(a, b):
        return optimize.minimize(lambda x, a, b: np.sum((x - a) ** 2 + b * x ** 2),
                                 onp.zeros(1), args=(a, b), method="BFGS", tol=1e-12).x[0]

    a, b = 2.0, 0.5
    assert argmin(a, b) == pytest.approx(a / (1 + b), rel=1e-7)
    ga, gb = fgrad.grad(argmin, argnums=(0, 1))(a, b)
    assert ga == pytest.approx(1 / (1 + b), rel=1e-7)
    assert gb == pytest.approx(-a / (1 + b) ** 2, rel=1e-7)
    # second derivative, through the implicit rule's own rules
    assert fgrad.grad(fgrad.grad(argmin, argnums=1), argnums=1)(a, b) == pytest.approx(
        2 * a / (1 + b) ** 3, rel=1e-6)


def test_the_minimum_is_differentiable_in_the_arguments_as_the_envelope_theorem_says():
    # (res.fun was scipy's number under grad: its derivative fell to zero, silently; under
    # vmap it was computed again and had one)
    def L(w, a):
        return np.sum((w - a) ** 2) + np.sum(w ** 4)

    def minimum(a, method="BFGS"):
        return optimize.minimize(L, onp.zeros(2), args=(a,), method=method, tol=1e-12).fun

    a = onp.array([-0.3, 0.7])
    # the minimiser w solves 2 (w - a) + 4 w^3 = 0; d min / da = dL/da at w = -2 (w - a)
    w = onp.array([so.brentq(lambda w: 2 * (w - c) + 4 * w ** 3, -5, 5) for c in a])
    want = -2 * (w - a)
    for method in ("BFGS", "L-BFGS-B", "Newton-CG"):
        onp.testing.assert_allclose(fgrad.grad(minimum)(a, method), want, rtol=1e-6)
    onp.testing.assert_allclose(minimum(a), so.minimize(
        lambda w: onp.sum((w - a) ** 2) + onp.sum(w ** 4), onp.zeros(2), tol=1e-12).fun,
        rtol=1e-12)
    for how in (fgrad.jit, lambda f: lambda a: fgrad.vmap(f)(a[None])[0]):
        onp.testing.assert_allclose(fgrad.grad(how(minimum))(a), want, rtol=1e-6)
    # second derivative: d/da of -2 (w(a) - a), w' = 2 / (2 + 12 w^2)
    onp.testing.assert_allclose(onp.diag(fgrad.hessian(minimum)(a)),
                                -2 * (2 / (2 + 12 * w ** 2) - 1), rtol=1e-5)
    # root's residual at the solution stays about zero, in value and derivative
    def residual(c):
        return optimize.root(lambda x, c: x ** 3 + x - c, onp.zeros(1), args=(c,),
                             tol=1e-13).fun[0]

    assert abs(residual(10.0)) < 1e-12 and abs(fgrad.grad(residual)(10.0)) < 1e-9


def test_a_solution_is_differentiable_in_what_its_function_closes_over():
    # (minimize(lambda x: loss(x, theta), x0) with theta traced raised a ConcretizationError
    # about writing into a plain array: scipy converted the closure's traced loss)
    def argmin(a, b):  # argmin_x (x - a)^2 + b x^2 = a / (1 + b), a and b closed over
        p = {"a": a, "b": b}
        return optimize.minimize(lambda x: np.sum((x - p["a"]) ** 2 + p["b"] * x ** 2),
                                 onp.zeros(1), method="BFGS", tol=1e-12).x[0]

    a, b = 2.0, 0.5
    assert argmin(a, b) == pytest.approx(a / (1 + b), rel=1e-7)
    for how in (fgrad.grad, lambda f, **k: fgrad.jit(fgrad.grad(f, **k))):
        ga, gb = how(argmin, argnums=(0, 1))(a, b)
        assert (ga, gb) == (pytest.approx(1 / (1 + b), rel=1e-7),
                            pytest.approx(-a / (1 + b) ** 2, rel=1e-7))
    assert fgrad.grad(fgrad.grad(argmin, argnums=1), argnums=1)(a, b) == pytest.approx(
        2 * a / (1 + b) ** 3, rel=1e-6)

    def x_of(a, c):  # the root of x^3 + c x - a (a closed over, c given in args)
        return optimize.root(lambda x, c: x ** 3 + c * x - a, onp.zeros(1), args=(c,),
                             tol=1e-13).x[0]

    x = x_of(10.0, 1.0)
    assert x == pytest.approx(2.0, rel=1e-10)
    ga, gc = fgrad.grad(x_of, argnums=(0, 1))(10.0, 1.0)
    assert (ga, gc) == (pytest.approx(1 / (3 * x * x + 1), rel=1e-9),
                        pytest.approx(-x / (3 * x * x + 1), rel=1e-9))
    assert fgrad.jvp(lambda a: x_of(a, 1.0), (10.0,), (1.0,))[1] == pytest.approx(
        1 / (3 * x * x + 1), rel=1e-9)


def test_solutions_map_over_a_batch_of_problems():
    # (vmap refused them: the solver read the arguments' values, a whole batch there)
    def argmin(a, b):  # argmin_x (x - a)^2 + b x^2 = a / (1 + b)
        return optimize.minimize(lambda x, a, b: np.sum((x - a) ** 2 + b * x ** 2),
                                 onp.zeros(1), args=(a, b), method="BFGS", tol=1e-12).x[0]

    def closed_over(a):  # the same, b = 1/2, a closed over
        return optimize.minimize(lambda x: np.sum((x - a) ** 2 + 0.5 * x ** 2), onp.zeros(1),
                                 tol=1e-12).x[0]

    a, b = onp.array([2.0, 1.0, -0.5]), onp.array([0.5, 2.0, 1.0])
    for how in (fgrad.vmap, lambda f: fgrad.jit(fgrad.vmap(f))):
        onp.testing.assert_allclose(how(argmin)(a, b), a / (1 + b), rtol=1e-7)
        ga, gb = how(fgrad.grad(argmin, argnums=(0, 1)))(a, b)
        onp.testing.assert_allclose(ga, 1 / (1 + b), rtol=1e-7)
        onp.testing.assert_allclose(gb, -a / (1 + b) ** 2, rtol=1e-7)
        onp.testing.assert_allclose(how(closed_over)(a), a / 1.5, rtol=1e-7)
    onp.testing.assert_allclose(
        fgrad.grad(lambda a: np.sum(fgrad.vmap(argmin)(a, b)))(a), 1 / (1 + b), rtol=1e-7)
    res = fgrad.vmap(lambda a: tuple(optimize.minimize(
        lambda x, a: np.sum((x - a) ** 2), onp.zeros(2), args=(a,), tol=1e-12).values()))(
        onp.stack([a[:2], b[:2]]))
    assert len(res) == 2  # (x and fun: no per-example count or message)
    onp.testing.assert_allclose(res[0], onp.stack([a[:2], b[:2]]), rtol=1e-7)

    def x_of(a):  # the root of x^3 + x - a
        return optimize.root(lambda x, a: x ** 3 + x - a, onp.zeros(1), args=(a,),
                             tol=1e-13).x[0]

    xs = fgrad.vmap(x_of)(onp.array([10.0, 2.0]))
    onp.testing.assert_allclose(xs, [2.0, 1.0], rtol=1e-10)
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(x_of))(onp.array([10.0, 2.0])),
                                1 / (3 * xs ** 2 + 1), rtol=1e-9)


def test_root_is_differentiable_in_its_arguments_both_modes():
    def x_of(a):
        return optimize.root(lambda x, a: x ** 3 + x - a, onp.zeros(1), args=(a,),
                             tol=1e-13).x[0]

    x = x_of(10.0)
    assert x == pytest.approx(2.0, rel=1e-10)
    assert fgrad.grad(x_of)(10.0) == pytest.approx(1 / (3 * x * x + 1), rel=1e-9)
    assert fgrad.jvp(x_of, (10.0,), (1.0,))[1] == pytest.approx(1 / (3 * x * x + 1), rel=1e-9)


@pytest.mark.parametrize("method", ["brentq", "brenth", "ridder", "bisect", "toms748"])
def test_bracketing_roots_are_differentiable_in_args_and_closures(method):
    # (scipy's own on plain values; these raised NoDerivativeRuleError on traced ones)
    solve = getattr(optimize, method)
    assert solve(lambda x, a: x ** 3 + x - a, 0.0, 5.0, args=(10.0,)) == \
        getattr(so, method)(lambda x, a: x ** 3 + x - a, 0.0, 5.0, args=(10.0,))

    def x_of(a, b):  # the root of x^3 + b x - a: dx/da = 1 / (3 x^2 + b), dx/db = -x / (...)
        return solve(lambda x, b: x ** 3 + b * x - a, 0.0, 5.0, args=(b,), xtol=1e-14)

    x = x_of(10.0, 1.0)
    assert x == pytest.approx(2.0, rel=1e-12)
    d = 3 * x * x + 1
    for how in (fgrad.grad, lambda f, **k: fgrad.jit(fgrad.grad(f, **k))):
        assert how(x_of, argnums=(0, 1))(10.0, 1.0) == (pytest.approx(1 / d, rel=1e-10),
                                                        pytest.approx(-x / d, rel=1e-10))
    assert fgrad.jvp(lambda a: x_of(a, 1.0), (10.0,), (1.0,))[1] == pytest.approx(1 / d)
    # the second derivative: d2x/da2 = -6 x (dx/da)^3
    assert fgrad.grad(fgrad.grad(lambda a: x_of(a, 1.0)))(10.0) == \
        pytest.approx(-6 * x / d ** 3, rel=1e-8)
    got = fgrad.vmap(lambda a: x_of(a, 1.0))(onp.array([10.0, 2.0]))
    onp.testing.assert_allclose(got, [2.0, 1.0], rtol=1e-12)
    x, report = solve(lambda x, a: x ** 2 - a, 0.0, 5.0, args=(np.asarray(2.0) * 1.0,),
                      full_output=True)
    assert report.converged and report.root is x


@pytest.mark.parametrize("method", ["secant", "newton", "halley"])
def test_newton_is_scipys_and_differentiable_in_args_closures_and_elementwise(method):
    # (plain-only before: NoDerivativeRuleError on a traced argument)
    d1, d2 = {"secant": (None, None), "newton": (lambda x, b: 3 * x * x + b, None),
              "halley": (lambda x, b: 3 * x * x + b, lambda x, b: 6 * x)}[method]

    def x_of(a, b):  # the root of x^3 + b x - a: dx/da = 1 / (3 x^2 + b), dx/db = -x / (...)
        return optimize.newton(lambda x, b: x ** 3 + b * x - a, 1.0, d1, args=(b,),
                               fprime2=d2, tol=1e-14)

    want = so.newton(lambda x, b: x ** 3 + b * x - 10.0, 1.0, d1, args=(1.0,), fprime2=d2,
                     tol=1e-14)
    assert x_of(10.0, 1.0) == want and x_of(np.asarray(10.0) * 1.0, 1.0) == want
    x = want
    d = 3 * x * x + 1
    for how in (fgrad.grad, lambda f, **k: fgrad.jit(fgrad.grad(f, **k))):
        assert how(x_of, argnums=(0, 1))(10.0, 1.0) == (pytest.approx(1 / d, rel=1e-10),
                                                        pytest.approx(-x / d, rel=1e-10))
    assert fgrad.grad(fgrad.grad(lambda a: x_of(a, 1.0)))(10.0) == \
        pytest.approx(-6 * x / d ** 3, rel=1e-8)
    onp.testing.assert_allclose(fgrad.vmap(lambda a: x_of(a, 1.0))(onp.array([10.0, 2.0])),
                                [2.0, 1.0], rtol=1e-12)
    # an array x0 is solved elementwise: sqrt(a) with Jacobian diag(1 / (2 sqrt(a)))
    a = onp.array([2.0, 3.0, 5.0])

    def roots(a, **kw):
        return optimize.newton(lambda x, a: x * x - a, onp.ones(3),
                               d1 and (lambda x, a: 2 * x), args=(a,), tol=1e-14, **kw)

    onp.testing.assert_array_equal(roots(np.asarray(a) * 1.0), roots(a))
    onp.testing.assert_allclose(fgrad.jacobian(roots)(a), onp.diag(0.5 / onp.sqrt(a)),
                                rtol=1e-10)
    out = roots(a, full_output=True)  # (scipy's named tuple; its root the traced one)
    assert out.converged.all() and not out.zero_der.any()
    onp.testing.assert_allclose(fgrad.jacobian(lambda a: roots(a, full_output=True).root)(a),
                                onp.diag(0.5 / onp.sqrt(a)), rtol=1e-10)


def test_newton_with_a_derivative_closing_over_traced_values_uses_fgrads():
    # func's traced closure is lifted into the arguments scipy's iteration gets, as plain
    # values; fprime, closing over the same traced value, is replaced there by fgrad's
    # derivative of func (the same Newton iteration)
    def x_of(a):
        return optimize.newton(lambda x: x ** 3 + a * x - 10.0, 1.0,
                               fprime=lambda x: 3 * x * x + a, tol=1e-14, full_output=True)

    x, report = x_of(np.asarray(1.0) * 1.0)
    assert x == pytest.approx(2.0, rel=1e-14) and report.method == "newton"
    assert report.root is x
    assert fgrad.grad(lambda a: x_of(a)[0])(1.0) == pytest.approx(-2.0 / 13, rel=1e-10)


def test_fixed_point_is_differentiable_in_args_and_closures():
    # x = a / (1 + x): x = (sqrt(1 + 4 a) - 1) / 2, dx/da = 1 / sqrt(1 + 4 a)
    def p(a):
        return optimize.fixed_point(lambda x, a: a / (1 + x), 1.0, args=(a,), xtol=1e-14)

    assert p(np.asarray(2.0) * 1.0) == so.fixed_point(lambda x, a: a / (1 + x), 1.0,
                                                      args=(2.0,), xtol=1e-14)
    for how in (fgrad.grad, lambda f: fgrad.jit(fgrad.grad(f))):
        assert how(p)(2.0) == pytest.approx(1 / 3, rel=1e-10)
    assert fgrad.grad(fgrad.grad(p))(2.0) == pytest.approx(-2 / 27, rel=1e-8)
    a = onp.array([2.0, 6.0])
    onp.testing.assert_allclose(
        fgrad.jacobian(lambda a: optimize.fixed_point(lambda x: a / (1 + x), onp.ones(2),
                                                      xtol=1e-14))(a),
        onp.diag(1 / onp.sqrt(1 + 4 * a)), rtol=1e-10)
    onp.testing.assert_allclose(fgrad.vmap(p)(a), [1.0, 2.0], rtol=1e-12)


def test_root_scalar_minimize_scalar_and_least_squares_are_differentiable():
    def r(a):
        return optimize.root_scalar(lambda x: x ** 3 + x - a, bracket=(-5, 5), xtol=1e-14)

    res = r(10.0)
    assert res.converged and res.root == pytest.approx(2.0, rel=1e-12)
    assert fgrad.grad(lambda a: r(a).root)(10.0) == pytest.approx(1 / 13, rel=1e-10)
    # the minimizer of (z - a)^2 + b z^4: dz/da = 2 / (2 + 12 b z^2); the minimum's
    # derivative in b is z^4 (the envelope theorem)
    def m(a, b):
        return optimize.minimize_scalar(lambda z: (z - a) ** 2 + b * z ** 4, bounds=(-3, 3),
                                        method="bounded", options={"xatol": 1e-12})

    z = m(0.5, 0.3).x
    assert fgrad.grad(lambda a: m(a, 0.3).x)(0.5) == \
        pytest.approx(2 / (2 + 3.6 * z * z), rel=1e-7)
    assert fgrad.grad(lambda b: m(0.5, b).fun)(0.3) == pytest.approx(z ** 4, rel=1e-7)
    assert m(0.5, 0.3).x == so.minimize_scalar(lambda z: (z - 0.5) ** 2 + 0.3 * z ** 4,
                                               bounds=(-3, 3), method="bounded",
                                               options={"xatol": 1e-12}).x
    # a line through the origin fitted to a: p = (k . a) / (k . k); the cost's derivative
    # in a is the residual a - p k, negated
    k = onp.arange(1.0, 4.0)

    def fit(a):
        return optimize.least_squares(lambda p: p[0] * k - a, onp.zeros(1), xtol=1e-14,
                                      ftol=1e-14, gtol=1e-14)

    a = onp.array([1.0, 1.5, 4.0])
    p = k @ a / (k @ k)
    onp.testing.assert_allclose(fgrad.jacobian(lambda a: fit(a).x)(a), [k / (k @ k)],
                                rtol=1e-9)
    onp.testing.assert_allclose(fgrad.grad(lambda a: fit(a).cost)(a), a - p * k, rtol=1e-9)
    onp.testing.assert_allclose(fgrad.vmap(lambda a: fit(a).x)(onp.stack([a, 2 * a]))[:, 0],
                                [p, 2 * p], rtol=1e-8)  # (scipy's 2-point Jacobian)
    # a traced closure and traced kwargs= at once: the cost c^2 S / 2 has derivative c S in c
    def scaled(a, c):
        return optimize.least_squares(lambda p, scale: (p[0] * k - a) * scale, onp.zeros(1),
                                      kwargs={"scale": c}, xtol=1e-14, ftol=1e-14, gtol=1e-14)

    assert fgrad.grad(lambda c: scaled(a, c).cost)(2.0) == \
        pytest.approx(2.0 * onp.sum((a - p * k) ** 2), rel=1e-9)
    onp.testing.assert_allclose(fgrad.grad(lambda a: scaled(a, 2.0).x[0])(a), k / (k @ k),
                                rtol=1e-9)
    with pytest.raises(NotImplementedError, match="loss='soft_l1'"):
        fgrad.grad(lambda a: optimize.least_squares(lambda p: p[0] * k - a, onp.zeros(1),
                                                    loss="soft_l1").cost)(a)


def test_curve_fit_is_scipys_and_differentiable_in_the_data_against_weighted_least_squares():
    # a line fitted with weights W = 1 / sigma^2: popt = (X^T W X)^-1 X^T W y, so its
    # Jacobian in y is that matrix; pcov = (X^T W X)^-1 r^T W r / (m - 2), whose gradient in
    # y is (X^T W X)^-1 2 W r / (m - 2) (X^T W r = 0 at the fit)
    t = onp.linspace(0.0, 2.0, 7)
    y = 0.5 + 1.5 * t + 0.1 * onp.sin(5 * t)
    sig = 0.1 + 0.05 * t
    X, W = onp.stack([t, onp.ones_like(t)], 1), onp.diag(1 / sig ** 2)
    inv = onp.linalg.inv(X.T @ W @ X)

    def fit(y, sig=sig):
        return optimize.curve_fit(lambda t, a, b: a * t + b, t, y, sigma=sig)

    want = so.curve_fit(lambda t, a, b: a * t + b, t, y, sigma=sig)
    for got in (fit(np.asarray(y) * 1.0), fgrad.jit(fit)(y)):
        for g, w in zip(got, want):
            onp.testing.assert_array_equal(g, w)
    onp.testing.assert_allclose(fgrad.jacobian(lambda y: fit(y)[0])(y), inv @ X.T @ W,
                                rtol=1e-8, atol=1e-12)
    r = y - X @ (inv @ X.T @ W @ y)
    onp.testing.assert_allclose(fgrad.grad(lambda y: fit(y)[1][0, 0])(y),
                                inv[0, 0] * 2 * (W @ r) / (len(t) - 2), rtol=1e-7, atol=1e-12)
    batch = onp.stack([y, 2 * y])
    onp.testing.assert_allclose(fgrad.vmap(lambda y: fit(y)[0])(batch),
                                [want[0], 2 * want[0]], rtol=1e-8)  # (scipy's tolerance)
    # an exponential decay's rate in a closure: the amplitude fitted is
    # sum(y e) / sum(e^2) with e = exp(-k t), differentiated in k by fgrad itself
    def amplitude(k):
        return optimize.curve_fit(lambda t, a: a * np.exp(-k * t), t, y)[0][0]

    def closed_form(k):
        e = np.exp(-k * t)
        return np.sum(y * e) / np.sum(e * e)

    assert fgrad.grad(amplitude)(0.8) == pytest.approx(fgrad.grad(closed_form)(0.8), rel=1e-8)


def test_solvers_under_vmap_start_each_example_from_its_own():
    # a batched starting value (x0, a bracket's end, p0) raised ConcretizationError under vmap
    # (the solver read it before running once per example); the solution does not depend on
    # it (its derivative in it is 0), so it starts each example's solve. Kepler's equation
    # E - e sin E = M started at E = M: dE/dM = 1 / (1 - e cos E)
    M, e = onp.array([0.5, 1.3, 2.1]), 0.3

    def kepler(M):
        return optimize.newton(lambda E: E - e * np.sin(E) - M, M, tol=1e-14)

    E = fgrad.vmap(kepler)(M)
    onp.testing.assert_allclose(E - e * onp.sin(E), M, rtol=1e-14)
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(kepler))(M), 1 / (1 - e * onp.cos(E)),
                                rtol=1e-12)
    onp.testing.assert_array_equal(fgrad.jit(fgrad.vmap(kepler))(M), E)
    starts, ends = onp.array([0.1, 5.0]), onp.array([2.0, 5.0])
    for solve, over in (
            (lambda s: optimize.newton(lambda x: x * x - 2, s, tol=1e-14), starts),
            (lambda s: optimize.fixed_point(lambda x: 1 + 1 / (1 + x), s, xtol=1e-14), starts),
            (lambda s: optimize.root(lambda x: x * x - 2, s * np.ones(1), tol=1e-13).x[0],
             starts),
            (lambda s: optimize.minimize(lambda x: (x["a"] ** 2 - 2) ** 2, {"a": s},
                                         method="BFGS", tol=1e-13).x["a"], starts),
            (lambda s: optimize.least_squares(lambda x: x * x - 2, s * np.ones(1),
                                              xtol=1e-15).x[0], starts),
            (lambda b: optimize.brentq(lambda x: x * x - 2, 0.0, b, xtol=1e-14), ends),
            (lambda b: optimize.root_scalar(lambda x: x * x - 2, bracket=(0.0, b),
                                            xtol=1e-14).root, ends),
            (lambda b: optimize.minimize_scalar(lambda x: (x * x - 2) ** 2, bounds=(0.0, b),
                                                method="bounded",
                                                options={"xatol": 1e-12}).x, ends)):
        onp.testing.assert_allclose(fgrad.vmap(solve)(over), onp.sqrt(2.0), rtol=1e-7)
        assert fgrad.grad(solve)(over[1]) == 0.0
    # integer starts, batched or not, beside batched arguments
    onp.testing.assert_allclose(
        fgrad.vmap(lambda b: optimize.brentq(lambda x: x * x - 2, 0, b))(onp.array([2, 5])),
        onp.sqrt(2.0), rtol=1e-10)
    onp.testing.assert_allclose(
        fgrad.vmap(lambda a: optimize.minimize_scalar(lambda z: (z - a) ** 2, bounds=(-3, 3),
                                                      method="bounded").x)(starts),
        starts.clip(-3, 3), atol=1e-4)
    t = onp.linspace(0.0, 1.0, 5)
    onp.testing.assert_allclose(
        fgrad.vmap(lambda y, p: optimize.curve_fit(lambda t, a: a * t, t, y, p0=p)[0])(
            onp.stack([2 * t, 3 * t]), onp.array([[0.5], [3.0]])), [[2.0], [3.0]], rtol=1e-10)


def test_curve_fit_on_traced_data_runs_scipys_fit_once_per_data(monkeypatch):
    # (the solution and scipy's values of popt and pcov each ran the fit: 2 a gradient, 10
    # under vmap of 3 examples)
    calls = []
    scipys = so.curve_fit
    monkeypatch.setattr(so, "curve_fit", lambda *a, **k: calls.append(1) or scipys(*a, **k))
    t = onp.linspace(0.0, 2.0, 7)
    y = 0.5 + 1.5 * t + 0.1 * onp.sin(5 * t)

    def loss(y):
        popt, pcov = optimize.curve_fit(lambda t, a, b: a * t + b, t, y)
        return np.sum(popt) + np.sum(pcov)

    for f, y_in, want in ((fgrad.grad(loss), y, 1), (fgrad.vmap(loss), onp.stack([y, 2 * y,
                                                                               3 * y]), 3)):
        calls.clear()
        f(y_in)
        assert len(calls) == want


def test_a_solution_under_jit_is_the_solution_and_grad_of_jit_differentiates_it():
    # grad(jit(f)) raised EscapedTracerError: the solver's steps (the user's function on plain
    # values, read by scipy) were recorded in the staged graph, a thousand nodes and guards
    def argmin(a, b):
        return optimize.minimize(lambda x, a, b: np.sum((x - a) ** 2 + b * x ** 2),
                                 onp.zeros(1), args=(a, b), method="BFGS", tol=1e-12).x[0]

    def root(a):
        return optimize.root(lambda x, a: x ** 3 + x - a, onp.zeros(1), args=(a,),
                             tol=1e-13).x[0]

    for a, b in ((2.0, 0.5), (1.0, 2.0)):  # (the second, other values: traced anew)
        assert fgrad.jit(argmin)(a, b) == pytest.approx(a / (1 + b), rel=1e-7)
        for how in (fgrad.grad, lambda f, **k: fgrad.jit(fgrad.grad(f, **k))):
            ga, gb = how(fgrad.jit(argmin), argnums=(0, 1))(a, b)
            assert (ga, gb) == (pytest.approx(1 / (1 + b), rel=1e-7),
                                pytest.approx(-a / (1 + b) ** 2, rel=1e-7))
    for a in (10.0, 2.0):
        x = root(a)
        assert fgrad.grad(fgrad.jit(root))(a) == pytest.approx(1 / (3 * x * x + 1), rel=1e-9)
    # (the graph jit runs: the minimum computed again at the solution, unused, is dropped)
    graph = optimize_graph(fgrad.make_graph(argmin)(2.0, 0.5))
    assert [n.prim.name for n in graph.nodes][0] == "scipy.optimize.implicit_solution"
    assert len(graph.nodes) < 5, graph


# --- arguments without a derivative, refused by name ------------------------------------------

REFUSED = [
    (lambda v: special.iv(v, 1.0), "scipy.special.iv", "'v'"),
    (lambda x: special.zeta(x), "scipy.special.zeta", "'x'"),
    (lambda a: stats.skewnorm.cdf(0.3, a), "scipy.stats.skewnorm.cdf", "'a'"),
    (lambda a: stats.skewnorm.ppf(0.3, a), "scipy.stats.skewnorm.ppf", "'a'"),
    (lambda n: stats.binom.logpmf(2, n, 0.3), "scipy.stats.binom.logpmf", "'n'"),
    (lambda k: stats.poisson.logpmf(k, 2.0), "scipy.stats.poisson.logpmf", "'k'"),
    (lambda n: stats.nbinom.cdf(2, n, 0.3), "scipy.stats.nbinom.cdf", "'n'"),
    (lambda a: special.hyp1f1(a, 2.0, 0.3), "scipy.special.hyp1f1", "'a'"),
    (lambda x: integrate.simpson(onp.ones(3), x=x * onp.arange(3.0)),
     "scipy.integrate.simpson", "'x'"),
]


@pytest.mark.parametrize("f, name, arg", REFUSED)
def test_arguments_without_a_derivative_are_refused_by_name(f, name, arg):
    with pytest.raises(NoDerivativeRuleError, match=f"fgrad.{name} has no derivative in its "
                                                    f"argument {arg}"):
        fgrad.grad(f)(3.0)


COMPOSED = {
    "grad(jit)": lambda f: fgrad.grad(fgrad.jit(f)),
    "jacfwd(jit)": lambda f: fgrad.jacfwd(fgrad.jit(f)),
    "grad(checkpoint)": lambda f: fgrad.grad(fgrad.checkpoint(f)),
    "grad(vmap)": lambda f: fgrad.grad(lambda v: np.sum(fgrad.vmap(f)(v * onp.ones(2)))),
    "jvp(vmap)": lambda f: lambda v: fgrad.jvp(fgrad.vmap(f), (v * onp.ones(2),),
                                               (onp.ones(2),)),
    "jet(jit)": lambda f: lambda v: fgrad.jet(fgrad.jit(f), (v,), ([1.0],)),
}


@pytest.mark.parametrize("how", COMPOSED)
@pytest.mark.parametrize("f, name, arg", REFUSED[:-2])  # (hyp1f1's a, simpson's x: fixed)
def test_arguments_without_a_derivative_are_refused_through_jit_vmap_and_checkpoint(
        f, name, arg, how):
    # staged or batched, such an argument reaches the primitive as an operand, and only the
    # differentiating trace sees that it carries a derivative: a zero there (gammainc's a
    # once, zeta's x, iv's v under grad(jit) or grad(vmap)) was a silently wrong derivative
    if how == "jet(jit)":  # (jet expands ppf as the inverse of cdf, which refuses)
        name = name.replace(".ppf", ".cdf")
    with pytest.raises(NoDerivativeRuleError, match=f"fgrad.{name} has no derivative in its "
                                                    f"argument {arg}"):
        COMPOSED[how](f)(3.0)


def test_gammainc_in_a_against_its_closed_form_at_a_1_and_scipys_differences():
    # Q(1, x) = e^-x, and dQ/da at a = 1 is e^-x log x + E1(x) + euler_gamma e^-x
    d_p, d_q = (fgrad.grad(f, argnums=0) for f in (special.gammainc, special.gammaincc))
    for x in (0.3, 1.5, 2.0, 7.0, 40.0):  # (both sides of x = a + 1: the series, the fraction)
        want = onp.exp(-x) * (onp.log(x) + onp.euler_gamma) + sc.exp1(x)
        assert d_q(1.0, x) == pytest.approx(want, rel=1e-12)
        assert d_p(1.0, x) == pytest.approx(-want, rel=1e-12)
    # elsewhere scipy's central differences, in a and (closed form) in x; and the second
    # derivative in a those of the first
    d2 = fgrad.grad(d_p, argnums=0)
    for a, x in [(0.05, 0.01), (0.5, 3.0), (4.0, 2.5), (4.0, 5.5), (30.0, 25.0), (30.0, 45.0),
                 (150.0, 150.0)]:
        h = 1e-5 * a
        fd = (sc.gammainc(a + h, x) - sc.gammainc(a - h, x)) / (2 * h)
        assert d_p(a, x) == pytest.approx(fd, rel=1e-6)
        assert d2(a, x) == pytest.approx((d_p(a + h, x) - d_p(a - h, x)) / (2 * h), rel=1e-5)
    grads = fgrad.grad(lambda a, x: special.gammainc(a, x), argnums=(0, 1))(2.0, 1.5)
    assert grads[1] == pytest.approx(st.gamma.pdf(1.5, 2.0), rel=1e-13)
    # the edges: P is 0 at x = 0 and 1 at x = inf for every a; scipy's nan for a <= 0; and
    # nan where the fixed lengths of the series and the fraction fall short (a = 1000, x
    # near a), not a wrong number
    assert d_p(2.0, 0.0) == 0.0 and d_p(2.0, onp.inf) == 0.0 and onp.isnan(d_p(-1.0, 2.0))
    assert onp.isnan(d_p(1000.0, 1000.0)) and onp.isfinite(d_p(1000.0, 1200.0))
    # batched and staged, forward and reverse
    a, x = onp.array([0.5, 2.0, 9.0]), onp.array([3.0, 0.7, 9.5])
    each = [d_p(ai, xi) for ai, xi in zip(a, x)]
    onp.testing.assert_allclose(fgrad.vmap(d_p)(a, x), each, rtol=1e-13)
    onp.testing.assert_allclose(fgrad.jit(fgrad.vmap(d_p))(a, x), each, rtol=1e-13)
    onp.testing.assert_allclose(onp.diag(fgrad.jacfwd(special.gammainc)(a, x)), each,
                                rtol=1e-13)


@pytest.mark.parametrize("name, shape, x, cdf", [
    ("gamma", 2.5, 1.7, lambda a, x: sc.gammainc(a, x)),
    ("chi2", 3.0, 2.2, lambda df, x: sc.chdtr(df, x)),
    ("chi", 3.0, 1.2, lambda df, x: sc.gammainc(df / 2, x * x / 2)),
    ("invgamma", 2.0, 0.8, lambda a, x: sc.gammaincc(a, 1 / x)),
    ("weibull_min", 1.7, 0.9, lambda c, x: -onp.expm1(-x ** c)),
    ("pareto", 2.5, 1.6, lambda b, x: 1 - x ** -b),
    ("lomax", 1.5, 0.8, lambda c, x: 1 - (1 + x) ** -c),
    ("lognorm", 0.7, 1.4, lambda s, x: sc.ndtr(onp.log(x) / s)),
    ("t", 3.5, 0.8, lambda df, x: sc.stdtr(df, x)),
])
def test_cdf_family_in_the_shape_against_central_differences(name, shape, x, cdf):
    dist = getattr(stats, name)
    h = 1e-6 * shape
    dc = (cdf(shape + h, x) - cdf(shape - h, x)) / (2 * h)
    c = cdf(shape, x)
    loc, scale = 0.1, 1.5
    z = (x - loc) / scale
    dc_z = (cdf(shape + h, z) - cdf(shape - h, z)) / (2 * h)
    wants = {"cdf": dc, "sf": -dc, "logcdf": dc / c, "logsf": -dc / (1 - c)}
    for method, want in wants.items():
        got = fgrad.grad(lambda s: getattr(dist, method)(x, s), argnums=0)(shape)
        assert got == pytest.approx(want, rel=1e-6), method
    # with loc and scale: the standard cdf's at z; ppf's, minus that over the density
    got = fgrad.grad(lambda s: dist.cdf(x, s, loc, scale))(shape)
    assert got == pytest.approx(dc_z, rel=1e-6)
    q = getattr(st, name).cdf(x, shape, loc, scale)
    got = fgrad.grad(lambda s: dist.ppf(q, s, loc, scale))(shape)
    assert got == pytest.approx(-scale * dc_z / (scale * getattr(st, name).pdf(x, shape, loc,
                                                                              scale)), rel=1e-6)


def test_hurwitz_zeta_in_its_exponent_by_identities_and_differences():
    d_x = fgrad.grad(special.zeta, argnums=0)
    # zeta'(2) (the Riemann function's, q = 1), a known constant
    assert d_x(2.0, 1.0) == pytest.approx(-0.93754825431584375370, rel=1e-14)
    for x, q in [(1.05, 0.02), (1.5, 0.3), (3.7, 2.0), (12.0, 0.7), (2.5, 300.0)]:
        # zeta(x, q) - zeta(x, q + 1) = q^-x, and zeta(x, 1/2) = (2^x - 1) zeta(x, 1)
        assert d_x(x, q) - d_x(x, q + 1) == pytest.approx(-onp.log(q) * q ** -x, rel=1e-12)
        h = 1e-6 * x
        fd = (sc.zeta(x + h, q) - sc.zeta(x - h, q)) / (2 * h)
        assert d_x(x, q) == pytest.approx(fd, rel=1e-6)
    x = 2.7
    want = 2 ** x * onp.log(2) * sc.zeta(x, 1.0) + (2 ** x - 1) * d_x(x, 1.0)
    assert d_x(x, 0.5) == pytest.approx(want, rel=1e-13)
    # second derivatives, both orders; d/dq = -x zeta(x + 1, q), so d2/dq dx = -zeta(x + 1, q)
    # - x d/dx zeta(x + 1, q)
    hess = fgrad.hessian(special.zeta, argnums=(0, 1))(2.0, 1.5)
    want = -sc.zeta(3.0, 1.5) - 2.0 * d_x(3.0, 1.5)
    assert hess[0][1] == pytest.approx(want, rel=1e-12)
    assert hess[1][0] == pytest.approx(want, rel=1e-12)
    # scipy's nan for x < 1 and q <= 0; -inf at the pole x = 1
    assert onp.isnan(d_x(0.5, 1.0)) and onp.isnan(d_x(2.0, -1.0)) and d_x(1.0, 1.0) == -onp.inf
    # a power law's normaliser: the maximum-likelihood exponent of counts k >= 1 solves
    # sum log k / n = -zeta'(a) / zeta(a); here its gradient at that exponent is zero
    a = 2.3
    mean_log = -d_x(a, 1.0) / sc.zeta(a, 1.0)
    loglik = lambda a: -a * mean_log - np.log(special.zeta(a, 1.0))  # noqa: E731
    assert abs(fgrad.grad(loglik)(a)) < 1e-12
    xs, qs = onp.array([1.5, 2.0, 6.0]), onp.array([0.5, 1.0, 3.0])
    each = [d_x(a, b) for a, b in zip(xs, qs)]
    onp.testing.assert_allclose(fgrad.vmap(d_x)(xs, qs), each, rtol=1e-14)
    onp.testing.assert_allclose(fgrad.jit(fgrad.vmap(d_x))(xs, qs), each, rtol=1e-14)


def test_zipf_in_its_exponent_against_scipys_differences_and_its_maximum():
    h, a = 1e-6, 2.3
    for method in ("logpmf", "pmf", "cdf", "sf", "logcdf", "logsf"):
        ks = onp.array([1, 3, 7])
        got = fgrad.jacfwd(lambda a: getattr(stats.zipf, method)(ks, a))(a)
        theirs = getattr(st.zipf, method)
        fd = (theirs(ks, a + h) - theirs(ks, a - h)) / (2 * h)
        onp.testing.assert_allclose(got, fd, rtol=1e-7, err_msg=method)
    # below the support the cdf is 0 for every a
    assert fgrad.grad(lambda a: stats.zipf.cdf(0, a))(a) == 0.0
    # the mean log-likelihood's slope is -zeta'(a) / zeta(a) less the counts' mean log: zero
    # (the maximum) where they are equal
    d_x = fgrad.grad(special.zeta, argnums=0)
    ks = onp.array([1, 1, 2, 5])
    slope = fgrad.grad(lambda a: np.mean(stats.zipf.logpmf(ks, a)))(a)
    assert slope == pytest.approx(-d_x(a, 1.0) / sc.zeta(a, 1.0) - onp.mean(onp.log(ks)),
                                  rel=1e-13)


def test_students_t_cdf_and_its_inverse_in_df_smooth_through_t_zero():
    h = 1e-6
    for df, t in [(3.0, 0.7), (3.0, -1.3), (1.5, 2.0), (30.0, 0.4), (3.0, 8.0), (0.7, -0.2)]:
        fd = (sc.stdtr(df + h, t) - sc.stdtr(df - h, t)) / (2 * h)
        assert fgrad.grad(special.stdtr)(df, t) == pytest.approx(fd, rel=1e-6)
    # the inverse: minus the cdf's derivative in df over the density, at t = stdtrit(df, p)
    # (scipy's stdtrit is an iteration: its own differences are good to 1e-5 only)
    p, t = 0.8, sc.stdtrit(3.0, 0.8)
    fd = (sc.stdtr(3.0 + h, t) - sc.stdtr(3.0 - h, t)) / (2 * h)
    assert fgrad.grad(special.stdtrit)(3.0, p) == pytest.approx(-fd / st.t.pdf(t, 3.0),
                                                                rel=1e-7)
    # at t = 0 the cdf is 1/2 for every df: the derivative in df is 0, and the mixed second
    # derivative is that of the density at 0, Gamma((df+1)/2) / (Gamma(df/2) sqrt(df pi)),
    # in df (through sign(t) it was wrong there); both orders of differentiation agree
    df = 3.0
    dens = lambda d: sc.gamma((d + 1) / 2) / (sc.gamma(d / 2) * onp.sqrt(d * onp.pi))  # noqa
    want = dens(df) * 0.5 * (sc.digamma((df + 1) / 2) - sc.digamma(df / 2) - 1 / df)
    assert fgrad.grad(special.stdtr)(df, 0.0) == 0.0
    hess = fgrad.hessian(special.stdtr, argnums=(0, 1))(df, 0.0)
    assert hess[0][1] == pytest.approx(want, rel=1e-12)
    assert hess[1][0] == pytest.approx(want, rel=1e-12)
    # 0 at t = +-inf, scipy's nan for df <= 0; batched and staged as each entry alone
    d_df = fgrad.grad(special.stdtr)
    assert d_df(3.0, onp.inf) == 0.0 and d_df(3.0, -onp.inf) == 0.0
    assert onp.isnan(d_df(-1.0, 0.5))
    dfs, ts = onp.array([1.5, 3.0, 12.0]), onp.array([-0.5, 0.0, 2.5])
    each = [d_df(d, x) for d, x in zip(dfs, ts)]
    onp.testing.assert_allclose(fgrad.vmap(d_df)(dfs, ts), each, rtol=1e-13)
    onp.testing.assert_allclose(fgrad.jit(fgrad.vmap(d_df))(dfs, ts), each, rtol=1e-13)


def test_betainc_in_a_and_b_against_closed_forms_and_scipys_differences():
    # I_x(a, 1) = x^a and I_x(1, b) = 1 - (1 - x)^b, on both sides of the mean (the
    # continued fraction of I_x(a, b) or of I_(1-x)(b, a))
    for x in (0.1, 0.5, 0.9):
        for f, sign in [(special.betainc, 1.0), (special.betaincc, -1.0)]:
            assert fgrad.grad(f, argnums=0)(2.5, 1.0, x) == pytest.approx(
                sign * x ** 2.5 * onp.log(x), rel=1e-12)
            assert fgrad.grad(f, argnums=1)(1.0, 2.5, x) == pytest.approx(
                -sign * (1 - x) ** 2.5 * onp.log1p(-x), rel=1e-12)
    h = 1e-6
    for a, b, x in [(0.3, 0.6, 0.2), (2.0, 5.0, 0.3), (2.0, 5.0, 0.6), (40.0, 30.0, 0.55)]:
        for i in range(2):
            up, down = [a, b, x], [a, b, x]
            up[i] += h * up[i]
            down[i] -= h * down[i]
            fd = (sc.betainc(*up) - sc.betainc(*down)) / (2 * h * [a, b][i])
            assert fgrad.grad(special.betainc, argnums=i)(a, b, x) == pytest.approx(fd, rel=1e-6)
    # edges: 0 at x = 0 and 1; nan where the fraction's fixed depth falls short
    d_a = fgrad.grad(special.betainc, argnums=0)
    assert d_a(2.0, 3.0, 0.0) == 0.0 and d_a(2.0, 3.0, 1.0) == 0.0
    assert onp.isnan(d_a(1000.0, 1000.0, 0.5)) and onp.isfinite(d_a(1000.0, 1000.0, 0.4))
    # beta's and F's cdf in both shapes: scipy's differences
    for dist, theirs, shapes, x in [(stats.beta, st.beta, (2.0, 3.5), 0.3),
                                    (stats.f, st.f, (4.0, 7.0), 1.3)]:
        for i in range(2):
            up, down = list(shapes), list(shapes)
            up[i] += h
            down[i] -= h
            fd = (theirs.cdf(x, *up) - theirs.cdf(x, *down)) / (2 * h)
            got = fgrad.grad(lambda *s: dist.cdf(x, *s), argnums=i)(*shapes)
            assert got == pytest.approx(fd, rel=1e-6)


def test_parameter_derivatives_on_many_entries_run_in_chunks_with_the_same_values():
    # (more entries than _CHUNK: the rule runs on pieces, joined; each entry as alone)
    rng = onp.random.default_rng(0)
    x, a = rng.uniform(0.1, 10, 9000), rng.uniform(0.5, 5, 9000)
    for many, one in [(lambda a: special.gammainc(a, x), special.gammainc),
                      (lambda a: special.betainc(a, 2.0, x / 11),
                       lambda a, x: special.betainc(a, 2.0, x / 11))]:
        g = fgrad.grad(lambda a: np.sum(many(a)))(a)
        picked = range(0, 9000, 1499)
        onp.testing.assert_allclose(g[list(picked)], [fgrad.grad(one)(a[k], x[k]) for k in picked],
                                    rtol=1e-13)
        onp.testing.assert_allclose(fgrad.jit(fgrad.grad(lambda a: np.sum(many(a))))(a), g,
                                    rtol=1e-13)


def test_f_and_chi_square_distribution_functions_in_every_argument():
    # fdtr and fdtrc against scipy's central differences in dfn, dfd and x; chdtri(2, p) is
    # -2 log p (chdtrc(2, x) = e^(-x/2)), and in v scipy's differences
    h, args = 1e-6, [4.0, 7.0, 1.3]
    for i in range(3):
        up, down = list(args), list(args)
        up[i] += h
        down[i] -= h
        for theirs, ours in [(sc.fdtr, special.fdtr), (sc.fdtrc, special.fdtrc)]:
            fd = (theirs(*up) - theirs(*down)) / (2 * h)
            assert fgrad.grad(ours, argnums=i)(*args) == pytest.approx(fd, rel=1e-7)
    assert fgrad.grad(special.chdtri, argnums=1)(2.0, 0.3) == pytest.approx(-2 / 0.3, rel=1e-12)
    fd = (sc.chdtri(3.0 + h, 0.3) - sc.chdtri(3.0 - h, 0.3)) / (2 * h)
    assert fgrad.grad(special.chdtri, argnums=0)(3.0, 0.3) == pytest.approx(fd, rel=1e-7)


def test_incomplete_gamma_and_beta_inverses_against_closed_forms():
    d = lambda f, i: fgrad.grad(f, argnums=i)  # noqa: E731
    y = 0.3
    # gammaincinv(1, y) = -log(1 - y); at a = 1, dx/da = -(dP/da) / density = (e^-x log x +
    # E1(x) + euler_gamma e^-x) e^x
    x = -onp.log1p(-y)
    assert d(special.gammaincinv, 1)(1.0, y) == pytest.approx(1 / (1 - y), rel=1e-12)
    assert d(special.gammainccinv, 1)(1.0, 1 - y) == pytest.approx(-1 / (1 - y), rel=1e-12)
    want = onp.log(x) + onp.euler_gamma + sc.exp1(x) * onp.exp(x)
    assert d(special.gammaincinv, 0)(1.0, y) == pytest.approx(want, rel=1e-12)
    assert d(special.gammainccinv, 0)(1.0, 1 - y) == pytest.approx(want, rel=1e-12)
    # betaincinv(a, 1, y) = y^(1/a), betaincinv(1, b, y) = 1 - (1 - y)^(1/b)
    a = b = 2.5
    assert d(special.betaincinv, 0)(a, 1.0, y) == pytest.approx(
        -y ** (1 / a) * onp.log(y) / a ** 2, rel=1e-12)
    assert d(special.betaincinv, 2)(a, 1.0, y) == pytest.approx(y ** (1 / a - 1) / a, rel=1e-12)
    assert d(special.betaincinv, 1)(1.0, b, y) == pytest.approx(
        (1 - y) ** (1 / b) * onp.log1p(-y) / b ** 2, rel=1e-12)
    assert d(special.betainccinv, 1)(1.0, b, 1 - y) == pytest.approx(
        (1 - y) ** (1 / b) * onp.log1p(-y) / b ** 2, rel=1e-12)


def test_binomial_and_gamma_distribution_functions_against_closed_forms():
    d = lambda f, i: fgrad.grad(f, argnums=i)  # noqa: E731
    p = 0.3
    # d/dp P(X <= k), X ~ binomial(n, p), is -n times the pmf of binomial(n - 1, p) at k
    assert d(special.bdtr, 2)(2, 5, p) == pytest.approx(-5 * st.binom.pmf(2, 4, p),
                                                            rel=1e-12)
    assert d(special.bdtrc, 2)(2, 5, p) == pytest.approx(5 * st.binom.pmf(2, 4, p),
                                                             rel=1e-12)
    assert d(special.bdtr, 2)(5, 5, p) == 0.0  # (1 for every p)
    h = 1e-6
    for f, ours in [(sc.nbdtr, special.nbdtr), (sc.nbdtrc, special.nbdtrc)]:
        fd = (f(2, 3, p + h) - f(2, 3, p - h)) / (2 * h)
        assert d(ours, 2)(2, 3, p) == pytest.approx(fd, rel=1e-7)
    # gdtr(a, b, x) = gammainc(b, a x): in the rate, the shape and the point
    for i in range(3):
        args = [1.5, 2.5, 1.2]
        up, down = list(args), list(args)
        up[i] += h
        down[i] -= h
        for f, ours in [(sc.gdtr, special.gdtr), (sc.gdtrc, special.gdtrc)]:
            fd = (f(*up) - f(*down)) / (2 * h)
            assert d(ours, i)(*args) == pytest.approx(fd, rel=1e-7)


def test_riemann_zeta_staged_or_batched_is_computed():
    # (it raised "'x' is being differentiated" under jit and vmap, where nothing was)
    x = onp.array([3.0, -4.5, 0.5])
    onp.testing.assert_array_equal(fgrad.jit(special.zeta)(x), sc.zeta(x))
    onp.testing.assert_array_equal(fgrad.vmap(special.zeta)(x), sc.zeta(x))


def test_unsupported_options_on_traced_values_say_so():
    with pytest.raises(NotImplementedError, match="assume_a"):
        fgrad.grad(lambda a: np.sum(linalg.solve(a, onp.ones(3), assume_a="pos")))(SPD)
    with pytest.raises(NotImplementedError, match="boundary='fill'"):
        fgrad.grad(lambda a: np.sum(signal.convolve2d(a, a, boundary="wrap")))(M)
    with pytest.raises(NotImplementedError, match="axes="):
        fgrad.grad(lambda a: np.sum(signal.fftconvolve(a, a, axes=0)))(M)
    with pytest.raises(NotImplementedError, match="full_output="):
        fgrad.grad(lambda y: np.sum(integrate.odeint(_decay, y, onp.array([0.0, 1.0]),
                                                     args=(1.0,), full_output=1)[0]))(X[:1])


# --- scipy's own functions handed a traced value -------------------------------------------------

def test_a_scipy_ufunc_on_a_traced_value_names_fgrads_version():
    with pytest.raises(ConcretizationError, match=r"Use fgrad\.scipy\.special\.expit "):
        fgrad.grad(lambda x: sc.expit(x))(0.5)


def test_a_scipy_function_on_a_traced_value_names_fgrads_version():
    with pytest.raises(ConcretizationError, match=r"Use fgrad\.scipy\.linalg\.inv "):
        fgrad.grad(lambda a: np.sum(sl.inv(a)))(SPD)
    with pytest.raises(ConcretizationError, match=r"Use fgrad\.scipy\.stats's version"):
        fgrad.grad(lambda x: np.sum(st.norm.logpdf(x)))(X)


def test_a_scipy_function_without_a_rule_says_how_to_add_one():
    with pytest.raises(NoDerivativeRuleError,
                       match=r"fgrad\.primitive\(scipy\.special\.kolmogorov\)"):
        fgrad.grad(lambda x: sc.kolmogorov(x))(0.5)
    with pytest.raises(NoDerivativeRuleError, match=r"scipy\.linalg\.schur was called"):
        fgrad.grad(lambda a: np.sum(sl.schur(a)[0]))(M)


def test_every_suggested_fgrad_scipy_name_exists():
    import re
    for name in dir(sc):
        fn = getattr(sc, name)
        if not isinstance(fn, onp.ufunc) or fn.nin != 1:
            continue
        try:
            fgrad.grad(lambda x: fn(x))(0.5)
        except (ConcretizationError, NoDerivativeRuleError) as e:
            for module, attr in re.findall(r"Use fgrad\.(scipy\.\w+)\.(\w+)", str(e)):
                assert callable(getattr(sys.modules["fgrad." + module], attr)), (name, str(e))
        except Exception:  # a scipy ufunc with no float loop: not fgrad's message to judge
            pass


def test_autograds_special_names_betainc_gammasgn_jn_yn():
    # (issue 32, item 4: names autograd's scipy.special has)
    sp = special
    x = onp.array([0.2, 0.5, 0.8])
    assert onp.array_equal(sp.betainc(1.5, 2.5, x), sc.betainc(1.5, 2.5, x))
    density = x ** 0.5 * (1 - x) ** 1.5 / sc.beta(1.5, 2.5)
    onp.testing.assert_allclose(fgrad.grad(lambda v: np.sum(sp.betainc(1.5, 2.5, v)))(x),
                                density, rtol=1e-12)
    h = 1e-6  # (and in b: scipy's central differences)
    assert fgrad.grad(lambda b: sp.betainc(1.5, b, 0.3))(2.5) == pytest.approx(
        (sc.betainc(1.5, 2.5 + h, 0.3) - sc.betainc(1.5, 2.5 - h, 0.3)) / (2 * h), rel=1e-7)
    assert sp.jn is sp.jv and sp.yn(2, 1.5) == sc.yn(2, 1.5)
    onp.testing.assert_allclose(fgrad.grad(lambda v: sp.yn(1, v))(1.5),
                                0.5 * (sc.yv(0, 1.5) - sc.yv(2, 1.5)), rtol=1e-12)
    assert sp.gammasgn(-1.5) == sc.gammasgn(-1.5) == 1.0
    assert fgrad.grad(lambda v: sp.gammasgn(v) * v)(-2.5) == sc.gammasgn(-2.5)


def test_odeint_takes_nested_args_of_different_shapes():
    # (issue 32, item 6: autograd's ode_net example passes a list of (W, b) pairs)
    rng = onp.random.default_rng(0)
    params = [(0.3 * rng.standard_normal((2, 4)), 0.1 * rng.standard_normal(4)),
              (0.3 * rng.standard_normal((4, 2)), 0.1 * rng.standard_normal(2))]

    def net(y, t, params):
        (W1, b1), (W2, b2) = params
        return np.tanh(y @ W1 + b1) @ W2 + b2

    y0, t = onp.array([1.0, -0.5]), onp.linspace(0, 1.0, 5)

    def loss(params):
        return np.sum(integrate.odeint(net, y0, t, args=(params,), rtol=1e-11, atol=1e-11) ** 2)

    plain = si.odeint(lambda y, t: net(y, t, params), y0, t, rtol=1e-11, atol=1e-11)
    onp.testing.assert_allclose(integrate.odeint(net, y0, t, args=(params,), rtol=1e-11,
                                                 atol=1e-11), plain, rtol=1e-9)
    g = fgrad.grad(loss)(params)
    assert [tuple(a.shape for a in pair) for pair in g] == [((2, 4), (4,)), ((4, 2), (2,))]
    direction = [(onp.ones((2, 4)), onp.zeros(4)), (onp.zeros((4, 2)), onp.ones(2))]
    along = sum(onp.sum(a * d) for pair, dpair in zip(g, direction) for a, d in zip(pair, dpair))
    eps = 1e-5
    step = lambda s: [(W + s * dW, b + s * db) for (W, b), (dW, db) in zip(params, direction)]
    assert along == pytest.approx((loss(step(eps)) - loss(step(-eps))) / (2 * eps), rel=1e-5)
    assert fgrad.jvp(loss, (params,), (direction,))[1] == pytest.approx(along, rel=1e-6)


def test_gaussian_kde_in_its_points_dataset_and_weights():
    # scipy's values; the score in the points, and the derivatives in the dataset and the
    # weights (through the bandwidth's effective count and the covariance), against scipy's
    # own finite differences, for each bandwidth rule
    rng = onp.random.default_rng(5)
    D, W, P = rng.standard_normal((2, 12)), rng.uniform(0.5, 2.0, 12), rng.standard_normal((2, 3))

    for bw in (None, "silverman", 0.4, lambda kde: 0.8 * kde.scotts_factor()):
        theirs = lambda d, w, p: onp.sum(st.gaussian_kde(d, bw, w).logpdf(p))
        ours = lambda d, w, p: np.sum(stats.gaussian_kde(d, bw, w).logpdf(p))
        onp.testing.assert_array_equal(stats.gaussian_kde(D, bw, W).logpdf(P),
                                       st.gaussian_kde(D, bw, W).logpdf(P))
        got = fgrad.grad(ours, argnums=(0, 1, 2))(D, W, P)
        for i, want in enumerate([central_gradient(lambda d: theirs(d, W, P), D),
                                  central_gradient(lambda w: theirs(D, w, P), W),
                                  central_gradient(lambda p: theirs(D, W, p), P)]):
            onp.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-8)
    kde = stats.gaussian_kde(D[0])  # (1-d: points as a vector)
    pdf = lambda x: np.sum(kde.pdf(x))
    x = onp.array([0.1, -0.4])
    onp.testing.assert_array_equal(fgrad.jit(fgrad.grad(pdf))(x), fgrad.grad(pdf)(x))
    onp.testing.assert_array_equal(fgrad.vmap(kde)(x[:, None]), kde(x)[:, None])
    assert kde.integrate_box_1d(0.0, 1.0) == st.gaussian_kde(D[0]).integrate_box_1d(0.0, 1.0)
    with pytest.raises(NoDerivativeRuleError, match="gaussian_kde.resample: fgrad "
                       "differentiates logpdf, pdf and evaluate"):
        fgrad.grad(lambda d: np.sum(stats.gaussian_kde(d).resample(2, seed=0)))(D[0])


@pytest.mark.parametrize("name, call", [
    ("bdtr", lambda p, out: special.bdtr(2, 5, p, out=out)),
    ("erf", lambda p, out: special.erf(p, out=out))])
def test_out_into_a_plain_array_is_refused_by_scipys_name(name, call):
    # (the messages said fgrad.numpy.scipy.special.<name>, and for a while fgrad.numpy.bdtr)
    with pytest.raises(TracerMutationError, match=rf"^fgrad\.scipy\.special\.{name}\(\.\.\., out="):
        fgrad.grad(lambda p: np.sum(call(p, onp.zeros(2))))(onp.array([0.2, 0.5]))
