"""Dask arrays through every transform: results are Dask arrays, lazy (the tests run under a
scheduler that fails on any computation), equal to the numpy results; the generated rule
tests over every primitive Dask supports; a gradient over a data set larger than a worker's
memory limit on a LocalCluster."""
import warnings

import numpy as onp
import pytest
from hypothesis import given, settings, strategies as st

dask = pytest.importorskip("dask", reason="the Dask tests need the dask extra (pip install "
                                          "-e '.[dask]'; the test extra has it)")
da = pytest.importorskip("dask.array", reason="the Dask tests need dask.array")

import fgrad  # noqa: E402
from fgrad import NotInLibraryError  # noqa: E402
import fgrad.numpy as np  # noqa: E402
from fgrad.core.pytree import tree_flatten, tree_unflatten  # noqa: E402
from fgrad.core.table import PRIMITIVES  # noqa: E402
from fgrad.testing import as_function, random_case  # noqa: E402
from fgrad.testing.strategies import primitive_cases  # noqa: E402
from transform_cases import TRANSFORMS, X, f  # noqa: E402

try:  # fgrad.scipy's entries too, where scipy is installed
    import fgrad.scipy  # noqa: F401,E402
except ImportError:  # pragma: no cover
    pass


class Computed(AssertionError):
    pass


def _refuse(dsk, keys, **kwargs):
    raise Computed("a Dask array was computed")


def lazy():
    """Within it, computing any Dask array fails the test."""
    return dask.config.set(scheduler=_refuse)


def chunked(x):
    """``x`` as a Dask array with two chunks along each axis (a 0-d array stays numpy)."""
    x = onp.asarray(x)
    if x.ndim == 0:
        return x
    return da.from_array(x, chunks=tuple(max(1, (n + 1) // 2) for n in x.shape))


def computed(tree):
    return [onp.asarray(v.compute() if hasattr(v, "compute") else v)
            for v in tree_flatten(tree)[0]]


def same(got, want, rtol=1e-10, atol=1e-12):
    g, w = computed(got), computed(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        onp.testing.assert_allclose(a, b, rtol=rtol, atol=atol)




@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_every_transform_gives_lazy_dask_arrays_equal_to_numpys(name):
    with lazy():
        got = TRANSFORMS[name](chunked(X))
    assert all(isinstance(v, da.Array) for v in tree_flatten(got)[0]), got
    same(got, TRANSFORMS[name](X))


def test_python_control_flow_on_a_dask_value_computes_it_and_works():
    def h(x):
        if np.sum(x) > 100:  # (a Dask bool: Python computes it, as Dask itself does)
            return np.sum(x ** 3)
        return np.sum(np.cos(x))

    got = fgrad.grad(h)(chunked(X))
    same(got, -onp.sin(X))


def test_a_closed_over_dask_array_and_a_numpy_input():
    data = chunked(X)
    got = fgrad.grad(lambda w: np.sum((data * w - 1.0) ** 2))(0.5)
    same(got, onp.sum(2 * (X * 0.5 - 1.0) * X))


def test_a_function_without_counterpart_in_dask_names_itself_and_the_type():
    a = chunked(onp.eye(4) + 0.1)
    with lazy(), pytest.raises(NotInLibraryError,
                               match=r"fgrad\.numpy\.linalg\.det on a dask\.array\.core\.Array"):
        fgrad.grad(np.linalg.det)(a)


def test_scipys_functions_are_refused_on_dask_arrays_before_computing():
    stats = pytest.importorskip("fgrad.scipy.stats", reason="needs scipy")
    with lazy(), pytest.raises(NotInLibraryError, match=r"fgrad\.scipy\.stats\.norm\.logpdf on a "
                                                        r"dask\.array\.core\.Array"):
        fgrad.grad(lambda x: np.sum(stats.norm.logpdf(x)))(chunked(X))


def test_jit_replays_its_graph_on_dask_arrays_lazily_and_keeps_numpys_apart():
    jg = fgrad.jit(fgrad.grad(f))
    with lazy():
        first, second = jg(chunked(X)), jg(chunked(2 * X))  # (traced once, replayed once)
    assert len(jg.cache) == 1 and isinstance(second, da.Array)
    same(first, fgrad.grad(f)(X))
    same(second, fgrad.grad(f)(2 * X))
    assert type(jg(X)) is onp.ndarray and len(jg.cache) == 2  # (numpy's graph of its own)


def test_jit_refuses_a_function_dask_lacks_before_computing():
    a = chunked(onp.eye(4) + 0.1)
    with lazy(), pytest.raises(NotInLibraryError, match=r"fgrad\.numpy\.linalg\.det"):
        fgrad.jit(fgrad.grad(np.linalg.det))(a)


def test_numpy_inputs_still_give_numpy_values():
    assert type(fgrad.grad(f)(X)) is onp.ndarray
    assert type(np.asarray(chunked(X))) is da.Array  # (asarray keeps another library's array)


# --- the generated rule tests, on Dask arrays --------------------------------------------

# Primitives whose derivative cannot run on Dask arrays (in some or all of their cases), each
# with the reason: they raise an error there, and never compute silently (checked below).
DASK_LACKS = {
    # numpy functions Dask does not implement: fgrad's NotInLibraryError names them
    **dict.fromkeys(["convolve", "correlate", "cross", "gather", "inner", "kron", "roots",
                     "linalg.det", "linalg.cofactors",
                     "linalg.eig", "linalg.eigh", "linalg.eigvals",
                     "linalg.eigvalsh", "linalg.pinv", "linalg.slogdet", "linalg.cholesky",
                     "linalg.qr", "linalg.svdvals"],
                    "no counterpart in dask (NotInLibraryError)"),
    # Dask's own restrictions, in Dask's words
    **dict.fromkeys(["fft.fft", "fft.ifft", "fft.hfft", "fft.ihfft", "fft.rfft", "fft.irfft",
                     "fft.fftn", "fft.ifftn", "fft.rfftn", "fft.irfftn"],
                    "Dask's FFT needs one chunk along the transformed axis"),
    **dict.fromkeys(["vecdot", "vecmat", "matvec"],
                    "Dask's gufuncs need one chunk along the core dimension"),
    **dict.fromkeys(["linalg.inv", "linalg.solve", "linalg.svd"],
                    "Dask's linalg takes 2-D arrays only (these cases are batched)"),
    "dot": "Dask's dot of a 0-d and an n-d array fails (IndexError)",
    "take": "Dask's take takes 1-d indices only (a 2-d index array fails inside Dask)",
    "getitem": "Dask has no n-d fancy indexing",
    "index_set": "Dask's setitem takes no integer array of indices with repeats",
    **dict.fromkeys(["scatter_add", "add_at", "minimum_at", "maximum_at", "index_add",
                     "index_min", "index_max"],
                    "Dask has no ufunc.at (NotInLibraryError)"),
    "diagonal": "its VJP scatters by ufunc.at, which Dask lacks",
}

# Cases (parameters) that Dask does not take, of primitives it otherwise does
DASK_LACKS_CASE = {"reshape": ({"order": "F"}, "Dask's reshape takes no order"),
                   "ravel": ({"order": "F"}, "Dask's ravel takes no order")}

# Primitives whose derivative runs on Dask arrays but computes values on the way, each with
# the reason: the results are right, and not lazy
DASK_COMPUTES = {
    **dict.fromkeys(["i0", "bessel_i"], "the series stops where the terms are small: Python "
                                        "reads their values"),
    "scipy.special.psi": "its derivative, scipy.special.polygamma, is Python code of scipy's "
                         "that converts its argument to numpy",
}

ENTRIES = sorted(n for n, p in PRIMITIVES.items()
                 if p.spec is not None and p.other_arrays)


def _dask_case(prim, case, seed):
    """The primitive as a function of its differentiable arguments, those arguments, random
    output cotangents (with the output's structure) and input tangents."""
    args, params = case
    rng = onp.random.default_rng(seed)
    fn, xs = as_function(prim, args, params)
    lacking = DASK_LACKS_CASE.get(prim.name, ({None: 0},))[0]
    fn.lacking = all(params.get(k, object()) == v for k, v in lacking.items())
    xs = tuple(onp.asarray(x, float) if onp.isrealobj(x) else onp.asarray(x) for x in xs)
    out_leaves, out_tree = tree_flatten(fn(*xs))
    cts = [rng.standard_normal(onp.shape(v)) for v in out_leaves]
    ts = [rng.standard_normal(onp.shape(x)) for x in xs]
    return fn, xs, cts, out_tree, ts


_REFUSALS = (NotInLibraryError, ValueError, IndexError, TypeError, NotImplementedError)


@pytest.mark.parametrize("name", ENTRIES)
def test_every_primitive_on_dask_arrays_matches_numpy(name):
    """VJP and JVP of each primitive on chunked Dask arrays, computed nowhere until the end,
    against the same on numpy arrays (hypothesis draws the case, a seed the directions). A
    primitive listed in DASK_LACKS may raise instead (for some of its cases): it must never
    compute, never differ."""
    prim = PRIMITIVES[name]

    # (two draws in the ci profile: each builds and computes Dask graphs, 0.1 s a draw)
    @settings(max_examples=max(2, settings().max_examples // 15), deadline=None)
    @given(primitive_cases(prim), st.integers(0, 2**31))
    def check(case, seed):
        fn, xs, cts, out_tree, ts = _dask_case(prim, case, seed)
        dxs = tuple(chunked(x) for x in xs)
        try:
            with lazy() if name not in DASK_COMPUTES else dask.config.set(scheduler="sync"):
                got_vjp = fgrad.vjp(fn, *dxs)[1](tree_unflatten(out_tree,
                                                                [chunked(c) for c in cts]))
                got_jvp = fgrad.jvp(fn, dxs, tuple(chunked(t) for t in ts))[1]
        except _REFUSALS:
            if name in DASK_LACKS or fn.lacking:
                return
            raise
        same(got_vjp, fgrad.vjp(fn, *xs)[1](tree_unflatten(out_tree, cts)), rtol=1e-9)
        same(got_jvp, fgrad.jvp(fn, xs, tuple(ts))[1], rtol=1e-9)

    check()


@pytest.mark.parametrize("name", sorted(DASK_COMPUTES))
def test_the_primitives_listed_as_computing_do_compute(name):
    prim = PRIMITIVES[name]
    fn, xs, cts, out_tree, ts = _dask_case(prim, random_case(prim, onp.random.default_rng(0)),
                                           0)
    with lazy(), pytest.raises(Computed):
        fgrad.vjp(fn, *(chunked(x) for x in xs))[1](
            tree_unflatten(out_tree, [chunked(c) for c in cts]))


def test_every_scipy_primitive_but_the_ufuncs_is_refused_on_dask():
    refused = sorted(n for n, p in PRIMITIVES.items() if not p.other_arrays)
    assert all(n.startswith("scipy.") for n in refused)
    kept = [n for n, p in PRIMITIVES.items() if n.startswith("scipy.") and p.other_arrays]
    # (scipy's softplus is numpy's logaddexp(0, x), which dispatches as a ufunc does)
    assert all(isinstance(PRIMITIVES[n].impl, onp.ufunc) for n in kept
               if n != "scipy.special.softplus")
    y = fgrad.grad(lambda v: np.sum(fgrad.scipy.special.softplus(v)))(chunked(onp.arange(6.0)))
    onp.testing.assert_allclose(y.compute(), 1 / (1 + onp.exp(-onp.arange(6.0))))


def test_an_index_update_leaves_the_dask_array_it_updates_as_it_was():
    # Dask's setitem replaces the updated object's graph, and its astype to the same dtype is
    # the object itself: an update must work on a copy (else a VJP read zeros: issue 19)
    base = onp.arange(6.0).reshape(2, 3)
    g = chunked(base)
    y = np.index_set(g, 0.0, (slice(None), 1))
    onp.testing.assert_array_equal(g.compute(), base)
    onp.testing.assert_array_equal(y.compute(), onp.where(onp.arange(3) == 1, 0.0, base))
    _, pull = fgrad.vjp(lambda x, v: np.index_set(x, v, (slice(None), 1)), g, onp.float64(0.5))
    onp.testing.assert_allclose(pull(g)[1].compute(), base[:, 1].sum())


def test_a_gradient_over_data_larger_than_a_workers_memory_limit():
    """On a LocalCluster whose workers each have 300 MB, a 320 MB data set (made lazily, chunk
    by chunk): fgrad's gradient equals the hand-written one computed by Dask itself."""
    distributed = pytest.importorskip("dask.distributed",
                                      reason="needs dask[distributed] (the dask extra)")
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "dask_regression.py"
    spec = importlib.util.spec_from_file_location("dask_regression", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    X, y, _ = example.data(2_500_000, 16, 125_000)
    assert X.nbytes > 300e6
    w = onp.linspace(0.2, -0.2, 16)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="300MB",
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        value, grad = fgrad.value_and_grad(example.loss)(w, X, y)
        assert isinstance(grad, da.Array)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value, grad, hand, plain = dask.compute(value, grad,
                                                    example.hand_gradient(w, X, y),
                                                    example.loss(w, X, y))
    # (no array of the data's size made by numpy and shipped inside the graph: grad's seed
    # is made in Dask, so the mean's cotangent is spread there)
    assert not [w for w in caught if "large graph" in str(w.message)], caught
    onp.testing.assert_allclose(grad, hand, rtol=1e-10, atol=1e-15)
    onp.testing.assert_allclose(value, plain, rtol=1e-12)


def test_a_users_primitive_that_converts_to_numpy_can_be_refused_by_name():
    double = fgrad.primitive(lambda x: onp.asarray(x) * 2.0)
    fgrad.defvjp(double, lambda g, ans, x: 2.0 * g)
    double.other_arrays = False
    with lazy(), pytest.raises(NotInLibraryError, match=r"^<lambda> on a dask\.array\.core"
                                                        r"\.Array: dask has no counterpart "
                                                        r"\(its implementation converts"):
        fgrad.grad(lambda x: np.sum(double(x)))(chunked(X))
