"""Transforms composed with transforms, checked on a table entry against their references.

Each transform is checked on its own elsewhere (finite differences, stacked calls, nested
``jvp``); users compose them: per-example gradients are ``vmap(grad(loss))``, a jitted step is
``jit(value_and_grad(loss))``, a library hands a jitted objective to ``grad``. A *form* here is
one such composition of an entry, beside what it must equal:

* a derivative of a staged function (``grad(jit(f))``, ``hessian(jit(f))``, ``grad`` of a
  ``make_graph`` graph) equals the same derivative of ``f`` to rounding, the jitted function
  the weighted scalar or the entry itself, its outputs (several, complex, integer) weighted
  outside;
* a staged derivative (``jit(grad(f))``, ``jit(jvp(f))``, ``jit(jet(f))``) equals the eager one
  bit for bit, on the values it was traced on and replayed on new ones; so do ``jvp(jit(f))``,
  ``vmap(jit(f))`` and ``jet(jit(f))``, which run ``jit(jvp(f))``, ``jit(vmap(f))`` and
  ``jit(jet(f))`` one level down, and ``linearize(jit(f))``, whose tape runs ``f``'s staged
  JVP in two halves;
* a batched derivative (``vmap(grad(f))``, ``vmap(jvp(f))``, ``vmap(hessian(f))``,
  ``vmap(jet(f))``, and the triples ``vmap(jit(grad(f)))``, ``jit(vmap(grad(f)))``,
  ``vmap(grad(jit(f)))``) equals the loop over the examples, and a derivative of a batched
  function (``grad(vmap(f))``) the stacked derivatives; ``jvp(grad(jit(f)))`` equals
  ``jvp(grad(f))`` to rounding;
* ``grad`` of a jet's first term equals ``grad`` of the ``jvp`` it equals.

A transform given a jitted function itself stages the two whole (``grad(jit(f))`` runs
``jit(grad(f))``: ``traces.arguments.staged_form``), which the forms ``jit(grad)``,
``jit(jvp)``, ``jit(jet)`` and ``jit(vmap(grad))`` check; so the forms with a transform
outside ``jit`` call the jitted function from a function of the user's, as a larger function
calls it, where the transform meets the jitted call and runs its rule (the tape's staged
halves, ``process_staged``).

Where the reference raises, the composition must raise the same exception class (no
composition may turn an error into a number). ``python -m fgrad check`` runs every form on
every entry (its compositions column); ``tests/test_compositions.py`` does too.
"""
import numpy as _onp

from ..core.pytree import tree_flatten

# the forms, cheapest first; ``HEAVY`` ones (second derivatives) rotate through the table in
# the default test run (every entry under every form in the thorough profile)
FORMS = ("grad(jit)", "grad(jit) of outputs", "linearize(jit)", "jvp(jit)", "vmap(jit)",
         "jet(jit)", "grad(make_graph)", "jit(grad)",
         "jit(jvp)", "vmap(grad)", "vmap(jvp)", "grad(vmap)", "vmap(jit(grad))",
         "jit(vmap(grad))", "vmap(grad(jit))", "jvp(grad(jit))", "jit(jet)", "vmap(jet)",
         "grad(jet)", "hessian(jit)", "vmap(hessian)")
HEAVY = ("hessian(jit)", "vmap(hessian)")


class CompositionMismatch(AssertionError):
    """A composition of transforms gave another value (or another error) than its
    reference."""


def _leaves(tree):
    return [_onp.asarray(x) for x in tree_flatten(tree)[0]]


def _same(form, got, want, exact, rtol=1e-9):
    lg, lw = _leaves(got), _leaves(want)
    if len(lg) != len(lw):
        raise CompositionMismatch(f"{form}: {len(lg)} result leaves where the reference "
                                  f"gives {len(lw)}")
    for x, y in zip(lg, lw):
        if x.shape != y.shape or x.dtype != y.dtype:
            raise CompositionMismatch(f"{form}: {x.shape} {x.dtype} where the reference "
                                      f"gives {y.shape} {y.dtype}")
        if exact:
            if not _onp.array_equal(x, y, equal_nan=True):
                raise CompositionMismatch(f"{form}: not equal bit for bit to the eager "
                                          f"result (largest difference "
                                          f"{_onp.max(_onp.abs(x - y))})")
            continue
        with _onp.errstate(all="ignore"):  # (infinities and nans compare as equal_nan says)
            finite = _onp.abs(y[_onp.isfinite(y)])
            scale = max(1.0, float(_onp.max(finite, initial=0.0)))
            try:
                _onp.testing.assert_allclose(x, y, rtol=rtol, atol=rtol * scale,
                                             equal_nan=True)
            except AssertionError as e:
                raise CompositionMismatch(f"{form}: {e}") from None


def _outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # (compared with the other side's outcome)
        return None, e


def compare(form, got_fn, want_fn, exact=False):
    """Run both sides; they must give the same values (``exact``: bit for bit) or raise
    the same exception class. (numpy's floating-point warnings are the reference's as much
    as the composition's: not shown.)"""
    with _onp.errstate(all="ignore"):
        want, werr = _outcome(want_fn)
        got, gerr = _outcome(got_fn)
    if werr is not None or gerr is not None:
        if werr is None:
            raise CompositionMismatch(f"{form} raised {type(gerr).__name__}: {gerr}; the "
                                      "reference gives a value") from gerr
        if gerr is None:
            raise CompositionMismatch(f"{form} gave a value where the reference raises "
                                      f"{type(werr).__name__}: {werr}")
        if type(gerr) is not type(werr):
            raise CompositionMismatch(f"{form} raised {type(gerr).__name__}: {gerr}; the "
                                      f"reference raises {type(werr).__name__}: "
                                      f"{werr}") from gerr
        return
    _same(form, got, want, exact)


def composition_case(entry, rng, n=3):
    """What the forms run on, for one of ``entry``'s cases: ``(f, scalar, examples,
    tangents, weights)``: ``f`` the entry as a function of its differentiable arguments,
    ``scalar`` a weighted sum of its (real parts of its) outputs, ``n`` drawn argument tuples
    and a tangent tuple for each. None where the entry has no differentiable argument."""
    from . import as_function, random_case

    case = entry.spec.cases[0]
    drawn = [random_case(entry, rng, case) for _ in range(n)]
    params = drawn[0][1]
    f, xs = as_function(entry, drawn[0][0], params)
    if not xs:
        return None
    examples = [tuple(as_function(entry, args, params)[1]) for args, _ in drawn]
    tangents = [tuple(_random_like(x, rng) for x in ex) for ex in examples]
    outs = tree_flatten(f(*examples[0]))[0]
    weights = [rng.uniform(0.5, 1.5, _onp.shape(o)) for o in outs]

    return f, _weighted(f, weights), examples, tangents, weights


def _weighted(f, weights):
    """A weighted sum of the real parts of ``f``'s real and complex outputs."""
    from .. import numpy as fnp

    def scalar(*xs):
        total = 0.0
        for o, w in zip(tree_flatten(f(*xs))[0], weights):
            if _onp.asarray(_meta(o)).dtype.kind in "fc":
                total = total + fnp.sum(fnp.real(o) * w)
        return total

    return scalar


def _meta(x):
    from ..core.tracer import value_for_shape
    return value_for_shape(x)


def _random_like(x, rng):
    x = _onp.asarray(x)
    t = rng.uniform(-1.0, 1.0, x.shape)
    if x.dtype.kind == "c":
        t = t + 1j * rng.uniform(-1.0, 1.0, x.shape)
    return t.astype(x.dtype) if x.dtype.kind in "fc" else t


def form_functions(form, case):
    """``(got, want, exact)`` for one form on a case from ``composition_case``: two
    functions of no argument, and whether they must agree bit for bit."""
    from .. import grad, hessian, jit, jvp, linearize, make_graph, vmap
    from ..traces.taylor import jet
    from .. import numpy as fnp

    f, scalar, examples, tangents, weights = case
    xs, ts = examples[0], tangents[0]
    k = len(xs)
    every = tuple(range(k))

    def stack(outs):
        leaves = [tree_flatten(o)[0] for o in outs]
        return [_onp.stack([_onp.asarray(ls[i]) for ls in leaves])
                for i in range(len(leaves[0]))]

    batch = [_onp.stack([ex[i] for ex in examples]) for i in range(k)]
    batch_t = [_onp.stack([t[i] for t in tangents]) for i in range(k)]
    d_scalar = grad(scalar, argnums=every)

    def series(ts_):
        return tuple([t, _onp.zeros_like(t)] for t in ts_)

    def first_term(*xs_):  # a jet's first term, weighted as the scalar weights the outputs
        _, terms = jet(f, xs_, series(ts))
        total = 0.0
        for t, w in zip(tree_flatten(terms, is_leaf=lambda x: isinstance(x, list))[0],
                        weights):
            total = total + fnp.sum(fnp.real(t[0]) * w)
        return total

    def jvp_term(*xs_):
        _, out = jvp(f, xs_, ts)
        total = 0.0
        for o, w in zip(tree_flatten(out)[0], weights):
            total = total + fnp.sum(fnp.real(o) * w)
        return total

    def called(g):  # (g called from a function: the transform meets the jitted call)
        return lambda *a: g(*a)

    if form == "grad(jit)":
        return (lambda: grad(called(jit(scalar)), argnums=every)(*xs), lambda: d_scalar(*xs),
                False)
    if form == "grad(jit) of outputs":  # (the staged VJP's nodes for each output, traced
        # and replayed)
        d_staged = grad(_weighted(jit(f), weights), argnums=every)
        return (lambda: (d_staged(*xs), d_staged(*examples[1])),
                lambda: (d_scalar(*xs), d_scalar(*examples[1])), False)
    if form == "linearize(jit)":  # (the staged JVP's halves: the tangent half per sweep, two
        # sweeps; staged, then replayed on another example)
        def pushes(g, x_, t_):
            push = linearize(g, *x_)[1]
            return push(*t_), push(*[2 * t for t in t_])
        staged_f = jit(f)
        return (lambda: (pushes(staged_f, xs, ts), pushes(staged_f, examples[1], tangents[1])),
                lambda: (pushes(f, xs, ts), pushes(f, examples[1], tangents[1])), True)
    if form == "jvp(jit)":  # (jit(jvp(f)) one level down: traced, then replayed)
        staged_f = jit(f)
        return (lambda: (jvp(called(staged_f), xs, ts),
                         jvp(called(staged_f), examples[1], tangents[1])),
                lambda: (jvp(f, xs, ts), jvp(f, examples[1], tangents[1])), True)
    if form == "vmap(jit)":  # (jit(vmap(f)) one level down: traced, then replayed)
        staged_f, again = jit(f), [b[::-1] for b in batch]
        return (lambda: (vmap(called(staged_f))(*batch), vmap(called(staged_f))(*again)),
                lambda: (vmap(f)(*batch), vmap(f)(*again)), True)
    if form == "jet(jit)":  # (jit(jet(f)) one level down: traced, then replayed)
        staged_f = jit(f)
        return (lambda: (jet(called(staged_f), xs, series(ts)),
                         jet(called(staged_f), examples[1], series(tangents[1]))),
                lambda: (jet(f, xs, series(ts)), jet(f, examples[1], series(tangents[1]))),
                True)
    if form == "grad(make_graph)":
        return (lambda: grad(make_graph(scalar)(*xs), argnums=every)(*xs),
                lambda: d_scalar(*xs), False)
    if form == "hessian(jit)":
        return (lambda: hessian(called(jit(scalar)), argnums=every)(*xs),
                lambda: hessian(scalar, argnums=every)(*xs), False)
    if form == "jit(grad)":  # traced on one example, replayed on another
        staged = jit(d_scalar)
        return (lambda: (staged(*xs), staged(*examples[1])),
                lambda: (d_scalar(*xs), d_scalar(*examples[1])), True)
    if form == "jit(jvp)":
        def run(x_, t_):
            return jvp(f, x_, t_)
        staged = jit(run)
        return (lambda: (staged(xs, ts), staged(examples[1], tangents[1])),
                lambda: (run(xs, ts), run(examples[1], tangents[1])), True)
    if form == "jit(jet)":
        def expand(*x_):
            return jet(f, x_, series(ts))
        staged = jit(expand)
        return (lambda: (staged(*xs), staged(*examples[1])),
                lambda: (expand(*xs), expand(*examples[1])), True)
    if form == "vmap(grad)":
        return (lambda: vmap(d_scalar)(*batch),
                lambda: stack([d_scalar(*ex) for ex in examples]), False)
    if form == "vmap(jvp)":
        def jvp_of(*a):
            return jvp(f, a[:k], a[k:])
        return (lambda: vmap(jvp_of)(*batch, *batch_t),
                lambda: stack([jvp_of(*ex, *t) for ex, t in zip(examples, tangents)]), False)
    if form == "grad(vmap)":
        def total(*b):
            return fnp.sum(vmap(scalar)(*b))
        return (lambda: grad(total, argnums=every)(*batch),
                lambda: stack([d_scalar(*ex) for ex in examples]), False)
    if form == "vmap(jit(grad))":
        return (lambda: vmap(jit(d_scalar))(*batch),
                lambda: stack([d_scalar(*ex) for ex in examples]), False)
    if form == "jit(vmap(grad))":
        return (lambda: jit(vmap(d_scalar))(*batch),
                lambda: stack([d_scalar(*ex) for ex in examples]), False)
    if form == "vmap(grad(jit))":  # (the tape's staged VJP, its halves run under vmap)
        per_example = grad(called(jit(scalar)), argnums=every)
        return (lambda: (vmap(per_example)(*batch), vmap(per_example)(*batch)),
                lambda: 2 * [stack([d_scalar(*ex) for ex in examples])], False)
    if form == "jvp(grad(jit))":  # (a Hessian-vector product: the halves run under jvp)
        d_staged = grad(called(jit(scalar)), argnums=every)
        return (lambda: (jvp(d_staged, xs, ts), jvp(d_staged, examples[1], tangents[1])),
                lambda: (jvp(d_scalar, xs, ts), jvp(d_scalar, examples[1], tangents[1])),
                False)
    if form == "vmap(jet)":
        def expand_at(*a):
            return jet(f, a[:k], series(a[k:]))
        return (lambda: vmap(expand_at)(*batch, *batch_t),
                lambda: stack([expand_at(*ex, *t) for ex, t in zip(examples, tangents)]),
                False)
    if form == "grad(jet)":
        return (lambda: grad(first_term, argnums=every)(*xs),
                lambda: grad(jvp_term, argnums=every)(*xs), False)
    if form == "vmap(hessian)":
        h = hessian(scalar, argnums=every)
        return (lambda: vmap(h)(*batch), lambda: stack([h(*ex) for ex in examples]), False)
    raise ValueError(f"no such form: {form!r} (one of {', '.join(FORMS)})")


def check_compositions(entry, rng, forms=FORMS):
    """Check ``entry`` (a table entry with a ``Spec``) under each of ``forms``; returns
    ``{form: None or the failure message}``, or None where the entry has no differentiable
    argument.

    >>> import numpy, fgrad.numpy
    >>> from fgrad.core.table import PRIMITIVES
    >>> check_compositions(PRIMITIVES["sin"], numpy.random.default_rng(0),
    ...                    forms=("grad(jit)", "vmap(grad)"))
    {'grad(jit)': None, 'vmap(grad)': None}
    """
    case = composition_case(entry, rng)
    if case is None:
        return None
    result = {}
    for form in forms:
        got, want, exact = form_functions(form, case)
        try:  # (an entry whose numpy function differs between calls is held to 1e-9)
            compare(form, got, want, exact and entry.spec.exact)
            result[form] = None
        except CompositionMismatch as e:
            result[form] = str(e)
    return result
