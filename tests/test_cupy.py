"""CuPy arrays through the transforms: results stay on the GPU (CuPy arrays, a 0-d result a
0-d CuPy array), equal to the numpy results. Skipped where CuPy or a GPU is absent (CI has
neither); run them on a machine with one: pip install -e ".[test,cupy]" && pytest
tests/test_cupy.py."""
import numpy as onp
import pytest

cp = pytest.importorskip("cupy", reason="CuPy is not installed (the cupy extra; needs a GPU)")
try:
    _GPUS = cp.cuda.runtime.getDeviceCount()
except Exception:  # (CuPy installed, no driver or device)
    _GPUS = 0
if not _GPUS:
    pytest.skip("CuPy has no GPU to run on here", allow_module_level=True)

import fgrad  # noqa: E402
import fgrad.numpy as np  # noqa: E402
from fgrad.core.pytree import tree_flatten  # noqa: E402
from transform_cases import TRANSFORMS, X  # noqa: E402



@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_every_transform_keeps_cupy_arrays_on_the_gpu(name):
    got = TRANSFORMS[name](cp.asarray(X))
    want = TRANSFORMS[name](X)
    for a, b in zip(tree_flatten(got)[0], tree_flatten(want)[0]):
        assert isinstance(a, cp.ndarray), type(a)
        onp.testing.assert_allclose(cp.asnumpy(a), b, rtol=1e-10, atol=1e-12)


def test_a_cupy_input_is_copied_against_mutation():
    x = cp.asarray(X)
    _, pull = fgrad.vjp(lambda v: np.sum(v * v), x)
    x[:] = 0.0  # (the caller writes into its array before the pullback runs)
    onp.testing.assert_allclose(cp.asnumpy(pull(1.0)[0]), 2 * X)
