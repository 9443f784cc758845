"""fgrad.scipy.stats: scipy.stats' distributions with derivatives in the point and parameters.

``fgrad.scipy.stats.norm.logpdf(x, loc, scale)`` is scipy's call on plain values; traced, each
method is a primitive whose implementation is scipy's method and whose rules come from one
description per distribution:

* a continuous distribution is a location-scale family over a standard density with shape
  parameters ``s``. With ``z = (x - loc) / scale`` and ``l(z; s)`` the standard log-density,
  it gives the score ``dl/dz`` and ``dl/ds_j``; every method's derivatives follow from these,
  the standard density ``exp(l)`` and the method's own value (``cdf' = pdf``,
  ``logcdf' = pdf / cdf``, ``ppf' = 1 / pdf(ppf)``, and ``d/dscale = -z d/dx``);
* a discrete distribution gives its log-pmf's derivatives in its continuous parameters, and
  its cdf's where they have a closed form; the point ``k``, ``loc`` and integer parameters
  (``binom``'s ``n``) are static.

The ``cdf`` family (``cdf``, ``sf``, their logs, ``ppf``) is differentiable in the shape
parameters where the standard cdf's derivative in them is written (``cdf_shapes``): closed
forms for ``weibull_min``, ``pareto``, ``lomax``, ``lognorm``, ``gompertz``, ``fisk``,
``genpareto`` and ``johnsonsu``, the incomplete gamma function's derivative in ``a``
(``special._gammainc_d_a``) for ``gamma``, ``chi2``, ``chi`` and ``invgamma``, the
incomplete beta function's in ``a`` and ``b`` (``special._betainc_d``) for ``beta`` and
``f``, and ``t``'s in ``df``
(``special._stdtr_d_df``, smooth through t = 0). Not differentiable, and refused by name
when traced: that family in the other distributions' shapes, and ``nbinom``'s cdf in ``n``;
``betabinom`` has ``logpmf`` and ``pmf`` only, as JAX's.
"""
import functools
import math

import numpy as _onp
import scipy.stats as _st

import fgrad.numpy as fnp
from ..core import errors, table
from . import defining
from ..numpy import batch_rules
from ..numpy.broadcasting import broadcast_like, cast_like, unbroadcast_like
from ..numpy.linalg.common import _dominant, _read_triangle, _read_triangle_adjoint
from ..numpy.reductions import numpy_result
from ..numpy.wrapping import numpy_reference, refuse_traced, traced_version_of
from ..core.table import Spec
from ..core.tracer import contains_tracer, differentiated, value_for_shape, without_derivative
from . import special as sp

# the family's functions batch by broadcasting (those of whole vectors say otherwise)
define = functools.partial(defining.define, batch=batch_rules.elementwise)


def _exp_or_log(dist, method):
    """jet's rule, by composition, for a method of the distribution ``dist`` (its primitives'
    prefix) whose JVP rule reads its output: a density or mass as exp of its log (where
    positive), a log-probability as log of the probability (where that does not underflow);
    None for the other methods. (The primitive is looked up when a jet runs: a distribution's
    methods are defined one after the other.)"""
    if method in ("pdf", "pmf"):
        return table.Composed(
            lambda *a, **p: fnp.exp(table.PRIMITIVES[f"{dist}.log{method}"](*a, **p)),
            where=lambda ans, *a, **p: bool(_onp.all(ans > 0)))
    if method in ("logcdf", "logsf"):
        return table.Composed(
            lambda *a, **p: fnp.log(table.PRIMITIVES[f"{dist}.{method[3:]}"](*a, **p)),
            where=lambda ans, *a, **p: bool(_onp.all(ans > -600.0)))
    return None


# --- continuous distributions ---------------------------------------------------------------

_METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf")
# the methods differentiable in the shape parameters only where ``cdf_shapes`` says how
_CDF_FAMILY = ("cdf", "logcdf", "sf", "logsf", "ppf")


class Continuous:
    """A continuous distribution of scipy.stats as a location-scale family (see the module's
    docstring). ``score(z, *s)`` is ``dl/dz``, ``shape_scores[j](z, *s)`` is ``dl/ds_j``;
    ``cdf_shapes[j](z, *s)``, where given, the standard cdf's derivative in ``s_j`` (the cdf
    family's derivatives in the shapes follow from it: ``sf`` minus it, the logs over their
    value, ``ppf`` minus it over the density; ``slow``: by a series or continued fraction,
    ``Spec.slow``); ``x_domain`` is where the tests draw points (inside the support for any
    loc in (-0.2, 0.2) and scale in (1.5, 2)), ``shape_domains`` the shapes'."""

    def __init__(self, name, shapes, score, shape_scores=(), x_domain=(-2.0, 2.0),
                 shape_domains=(), valid=None, ppf_valid=None, cdf_shapes=(), slow=False):
        self.name, self.shapes, self.score = name, tuple(shapes), score
        self.shape_scores, self.cdf_shapes = tuple(shape_scores), tuple(cdf_shapes)
        self._slow = slow
        self.scipy = getattr(_st, name)
        self._x_domain, self._shape_domains = x_domain, shape_domains
        self._valid, self._ppf_valid = valid, ppf_valid
        self._prims, self.methods = {}, _METHODS
        for method in _METHODS:
            self._prims[method] = self._primitive(method)
            setattr(self, method, self._public(method))
            if method in _CDF_FAMILY and not self.cdf_shapes:
                getattr(self, method)._fgrad_not_in = self.shapes

    def __repr__(self):
        return f"<fgrad.scipy.stats.{self.name}>"

    # the standard log-density l(z; s), through the logpdf primitive so that it nests
    def _l(self, z, s):
        return self._prims["logpdf"](z, *s, 0.0, 1.0)

    def _partial(self, method, i, ans, x, *rest):
        s, loc, scale = rest[:-2], rest[-2], rest[-1]
        n = len(s)
        if method == "ppf":
            z = (ans - loc) / scale
            if i == 0:
                return scale * fnp.exp(-self._l(z, s))
            if i == n + 1:
                return fnp.ones_like(ans)
            if i == n + 2:
                return z
            if not self.cdf_shapes:
                raise self._no_shape(method, i)
            return -scale * self.cdf_shapes[i - 1](z, *s) * fnp.exp(-self._l(z, s))
        z = (x - loc) / scale
        j = 0 if i == 0 else i - n  # x, loc, scale as 0, 1, 2
        if method in ("logpdf", "pdf"):
            if 1 <= i <= n:
                d = self.shape_scores[i - 1](z, *s)
            else:
                d = _in_x_loc_scale(j, self.score(z, *s), z, scale, log_scale=True)
            return ans * d if method == "pdf" else d
        if 1 <= i <= n:
            if not self.cdf_shapes:
                raise self._no_shape(method, i)
            d = self.cdf_shapes[i - 1](z, *s)
            d = d * fnp.exp(-ans) if method.startswith("log") else d
            return -d if method in ("sf", "logsf") else d
        # cdf' = pdf; logcdf' = pdf / cdf = exp(l - logcdf); sf and logsf with a minus sign
        log_dens = self._l(z, s) - ans if method.startswith("log") else self._l(z, s)
        d = _in_x_loc_scale(j, fnp.exp(log_dens), z, scale)
        return -d if method in ("sf", "logsf") else d

    def _no_shape(self, method, i):
        return errors.no_derivative_in(
            f"scipy.stats.{self.name}.{method}", self.shapes[i - 1],
            "scipy has no closed form for it; logpdf and pdf are differentiable in every "
            "parameter")

    def _spec(self, method):
        n = len(self.shapes)
        first = (0.1, 0.9) if method == "ppf" else self._x_domain
        valid = self._ppf_valid if method == "ppf" else self._valid
        domain = [first, *self._shape_domains, (-0.2, 0.2), (1.5, 2.0)]
        cases = [(((),) * (n + 3), {}), (((3,),) + ((),) * (n + 2), {}),
                 (((2, 3),) + ((3,),) * n + ((), (2, 1)), {})]
        if method in _CDF_FAMILY and n and not self.cdf_shapes:
            # not differentiable in the shapes: they are fixed by the test's call
            fixed = tuple((a + b) / 2 for a, b in self._shape_domains)
            cases = [((c[0],) + c[-2:], p) for c, p in cases]
            return Spec(cases, domain=[first, (-0.2, 0.2), (1.5, 2.0)], valid=valid,
                        call=lambda f, x, loc, scale: f(x, *fixed, loc, scale))
        return Spec(cases, domain=domain, valid=valid,
                    slow=self._slow and method in _CDF_FAMILY)

    def _primitive(self, method):
        fn = getattr(self.scipy, method)
        return defining.elementwise(
            f"scipy.stats.{self.name}.{method}", lambda *args: fn(*args),
            lambda i, ans, *args: self._partial(method, i, ans, *args), self._spec(method),
            taylor=self._taylor(method))

    def _taylor(self, method):
        """jet's rules where the JVP rule reads the output: the density as exp(logpdf), the
        log-probabilities as log(cdf) and log(sf), and ppf as the inverse of cdf, whose
        derivative is the density (by Newton's method on the series), each where it holds."""
        if method != "ppf":
            return _exp_or_log(f"scipy.stats.{self.name}", method)
        return table.Inverse(self._prims["cdf"], self._prims["pdf"],
                             where=lambda ans, *args: bool(_onp.all(
                                 _onp.isfinite(ans) & (self.scipy.pdf(ans, *args[1:]) > 0))))

    def _public(self, method):
        prim, names = self._prims[method], self.shapes + ("loc", "scale")

        @traced_version_of(getattr(self.scipy, method))
        def public(x, *args, **kwargs):
            values = {"loc": 0.0, "scale": 1.0}
            values.update(zip(names, args))
            for k, v in kwargs.items():
                if k not in names:
                    raise TypeError(f"{self.name}.{method}() got an unexpected keyword "
                                    f"argument {k!r}")
                values[k] = v
            missing = [n for n in self.shapes if n not in values]
            if missing or len(args) > len(names):
                raise TypeError(f"{self.name}.{method}() takes the point, the shape "
                                f"parameters {self.shapes}, loc and scale")
            return prim(x, *(values[n] for n in names))

        public._fgrad_entry = prim
        return public


def _in_x_loc_scale(j, d, z, scale, log_scale=False):
    """The derivative in x (j = 0), loc (j = 1) or scale (j = 2) of a function of
    ``z = (x - loc) / scale`` whose derivative in z is ``d``; ``log_scale``: minus
    ``log(scale)`` too (the log-density's Jacobian term)."""
    if j == 0:
        return d / scale
    if j == 1:
        return -d / scale
    return -(z * d + 1) / scale if log_scale else -z * d / scale


def _log1mz(z):
    return fnp.log1p(-z)


_POSITIVE = (0.5, 3.0)  # z = (x - loc) / scale in (0.15, 2.1)
_UNIT = (0.4, 1.2)  # z in (0.1, 0.93)


norm = Continuous("norm", (), lambda z: -z)
t = Continuous(
    "t", ("df",), lambda z, df: -(df + 1) * z / (df + z * z),
    [lambda z, df: 0.5 * (sp.digamma((df + 1) / 2) - sp.digamma(df / 2)) - 0.5 / df
     - 0.5 * fnp.log1p(z * z / df) + 0.5 * (df + 1) * z * z / (df * (df + z * z))],
    shape_domains=[(1.5, 6.0)], cdf_shapes=[lambda z, df: sp._stdtr_d_df(df, z)], slow=True)
gamma = Continuous("gamma", ("a",), lambda z, a: (a - 1) / z - 1,
                   [lambda z, a: fnp.log(z) - sp.digamma(a)],
                   x_domain=_POSITIVE, shape_domains=[(0.8, 3.0)],
                   # (cdf = gammainc(a, z))
                   cdf_shapes=[lambda z, a: sp._gammainc_d_a(a, z)], slow=True)
beta = Continuous(
    "beta", ("a", "b"), lambda z, a, b: (a - 1) / z - (b - 1) / (1 - z),
    [lambda z, a, b: fnp.log(z) - sp.digamma(a) + sp.digamma(a + b),
     lambda z, a, b: _log1mz(z) - sp.digamma(b) + sp.digamma(a + b)],
    x_domain=_UNIT, shape_domains=[(0.8, 3.0), (0.8, 3.0)],
    cdf_shapes=[lambda z, a, b: sp._betainc_d(a, b, z, 0),  # (cdf = betainc(a, b, z))
                lambda z, a, b: sp._betainc_d(a, b, z, 1)], slow=True)
chi2 = Continuous("chi2", ("df",), lambda z, df: (df / 2 - 1) / z - 0.5,
                  [lambda z, df: 0.5 * (fnp.log(z / 2) - sp.digamma(df / 2))],
                  x_domain=_POSITIVE, shape_domains=[(1.5, 5.0)],
                  cdf_shapes=[lambda z, df: 0.5 * sp._gammainc_d_a(df / 2, z / 2)], slow=True)
expon = Continuous("expon", (), lambda z: -fnp.ones_like(z), x_domain=_POSITIVE)
# (the kink at z = 0 takes the average of the one-sided scores, 0)
laplace = Continuous("laplace", (), lambda z: -fnp.sign(without_derivative(z)) * fnp.ones_like(z),
                     valid=lambda x, loc, scale: _onp.all(_onp.abs(x - loc) > 0.05),
                     ppf_valid=lambda q, loc, scale: _onp.all(_onp.abs(q - 0.5) > 0.02))
logistic = Continuous("logistic", (), lambda z: -fnp.tanh(z / 2))
cauchy = Continuous("cauchy", (), lambda z: -2 * z / (1 + z * z))
lognorm = Continuous("lognorm", ("s",), lambda z, s: -(1 + fnp.log(z) / (s * s)) / z,
                     [lambda z, s: (fnp.log(z) ** 2 / (s * s) - 1) / s],
                     x_domain=_POSITIVE, shape_domains=[(0.5, 2.0)],
                     # cdf = ndtr(log z / s)
                     cdf_shapes=[lambda z, s: -fnp.exp(-0.5 * (fnp.log(z) / s) ** 2
                                                       - sp._LOG_SQRT_2PI) * fnp.log(z) / (s * s)])
uniform = Continuous("uniform", (), lambda z: fnp.zeros_like(z), x_domain=_UNIT)
gumbel_r = Continuous("gumbel_r", (), lambda z: fnp.expm1(-z))  # l = -z - exp(-z)
gumbel_l = Continuous("gumbel_l", (), lambda z: -fnp.expm1(z))  # l = z - exp(z)
# l = log b - (b + 1) log z on z >= 1 (the points drawn give z in (1.15, 3.5))
pareto = Continuous("pareto", ("b",), lambda z, b: -(b + 1) / z,
                    [lambda z, b: 1 / b - fnp.log(z)],
                    x_domain=(2.5, 5.0), shape_domains=[(1.0, 4.0)],
                    cdf_shapes=[lambda z, b: z ** -b * fnp.log(z)])  # (cdf = 1 - z^-b)
# l = log c + (c - 1) log z - z^c on z > 0
weibull_min = Continuous("weibull_min", ("c",),
                         lambda z, c: (c - 1) / z - c * z ** (c - 1),
                         [lambda z, c: 1 / c + (1 - z ** c) * fnp.log(z)],
                         x_domain=_POSITIVE, shape_domains=[(0.8, 3.0)],
                         # cdf = 1 - exp(-z^c)
                         cdf_shapes=[lambda z, c: fnp.exp(-z ** c) * z ** c * fnp.log(z)])


def _truncnorm_bound_score(bound, a, b, sign):
    """d/da (sign -1: d/db) of -log(ndtr(b) - ndtr(a)): the bound's density over the mass."""
    log_mass = fnp.log(sp.ndtr(b) - sp.ndtr(a))
    return sign * fnp.exp(-0.5 * bound * bound - sp._LOG_SQRT_2PI - log_mass)


# l = -z^2 / 2 - log(sqrt(2 pi) (ndtr(b) - ndtr(a))) on a <= z <= b (a, b in standard units;
# the points drawn stay inside)
truncnorm = Continuous("truncnorm", ("a", "b"), lambda z, a, b: -z,
                       [lambda z, a, b: _truncnorm_bound_score(a, a, b, 1.0),
                        lambda z, a, b: _truncnorm_bound_score(b, a, b, -1.0)],
                       shape_domains=[(-3.0, -1.5), (1.5, 3.0)])
# l = log beta - log 2 - gammaln(1 / beta) - |z|^beta (the points drawn keep |z| > 0.05: the
# kink at 0 for beta <= 2 is no point to differentiate at)
gennorm = Continuous(
    "gennorm", ("beta",),
    lambda z, beta: -beta * fnp.sign(without_derivative(z)) * fnp.abs(z) ** (beta - 1),
    [lambda z, beta: (1 + sp.digamma(1 / beta) / beta) / beta
     - fnp.abs(z) ** beta * fnp.log(fnp.abs(z))],
    shape_domains=[(1.0, 3.0)],
    # (x, beta, loc, scale), or (x, loc, scale) for the methods not differentiated in beta
    valid=lambda x, *rest: _onp.all(_onp.abs(x - rest[-2]) > 0.1),
    ppf_valid=lambda q, loc, scale: _onp.all(_onp.abs(q - 0.5) > 0.02))
# l = log(1 - c^2) - log(2 pi) - log(1 + c^2 - 2 c cos z) on 0 <= z <= 2 pi (the points drawn
# give z in (0.15, 6.1))
wrapcauchy = Continuous(
    "wrapcauchy", ("c",),
    lambda z, c: -2 * c * fnp.sin(z) / (1 + c * c - 2 * c * fnp.cos(z)),
    [lambda z, c: -2 * c / (1 - c * c) - 2 * (c - fnp.cos(z)) / (1 + c * c - 2 * c * fnp.cos(z))],
    x_domain=(0.5, 9.0), shape_domains=[(0.1, 0.8)])
# l = kappa cos z - log(2 pi I0(kappa)); I0'/I0 = I1/I0, the exponentially scaled ratio
vonmises = Continuous("vonmises", ("kappa",), lambda z, kappa: -kappa * fnp.sin(z),
                      [lambda z, kappa: fnp.cos(z) - sp.i1e(kappa) / sp.i0e(kappa)],
                      shape_domains=[(0.5, 4.0)])

# half-normal and half-Cauchy on z >= 0, l = log sqrt(2/pi) - z^2/2 and log(2/pi) - log(1 + z^2)
halfnorm = Continuous("halfnorm", (), lambda z: -z, x_domain=_POSITIVE)
halfcauchy = Continuous("halfcauchy", (), lambda z: -2 * z / (1 + z * z), x_domain=_POSITIVE)
# l = log z - z^2 / 2 on z >= 0
rayleigh = Continuous("rayleigh", (), lambda z: 1 / z - z, x_domain=_POSITIVE)
# l = (df - 1) log z - z^2 / 2 - (df / 2 - 1) log 2 - gammaln(df / 2) on z >= 0
chi = Continuous("chi", ("df",), lambda z, df: (df - 1) / z - z,
                 [lambda z, df: fnp.log(z) - 0.5 * (math.log(2) + sp.digamma(df / 2))],
                 x_domain=_POSITIVE, shape_domains=[(1.5, 5.0)],
                 cdf_shapes=[lambda z, df: 0.5 * sp._gammainc_d_a(df / 2, z * z / 2)], slow=True)
# l = -(a + 1) log z - 1 / z - gammaln(a) on z > 0
invgamma = Continuous("invgamma", ("a",), lambda z, a: (1 / z - (a + 1)) / z,
                      [lambda z, a: -fnp.log(z) - sp.digamma(a)],
                      x_domain=_POSITIVE, shape_domains=[(0.8, 3.0)],
                      # (cdf = gammaincc(a, 1 / z))
                      cdf_shapes=[lambda z, a: -sp._gammainc_d_a(a, 1 / z)], slow=True)
# l = log c - (c + 1) log(1 + z) on z >= 0 (Pareto of the second kind)
lomax = Continuous("lomax", ("c",), lambda z, c: -(c + 1) / (1 + z),
                   [lambda z, c: 1 / c - fnp.log1p(z)],
                   x_domain=_POSITIVE, shape_domains=[(0.8, 3.0)],
                   cdf_shapes=[lambda z, c: (1 + z) ** -c * fnp.log1p(z)])  # (1 - (1+z)^-c)


def _normal_hazard(u):
    """phi(u) / Phi(u), in logs (finite far in the left tail)."""
    return fnp.exp(-0.5 * (u * u) - sp._LOG_SQRT_2PI - sp.log_ndtr(u))


# l = log 2 + log phi(z) + log Phi(a z)
skewnorm = Continuous("skewnorm", ("a",), lambda z, a: a * _normal_hazard(a * z) - z,
                      [lambda z, a: z * _normal_hazard(a * z)], shape_domains=[(-3.0, 3.0)])


# Snedecor's F, l = n/2 log n + d/2 log d + (n/2 - 1) log z - (n + d)/2 log(n z + d)
# - betaln(n/2, d/2) (n = dfn, d = dfd): its scores in z, n and d
def _f_score(z, dfn, dfd):
    return (dfn / 2 - 1) / z - (dfn + dfd) / 2 * dfn / (dfn * z + dfd)


def _f_shape(z, dfn, dfd, first):
    w, half, own = dfn * z + dfd, (dfn + dfd) / 2, dfn if first else dfd
    return (0.5 * (fnp.log(own) + 1 - fnp.log(w) + (fnp.log(z) if first else 0.0))
            - half * (z if first else 1) / w - 0.5 * (sp.digamma(own / 2) - sp.digamma(half)))


f = Continuous("f", ("dfn", "dfd"), _f_score,
               [lambda z, dfn, dfd: _f_shape(z, dfn, dfd, True),
                lambda z, dfn, dfd: _f_shape(z, dfn, dfd, False)],
               x_domain=_POSITIVE, shape_domains=[(2.0, 8.0), (3.0, 10.0)],
               cdf_shapes=[lambda z, dfn, dfd: sp._fdtr_d(dfn, dfd, z, 0),
                           lambda z, dfn, dfd: sp._fdtr_d(dfn, dfd, z, 1)], slow=True)

# Survival and extreme-value families, each by its log-density l(z) on its support, its score
# and its cdf's derivatives in the shapes where they have a closed form.
# l = log c + z - c (e^z - 1) on z >= 0; cdf = 1 - exp(-c (e^z - 1))
gompertz = Continuous("gompertz", ("c",), lambda z, c: 1 - c * fnp.exp(z),
                      [lambda z, c: 1 / c - fnp.expm1(z)],
                      x_domain=_POSITIVE, shape_domains=[(0.5, 2.0)],
                      cdf_shapes=[lambda z, c: fnp.exp(-c * fnp.expm1(z)) * fnp.expm1(z)])


def _fisk_weight(z, c):  # z^c / (1 + z^c), the cdf
    return 1 / (1 + z ** -c)


# log-logistic: l = log c + (c - 1) log z - 2 log(1 + z^c) on z > 0; cdf = z^c / (1 + z^c)
fisk = Continuous("fisk", ("c",), lambda z, c: ((c - 1) - 2 * c * _fisk_weight(z, c)) / z,
                  [lambda z, c: 1 / c + (1 - 2 * _fisk_weight(z, c)) * fnp.log(z)],
                  x_domain=_POSITIVE, shape_domains=[(0.8, 3.0)],
                  cdf_shapes=[lambda z, c: _fisk_weight(z, c) * (1 - _fisk_weight(z, c))
                              * fnp.log(z)])


def _genpareto_tail_d(z, c):  # d/dc of log((1 + c z)^(-1/c)), the log survival function
    return fnp.log1p(c * z) / (c * c) - z / (c * (1 + c * z))


# l = -(1 + 1/c) log(1 + c z) on z >= 0 (c > 0); sf = (1 + c z)^(-1/c)
genpareto = Continuous("genpareto", ("c",), lambda z, c: -(c + 1) / (1 + c * z),
                       [lambda z, c: fnp.log1p(c * z) / (c * c) - (1 + 1 / c) * z / (1 + c * z)],
                       x_domain=_POSITIVE, shape_domains=[(0.3, 2.0)],
                       cdf_shapes=[lambda z, c: -(1 + c * z) ** (-1 / c)
                                   * _genpareto_tail_d(z, c)])

# l = -log(2 pi) / 2 - 3/2 log z - (z - mu)^2 / (2 z mu^2) on z > 0
invgauss = Continuous("invgauss", ("mu",),
                      lambda z, mu: -1.5 / z - 0.5 / (mu * mu) + 0.5 / (z * z),
                      [lambda z, mu: (z / mu - 1) / (mu * mu)],
                      x_domain=_POSITIVE, shape_domains=[(0.5, 2.0)])


def _normal_density(u):
    return fnp.exp(-0.5 * (u * u) - sp._LOG_SQRT_2PI)


# Johnson's SU: u = a + b asinh(z) is standard normal;
# l = log(du/dz) - log(2 pi) / 2 - u^2 / 2, cdf = ndtr(u)
johnsonsu = Continuous(
    "johnsonsu", ("a", "b"),
    lambda z, a, b: -(z + (a + b * fnp.arcsinh(z)) * b * fnp.sqrt(z * z + 1)) / (z * z + 1),
    [lambda z, a, b: -(a + b * fnp.arcsinh(z)),
     lambda z, a, b: 1 / b - (a + b * fnp.arcsinh(z)) * fnp.arcsinh(z)],
    shape_domains=[(-1.0, 1.0), (0.8, 2.5)],
    cdf_shapes=[lambda z, a, b: _normal_density(a + b * fnp.arcsinh(z)),
                lambda z, a, b: _normal_density(a + b * fnp.arcsinh(z)) * fnp.arcsinh(z)])


# --- discrete distributions -------------------------------------------------------------

class Discrete:
    """A discrete distribution of scipy.stats. ``shapes`` are scipy's shape parameters in
    order; ``logpmf_d[name](k, **shapes)`` is the log-pmf's derivative in a shape,
    ``cdf_d[name](k, **shapes)`` the cdf's at an integer ``k``, where a closed form exists.
    A shape without a rule (``binom``'s integer ``n``; ``nbinom``'s ``n`` in the cdf) has no
    derivative, like the point ``k`` and ``loc``: the primitive takes them after the shapes
    it differentiates, ``(*shapes, k, loc, *fixed shapes)``, so that they may be staged or
    batched (counts passed to a jitted likelihood), and refuses them by name where they are
    differentiated. The tests draw the shapes from ``domains`` and use ``statics`` for the
    fixed ones, at the points ``ks`` (``cdf_ks`` for the cdf family, where it must stay off
    the support's end). ``methods``: where the cdf family has no closed form in any shape
    parameter, only ``logpmf`` and ``pmf`` (as JAX's ``betabinom``)."""

    methods = ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")

    def __init__(self, name, shapes, logpmf_d, cdf_d, domains=(), ks=(0, 1, 3), statics=None,
                 cdf_ks=None, methods=None):
        self.name, self.shapes = name, tuple(shapes)
        if methods is not None:
            self.methods = methods
        self.logpmf_d, self.cdf_d = logpmf_d, cdf_d
        self.scipy = getattr(_st, name)
        self._free, self._fixed, self._prims = {}, {}, {}
        for method in self.methods:
            rules = logpmf_d if method.endswith("pmf") else cdf_d
            free = self._free[method] = tuple(s for s in shapes if s in rules)
            self._fixed[method] = tuple(s for s in shapes if s not in free)
            fixed = {s: statics[s] for s in shapes if s not in free}  # the tests' values
            if cdf_ks and not method.endswith("pmf"):
                ks = cdf_ks
            cases = [((((),) * len(free)), dict(k=ks[-1], **fixed)),
                     ((((3,),) * len(free)), dict(k=ks, **fixed)),
                     (((2, 3),) + ((3,),) * (len(free) - 1),
                      dict(k=tuple(k + 1 for k in ks), loc=1, **fixed))]
            fn = getattr(self.scipy, method)
            self._prims[method] = defining.elementwise(
                f"scipy.stats.{name}.{method}", self._impl(fn, method),
                lambda i, ans, *vals, _m=method: self._partial(_m, i, ans, vals),
                Spec(cases, domain=[d for s, d in zip(shapes, domains) if s in free],
                     call=functools.partial(_k_loc_and_fixed_last, self._fixed[method])),
                taylor=_exp_or_log(f"scipy.stats.{name}", method))
            setattr(self, method, self._public(method))

    def __repr__(self):
        return f"<fgrad.scipy.stats.{self.name}>"

    def __getattr__(self, name):  # (only for what the instance lacks)
        if name in Discrete.methods:
            raise AttributeError(
                f"fgrad.scipy.stats.{self.name} has {' and '.join(self.methods)} only (its "
                f"{name} has no closed form in the parameters {tuple(self.logpmf_d)}, as in "
                f"JAX); for plain values call scipy.stats.{self.name}.{name}")
        raise AttributeError(name)

    def _split(self, method, vals):
        """A primitive's arguments ``(*shapes, k, loc, *fixed shapes)``: ``(shapes by name,
        k, loc)``."""
        free = self._free[method]
        n = len(free)
        shapes = dict(zip(free, vals[:n]))
        shapes.update(zip(self._fixed[method], vals[n + 2:]))
        return shapes, vals[n], vals[n + 1]

    def _impl(self, fn, method):
        def impl(*vals):
            shapes, k, loc = self._split(method, vals)
            return fn(k, *(shapes[s] for s in self.shapes), loc)
        return impl

    def _no_derivative(self, method, arg):
        why = ("an integer" if arg in ("k", "loc") or arg not in self.logpmf_d else
               "no closed form; logpmf and pmf are differentiable in it")
        return errors.no_derivative_in(f"scipy.stats.{self.name}.{method}", arg, why)

    def _partial(self, method, i, ans, vals):
        free = self._free[method]
        if i >= len(free):  # (reached through jit, vmap or checkpoint: see table.no_derivative)
            raise self._no_derivative(method, (free + ("k", "loc") + self._fixed[method])[i])
        static, k, loc = self._split(method, vals)
        # (plain numpy on a plain point: numpy's scalars, as the eager rule has always had)
        xp = fnp if contains_tracer(k) or contains_tracer(loc) else _onp
        kk = xp.asarray(k) - loc
        if method.endswith("pmf"):
            d = self.logpmf_d[free[i]](kk, **static)
            return ans * d if method == "pmf" else d
        d = self.cdf_d[free[i]](xp.floor(kk), **static)
        if method.startswith("log"):
            d = d / fnp.exp(ans)
        return -d if "sf" in method else d

    def _public(self, method):
        prim, names, free = self._prims[method], self.shapes + ("loc",), self._free[method]

        @traced_version_of(getattr(self.scipy, method))
        def public(k, *args, **kwargs):
            values = {"loc": 0}
            values.update(zip(names, args))
            values.update(kwargs)
            if set(values) != set(names) or len(args) > len(names):
                raise TypeError(f"{self.name}.{method}() takes the point k, the parameters "
                                f"{self.shapes} and loc")
            for static in ("k",) + tuple(n for n in names if n not in free):
                value = k if static == "k" else values[static]
                if differentiated(value):
                    raise self._no_derivative(method, static)
            # (k, loc and the fixed shapes are arguments without derivative: a staged or
            # batched one, the counts a jitted likelihood is called with, is an operand)
            return prim(*(values[s] for s in free), k, values["loc"],
                        *(values[s] for s in self._fixed[method]))

        public._fgrad_entry = prim
        public._fgrad_not_in = ("k", "loc") + tuple(n for n in self.shapes if n not in free)
        return public


def _k_loc_and_fixed_last(fixed, fn, *vals, k, loc=0, **static):
    """How the tests call a discrete distribution's primitive: the point, loc and the fixed
    shapes (in a case's parameters, not drawn) after the drawn shapes."""
    return fn(*vals, k, loc, *(static[s] for s in fixed))


_P = (0.1, 0.9)
poisson = Discrete(
    "poisson", ("mu",), {"mu": lambda k, mu: k / mu - 1},
    # d/dmu P(X <= k) = -pmf(k)
    {"mu": lambda k, mu: -poisson.pmf(k, mu)}, domains=[(0.5, 4.0)])
binom = Discrete(
    "binom", ("n", "p"), {"p": lambda k, n, p: k / p - (n - k) / (1 - p)},
    {"p": lambda k, n, p: -n * binom.pmf(k, n - 1, p)}, domains=[None, _P],
    ks=(0, 2, 5), statics={"n": 6})
nbinom = Discrete(
    "nbinom", ("n", "p"),
    {"n": lambda k, n, p: sp.digamma(k + n) - sp.digamma(n) + fnp.log(p),
     "p": lambda k, n, p: n / p - k / (1 - p)},
    # the cdf is betainc(n, k + 1, p), whose derivative in p is the beta density
    {"p": lambda k, n, p: fnp.exp((n - 1) * fnp.log(p) + k * fnp.log1p(-p)
                                  - sp.betaln(n, k + 1))},
    domains=[(0.5, 4.0), _P], ks=(0, 2, 5), statics={"n": 2.5})
geom = Discrete(
    "geom", ("p",), {"p": lambda k, p: 1 / p - (k - 1) / (1 - p)},
    {"p": lambda k, p: k * (1 - p) ** (k - 1)}, domains=[_P], ks=(1, 2, 5))
bernoulli = Discrete(
    "bernoulli", ("p",), {"p": lambda k, p: k / p - (1 - k) / (1 - p)},
    {"p": lambda k, p: -1.0 * ((k >= 0) & (k < 1)) * fnp.ones_like(p)}, domains=[_P],
    ks=(0, 1, 1), cdf_ks=(0, 0, 0))


def _zipf_cdf_d(k, a):
    """d/da of zipf's cdf, 1 - zeta(a, k + 1) / zeta(a, 1) (0 below k = 1)."""
    q = fnp.where(k >= 1, k + 1, 2.0)
    whole, rest = sp.zeta(a, 1.0), sp.zeta(a, q)
    d = (rest * sp._zeta_d_x(a, 1.0) - sp._zeta_d_x(a, q) * whole) / (whole * whole)
    return fnp.where(k >= 1, d, 0.0)


# k^-a / zeta(a), k >= 1: a power law's counts (the Hurwitz zeta function in its exponent)
zipf = Discrete(
    "zipf", ("a",), {"a": lambda k, a: -fnp.log(k) - sp._zeta_d_x(a, 1.0) / sp.zeta(a, 1.0)},
    {"a": _zipf_cdf_d}, domains=[(1.5, 4.0)], ks=(1, 2, 5))

# log C(n, k) + betaln(k + a, n - k + b) - betaln(a, b), in a and b (n an integer)
betabinom = Discrete(
    "betabinom", ("n", "a", "b"),
    {"a": lambda k, n, a, b: sp.digamma(k + a) - sp.digamma(n + a + b) - sp.digamma(a)
     + sp.digamma(a + b),
     "b": lambda k, n, a, b: sp.digamma(n - k + b) - sp.digamma(n + a + b) - sp.digamma(b)
     + sp.digamma(a + b)},
    {}, domains=[None, (0.5, 3.0), (0.5, 3.0)], ks=(0, 2, 5), statics={"n": 6},
    methods=("logpmf", "pmf"))


# --- multivariate: dirichlet, multivariate_normal ------------------------------------------

def _components_first(a, x):
    """``a`` (K,) shaped to broadcast against ``x`` (K, ...): dirichlet's components are x's
    first axis."""
    return fnp.reshape(a, _onp.shape(a) + (1,) * (_onp.ndim(value_for_shape(x)) - 1))


def _dirichlet_partial(i, x, alpha):
    a = _components_first(alpha, x)
    if i == 0:
        return (a - 1) / x
    return fnp.log(x) - _components_first(sp.digamma(alpha), x) + sp.digamma(fnp.sum(alpha))


def _dirichlet_vjp(i, g, ans, x, alpha, pdf=False):
    w = g * ans if pdf else g  # (the batch of points, x's other axes)
    d = w * _dirichlet_partial(i, x, alpha)
    if i == 0:
        return cast_like(d, x)
    return cast_like(fnp.reshape(fnp.sum(d, axis=tuple(range(1, _onp.ndim(value_for_shape(x))))),
                                 _onp.shape(value_for_shape(alpha))), alpha)


def _dirichlet_jvp(tangents, ans, x, alpha, pdf=False):
    out = None
    for i, t in enumerate(tangents):
        if t is not None:
            tt = t if i == 0 else _components_first(t, x)
            c = fnp.sum(tt * _dirichlet_partial(i, x, alpha), axis=0)
            out = c if out is None else out + c
    return None if out is None else (ans * out if pdf else out)


def _on_simplex(y):
    """Unconstrained test draws as points of the simplex (components on axis 0), in float64:
    scipy checks the sum to float64's precision."""
    e = fnp.exp(fnp.astype(y, _onp.float64))
    return e / fnp.sum(e, axis=0, keepdims=True)


def _dirichlet_batch(pdf):
    """scipy takes one ``alpha`` a call: a batch is the density's closed form, with the
    components on axis 1 (equal to scipy's values to rounding)."""
    def rule(prim, size, vals, dims):
        x, alpha = (batch_rules.batch_first(v, d, size) for v, d in zip(vals, dims))
        extra = len(batch_rules.shape(x)) - 2  # x's axes beyond the components
        a = fnp.reshape(alpha, batch_rules.shape(alpha) + (1,) * extra)
        norm = sp.gammaln(fnp.sum(alpha, axis=1)) - fnp.sum(sp.gammaln(alpha), axis=1)
        lp = fnp.reshape(norm, (size,) + (1,) * extra) + fnp.sum((a - 1) * fnp.log(x), axis=1)
        return (fnp.exp(lp) if pdf else lp), 0
    return rule


def _dirichlet_prim(method):
    fn = getattr(_st.dirichlet, method)
    pdf = method == "pdf"
    p = define(f"scipy.stats.dirichlet.{method}", lambda x, alpha: fn(x, alpha),
               batch=_dirichlet_batch(pdf),
               vjp_by_argnum=lambda i, g, ans, x, alpha: _dirichlet_vjp(i, g, ans, x, alpha, pdf),
               spec=Spec([(((3,), (3,)), {}), (((3, 2), (3,)), {})],
                         domain=[(-1.0, 1.0), (0.5, 3.0)],
                         call=lambda f, y, alpha: f(_on_simplex(y), alpha)),
               jvp_joint=lambda ts, ans, x, alpha: _dirichlet_jvp(ts, ans, x, alpha, pdf),
               taylor=_exp_or_log("scipy.stats.dirichlet", method))

    @traced_version_of(fn)
    def public(x, alpha):
        x, alpha = fnp.asarray(x), fnp.asarray(alpha)
        if _onp.shape(value_for_shape(x))[0] + 1 == _onp.shape(value_for_shape(alpha))[0]:
            # K - 1 components given: the last is what makes the sum 1
            x = fnp.concatenate([x, 1 - fnp.sum(x, axis=0, keepdims=True)], axis=0)
        return p(x, alpha)

    public._fgrad_entry = p
    return public


class _Dirichlet:
    """scipy.stats.dirichlet's logpdf and pdf, differentiable in the point and ``alpha``, and
    its ``rvs`` (scipy's own: draws, without derivative)."""

    methods = ("logpdf", "pdf")

    def __init__(self):
        self.logpdf, self.pdf = _dirichlet_prim("logpdf"), _dirichlet_prim("pdf")

    def rvs(self, alpha, size=1, random_state=None):
        """``scipy.stats.dirichlet.rvs``: scipy's draws, for a plain ``alpha`` (a traced one
        is refused: the draws have no derivative in it, and a staged call would replay one
        draw)."""
        refuse_traced("scipy.stats.dirichlet.rvs", "alpha", alpha,
                      "scipy draws from it; pass a plain value")
        return _st.dirichlet.rvs(alpha, size=size, random_state=random_state)

    def __repr__(self):
        return "<fgrad.scipy.stats.dirichlet>"


dirichlet = _Dirichlet()


# scipy reads the covariance's lower triangle: the rules work with the symmetric matrix read
# from it, and map tangents and cotangents through that reading (as numpy.linalg.cholesky's)

def _inv_read(cov):
    return fnp.linalg.inv(_read_triangle(cov, True))


def _mvn_parts(x, mean, cov, allow_singular=False):
    """The batch shape, ``P = inv(cov)`` and ``P (x - mean)`` per point (last axis); with
    ``allow_singular``, ``P`` is the pseudo-inverse (the density lives on cov's range,
    where the log-density's quadratic form is ``(x - mean)^T pinv(cov) (x - mean)``)."""
    batch = _onp.shape(value_for_shape(x))[:-1]
    prec = fnp.linalg.pinv(_read_triangle(cov, True)) if allow_singular \
        else _inv_read(cov)
    return batch, prec, fnp.matmul(x - mean, prec)  # (prec is symmetric)


def _refuse_singular_cov(pdf):
    raise errors.no_derivative_in(
        f"scipy.stats.multivariate_normal.{'pdf' if pdf else 'logpdf'}", "cov",
        "with allow_singular=True its rank, and so the density's support, may change with it; "
        "autograd refuses it too")


def _mvn_vjp(i, g, ans, x, mean, cov, pdf=False, allow_singular=False):
    if i == 2 and allow_singular:
        _refuse_singular_cov(pdf)
    batch, prec, pr = _mvn_parts(x, mean, cov, allow_singular)
    w = fnp.reshape(g * ans if pdf else g, batch)
    if i == 0:
        return cast_like(-fnp.expand_dims(w, -1) * pr, x)
    if i == 1:
        return cast_like(unbroadcast_like(fnp.expand_dims(w, -1) * pr, mean), mean)
    wpr = fnp.reshape(fnp.expand_dims(w, -1) * pr, (-1, _onp.shape(value_for_shape(cov))[-1]))
    outer = fnp.matmul(fnp.swapaxes(fnp.reshape(pr, _onp.shape(value_for_shape(wpr))), 0, 1), wpr)
    return cast_like(_read_triangle_adjoint(-0.5 * (fnp.sum(w) * prec - outer), True), cov)


def _mvn_jvp(tangents, ans, x, mean, cov, pdf=False, allow_singular=False):
    tx, tm, tc = tangents
    if tc is not None and allow_singular:
        _refuse_singular_cov(pdf)
    batch, prec, pr = _mvn_parts(x, mean, cov, allow_singular)
    out = 0.0
    if tx is not None:
        out = out - fnp.sum(pr * tx, axis=-1)
    if tm is not None:
        out = out + fnp.sum(pr * tm, axis=-1)
    if tc is not None:
        tc = _read_triangle(tc, True)
        quad = fnp.sum(fnp.matmul(pr, tc) * pr, axis=-1)
        out = out - 0.5 * (fnp.sum(prec * tc) - quad)
    out = fnp.reshape(broadcast_like(out, _onp.zeros(batch)), _onp.shape(value_for_shape(ans)))
    return ans * out if pdf else out


def _mvn_batch(prim, size, vals, dims, **params):
    """A batch of points at one mean and covariance is one scipy call (its output reshaped:
    scipy squeezes a batch of one); batched parameters go one example at a time."""
    if dims[1] is None and dims[2] is None:
        x = batch_rules.to_front(vals[0], dims[0])
        return fnp.reshape(prim(x, *vals[1:], **params), batch_rules.shape(x)[:-1]), 0
    return batch_rules.one_at_a_time(prim, size, vals, dims, **params)


def _mvn_prim(method):
    fn = getattr(_st.multivariate_normal, method)
    pdf = method == "pdf"
    p = define(f"scipy.stats.multivariate_normal.{method}",
               lambda x, mean, cov, **params: fn(x, mean, cov, **params),
               vjp_by_argnum=lambda i, g, ans, *args, **params: _mvn_vjp(i, g, ans, *args,
                                                                         pdf=pdf, **params),
               batch=_mvn_batch,
               spec=Spec([(((3,), (3,), (3, 3)), {}), (((4, 2), (2,), (2, 2)), {}),
                          (((2, 3, 2), (2,), (2, 2)), {})], domain=(-1.0, 1.0),
                         call=lambda f, x, m, a: f(x, m, _dominant(a))),
               jvp_joint=lambda ts, ans, *args, **params: _mvn_jvp(ts, ans, *args, pdf=pdf,
                                                                   **params),
               taylor=_exp_or_log("scipy.stats.multivariate_normal", method))

    @traced_version_of(fn)
    def public(x, mean=None, cov=1, allow_singular=False):
        x = fnp.asarray(x)
        d = _onp.shape(value_for_shape(x))[-1] if _onp.ndim(value_for_shape(x)) else 1
        if _onp.ndim(value_for_shape(x)) == 0:
            x = fnp.reshape(x, (1,))
        mean = _onp.zeros(d) if mean is None else mean
        cov = fnp.asarray(cov)
        if _onp.ndim(value_for_shape(cov)) < 2:  # a scalar variance or a diagonal
            cov = fnp.diag(fnp.broadcast_to(cov, (d,)))
        if allow_singular:  # (a parameter only where given: the graphs stay as they were)
            return p(x, mean, cov, allow_singular=True)
        return p(x, mean, cov)

    public._fgrad_entry = p
    return public


def _mvn_entropy_impl(cov):
    return _st.multivariate_normal.entropy(cov=cov)


def _mvn_entropy_batch(prim, size, vals, dims):
    """A batch of covariances: the closed form ``(d log(2 pi e) + log det cov) / 2`` (scipy
    takes one covariance a call)."""
    cov = batch_rules.to_front(vals[0], dims[0])
    d = batch_rules.shape(cov)[-1]
    logdet = fnp.linalg.slogdet(_read_triangle(cov, True))[1]
    return 0.5 * (d * _onp.log(2 * _onp.pi * _onp.e) + logdet), 0


_mvn_entropy = define(
    "scipy.stats.multivariate_normal.entropy", _mvn_entropy_impl,
    [lambda g, ans, cov: cast_like(_read_triangle_adjoint(0.5 * g * _inv_read(cov), True), cov)],
    [lambda t, ans, cov: 0.5 * fnp.sum(_inv_read(cov) * _read_triangle(t, True))],
    spec=Spec([(((2, 2),), {}), (((3, 3),), {})], domain=(-1.0, 1.0),
              call=lambda f, a: f(_dominant(a))), batch=_mvn_entropy_batch)


class _MultivariateNormal:
    """scipy.stats.multivariate_normal's logpdf and pdf (in the point, the mean and the
    covariance) and entropy (in the covariance). scipy reads the covariance's lower triangle,
    so its derivative with respect to the upper one is zero, as numpy.linalg.cholesky's."""

    methods = ("logpdf", "pdf", "entropy")

    def __init__(self):
        self.logpdf, self.pdf = _mvn_prim("logpdf"), _mvn_prim("pdf")

    @staticmethod
    @traced_version_of(_st.multivariate_normal.entropy)
    def entropy(mean=None, cov=1):
        cov = fnp.asarray(cov)
        if _onp.ndim(value_for_shape(cov)) < 2:
            d = 1 if mean is None else _onp.size(value_for_shape(mean))
            cov = fnp.diag(fnp.broadcast_to(cov, (d,)))
        return _mvn_entropy(cov)

    def __repr__(self):
        return "<fgrad.scipy.stats.multivariate_normal>"


multivariate_normal = _MultivariateNormal()
multivariate_normal.entropy._fgrad_entry = _mvn_entropy


# --- kernel density estimation -----------------------------------------------------------------

class gaussian_kde:
    """scipy.stats.gaussian_kde, differentiable in the points it is evaluated at, in the
    dataset and in the weights: ``kde.logpdf(x)`` is
    ``logsumexp_i(log w_i - (x - d_i)' inv(S) (x - d_i) / 2) - log det(2 pi S) / 2`` with
    ``S`` the weighted data covariance times ``factor ** 2`` (Scott's or Silverman's factor
    from the effective count ``1 / sum(w ** 2)``, or a given one), as scipy's. Its values
    are scipy's own (its object built on the values, which it evaluates); ``evaluate``,
    ``pdf``, ``__call__`` and ``logpdf`` carry the derivatives. Other methods (``resample``,
    ``integrate_*``, ``marginal``) run scipy's on plain values only.

    >>> import numpy, scipy.stats, fgrad
    >>> from fgrad.scipy.stats import gaussian_kde
    >>> data = numpy.array([-1.0, 0.2, 0.5, 1.8])
    >>> score = fgrad.grad(lambda x: gaussian_kde(data).logpdf(x)[0])(0.3)
    >>> theirs = scipy.stats.gaussian_kde(data).logpdf
    >>> bool(numpy.isclose(score, (theirs(0.3 + 1e-6) - theirs(0.3 - 1e-6))[0] / 2e-6))
    True
    """

    def __init__(self, dataset, bw_method=None, weights=None):
        refuse_traced("scipy.stats.gaussian_kde", "bw_method", bw_method,
                      "it sets the bandwidth's rule")
        self.dataset = fnp.atleast_2d(fnp.asarray(dataset))
        self.d, self.n = fnp.shape(self.dataset)
        if self.n <= self.d:  # (scipy's message; its covariance would be singular)
            _st.gaussian_kde(_onp.zeros((self.d, self.n)))
        w = fnp.ones(self.n) if weights is None else fnp.atleast_1d(fnp.asarray(weights, float))
        self.weights = w / fnp.sum(w)
        self._given_weights = weights
        self.neff = 1 / fnp.sum(self.weights ** 2)
        self.set_bandwidth(bw_method)

    def scotts_factor(self):
        return self.neff ** (-1.0 / (self.d + 4))

    def silverman_factor(self):
        return (self.neff * (self.d + 2.0) / 4.0) ** (-1.0 / (self.d + 4))

    covariance_factor = scotts_factor

    def set_bandwidth(self, bw_method=None):
        """scipy's rules: None or ``"scott"``, ``"silverman"``, a number (the factor itself)
        or a function of this object giving it."""
        if bw_method is None or bw_method == "scott":
            self.covariance_factor = self.scotts_factor
        elif bw_method == "silverman":
            self.covariance_factor = self.silverman_factor
        elif _onp.isscalar(bw_method) and not isinstance(bw_method, str):
            self.covariance_factor = lambda: bw_method
        elif callable(bw_method):
            self.covariance_factor = lambda: bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar or a "
                             "callable.")
        self._bw_method = bw_method
        self.factor = self.covariance_factor()
        self._data_covariance = fnp.atleast_2d(fnp.cov(self.dataset, rowvar=1, bias=False,
                                                       aweights=self.weights))
        self.covariance = self._data_covariance * self.factor ** 2
        self.inv_cov = fnp.linalg.inv(self.covariance)
        # log det(2 pi S), from its Cholesky factor
        chol = fnp.linalg.cholesky(2 * math.pi * self.covariance)
        self.log_det = 2 * fnp.sum(fnp.log(fnp.diagonal(chol)))

    def _scipys(self, method, points):
        """scipy's ``method`` of its own object on the values (built as this one was)."""
        def run(data, pts, *w):
            kde = _st.gaussian_kde(data, bw_method=self._bw_method, weights=w[0] if w else None)
            return getattr(kde, method)(pts)
        extra = () if self._given_weights is None else (self._given_weights,)
        return numpy_reference(run, self.dataset, points, *extra)

    def _points(self, points):
        points = fnp.atleast_2d(fnp.asarray(points))
        d, m = fnp.shape(points)
        if d != self.d:
            if d == 1 and m == self.d:  # (scipy's: one point given as a row)
                return fnp.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points

    def _method(self, method, x, of_log_density):
        """scipy's ``method`` at the points ``x``, carrying, where anything is traced, the
        derivatives of ``of_log_density(log-density)`` by the formula in the class's text."""
        points = self._points(x)
        value = self._scipys(method, points)
        if not contains_tracer((points, self.dataset, self.weights)):
            return value
        diff = points[:, None, :] - self.dataset[:, :, None]  # (d, n, m)
        maha = fnp.einsum("inm,ij,jnm->nm", diff, self.inv_cov, diff)
        log_density = sp.logsumexp(fnp.log(self.weights)[:, None] - 0.5 * maha, axis=0) \
            - 0.5 * self.log_det
        return numpy_result(of_log_density(log_density), value)

    def logpdf(self, x):
        """The log-density at the points ``x`` (shape ``(d, m)``; a 1-d dataset's points as
        a vector)."""
        return self._method("logpdf", x, lambda log_density: log_density)

    def evaluate(self, points):
        """The density at the points (shape ``(d, m)``), ``exp(logpdf)``."""
        return self._method("evaluate", points, fnp.exp)

    __call__ = pdf = evaluate

    def __getattr__(self, name):  # scipy's other methods, on plain values only
        if name.startswith("_"):
            raise AttributeError(name)
        if contains_tracer((self.dataset, self.weights)):
            raise errors.NoDerivativeRuleError(
                f"fgrad.scipy.stats.gaussian_kde.{name}: fgrad differentiates logpdf, pdf "
                "and evaluate; this method runs scipy's on plain values only")
        kde = _st.gaussian_kde(self.dataset, bw_method=self._bw_method,
                               weights=self._given_weights)
        return getattr(kde, name)


# scipy.stats' other functions (``zscore``, ``entropy``, ...): scipy's own on plain values,
# refused by name on traced ones; a distribution fgrad has not is an AttributeError saying so
# the summary statistics of samples (skew, entropy, wasserstein_distance, ...)
from .summaries import (boxcox_llf, circmean, circstd, circvar, energy_distance,  # noqa
                        entropy, gmean, gstd, hmean, iqr, kurtosis, median_abs_deviation,
                        moment, pmean, sem, skew, trim_mean, variation, wasserstein_distance,
                        zmap, zscore)

__getattr__ = defining.plain_only_fallback(__name__, _st)
