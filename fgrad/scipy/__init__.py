"""``import fgrad.scipy``: scipy, with derivatives (needs scipy: ``pip install fgrad[scipy]``).

``fgrad.scipy.special``, ``stats``, ``linalg``, ``signal``, ``integrate``, ``optimize``,
``interpolate`` and ``spatial.distance`` mirror scipy's names as ``fgrad.numpy`` mirrors
numpy's: plain values in, scipy's own result out (the primitives' implementations *are*
scipy's functions); traced values in, VJP and JVP rules from the same primitive table as
numpy's, checked by the same generated tests and by ``python -m fgrad check``. ``import
fgrad`` never imports scipy.
"""
try:
    import scipy as _scipy  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised in a subprocess with scipy hidden
    raise ImportError(
        "fgrad.scipy needs scipy, which is not installed. Install the extra: "
        "pip install 'fgrad[scipy]' (or pip install scipy).") from e

from . import (special, stats, linalg, signal, integrate, optimize, spatial,  # noqa: E402,F401
               interpolate)
