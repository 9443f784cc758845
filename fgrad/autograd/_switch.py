"""``fgrad.autograd.install()``: ``import autograd`` and its submodules, in code imported after
the call, resolve to fgrad, so a library written for autograd runs on fgrad unchanged.

A finder at the front of ``sys.meta_path`` answers every module name ``autograd`` or
``autograd.<...>`` with a module that mirrors an fgrad object: ``fgrad.autograd``'s module of
that name where it has one (``autograd.numpy``, ``autograd.extend``,
``autograd.misc.optimizers``, ...), else the fgrad object of that place
(``autograd.scipy.stats`` mirrors ``fgrad.scipy.stats``; ``autograd.scipy.stats.norm`` the
object ``fgrad.scipy.stats.norm``, which autograd has as a module). A mirror is a module of its
own holding the object's attributes, so that the import system, which sets a module's spec and
binds a submodule on its parent, never changes a module of fgrad's.
"""
import importlib
import importlib.machinery
import sys
import types

# autograd's module prefixes that are fgrad modules of another place, longest first
_PLACES = (("autograd.scipy.signal", "fgrad.autograd.scipy_signal"),
           ("autograd.scipy", "fgrad.scipy"), ("autograd.numpy.linalg", "fgrad.numpy.linalg"),
           ("autograd.numpy.fft", "fgrad.numpy.fft"),
           ("autograd.numpy.random", "fgrad.numpy.random"), ("autograd", "fgrad.autograd"))


def _target(name):
    """The fgrad module or object standing for autograd's module ``name`` (None: none)."""
    for prefix, place in _PLACES:
        if name == prefix or name.startswith(prefix + "."):
            where = place + name[len(prefix):]
            break
    else:
        return None
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as e:
        if e.name != where:  # (a module that exists and fails to import: say so)
            raise
    parent, _, attr = where.rpartition(".")
    owner = _target_of_place(parent)
    return getattr(owner, attr, None)


def _target_of_place(where):
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError:
        parent, _, attr = where.rpartition(".")
        return getattr(_target_of_place(parent), attr, None)


class _Mirror(types.ModuleType):
    """A module whose attributes are an fgrad object's (a module of another place, or an
    object that autograd has as a module)."""

    def __init__(self, name, target):
        super().__init__(name, getattr(target, "__doc__", None))
        names = getattr(target, "__all__", None) or [n for n in dir(target)
                                                     if not n.startswith("_")]
        # the names copied (a lookup in the mirror is a dict's), the rest looked up on demand
        self.__dict__.update({n: getattr(target, n) for n in dir(target)
                              if not n.startswith("__") and hasattr(target, n)})
        self.__dict__["_fgrad_target"] = target
        self.__dict__["__all__"] = list(names)

    def __getattr__(self, attr):
        if attr == "__path__":  # (the target's would have the import system load its files
            raise AttributeError(attr)  # again under the mirror's name: a package's is its own)
        return getattr(self.__dict__["_fgrad_target"], attr)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(dir(self.__dict__["_fgrad_target"])))


# (the loader and the finder are the import system's protocols, not subclasses of
# importlib.abc's classes: importing that module was 6 ms of ``import fgrad``'s start)
class _Loader:
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return _Mirror(spec.name, self.target)

    def exec_module(self, module):
        pass


def _spec(name, autograd_name):
    """The spec of a module ``name`` mirroring what stands for autograd's ``autograd_name``."""
    found = _target(autograd_name)
    if found is None:
        return None  # (import raises ModuleNotFoundError, naming it)
    # (a mirror may have submodules: autograd.scipy.stats.norm of fgrad.scipy.stats)
    own = isinstance(found, types.ModuleType) and found.__name__.startswith("fgrad.autograd")
    is_package = hasattr(found, "__path__") if own else True
    return importlib.machinery.ModuleSpec(name, _Loader(found), is_package=is_package)


class AutogradFinder:
    """Answers ``autograd`` and ``autograd.<...>`` with fgrad (see the module's text)."""

    def find_spec(self, name, path=None, target=None):
        if name != "autograd" and not name.startswith("autograd."):
            return None
        return _spec(name, name)


class OwnNamesFinder:
    """Answers ``fgrad.autograd.<...>`` for autograd's modules that are fgrad's of another
    place (``fgrad.autograd.numpy.random``, ``fgrad.autograd.scipy.stats.norm``), so that code
    moved by renaming ``autograd`` to ``fgrad.autograd`` in its imports finds every module.
    Last on ``sys.meta_path`` (from ``import fgrad.autograd`` on): fgrad's files come first,
    and it answers no other name."""

    def find_spec(self, name, path=None, target=None):
        if not name.startswith("fgrad.autograd."):
            return None
        alias = name[len("fgrad."):]
        for prefix, place in _PLACES:
            if place != "fgrad.autograd" and (alias == prefix or alias.startswith(prefix + ".")):
                return _spec(name, alias)
        return None


def install() -> None:
    """Make ``import autograd`` (and ``autograd.numpy``, ``autograd.scipy.*``,
    ``autograd.extend``, ``autograd.builtins``, ``autograd.misc.*``,
    ``autograd.differential_operators``, ``autograd.numpy.numpy_boxes``,
    ``autograd.numpy.numpy_vjps``, ``autograd.numpy.numpy_wrapper``,
    ``autograd.test_util``) give fgrad's, in every module imported after the call: one line
    in a library's ``conftest.py`` runs its test suite on fgrad. Calling it again does
    nothing. Raises ``RuntimeError`` if the real autograd was imported already (its functions
    would be mixed with fgrad's).

    >>> import fgrad.autograd
    >>> fgrad.autograd.install()
    >>> import autograd.numpy as anp
    >>> from autograd import grad
    >>> float(grad(lambda x: anp.sin(x) ** 2)(0.5)) == float(2 * anp.sin(0.5) * anp.cos(0.5))
    True
    >>> fgrad.autograd.uninstall()
    """
    if any(isinstance(f, AutogradFinder) for f in sys.meta_path):
        return
    real = [n for n, m in sys.modules.items()
            if (n == "autograd" or n.startswith("autograd.")) and m is not None
            and not isinstance(m, _Mirror)]
    if real:
        where = getattr(sys.modules[real[0]], "__file__", None) or "?"
        raise RuntimeError(
            f"fgrad.autograd.install(): the real autograd was imported already ({real[0]} "
            f"from {where}), so code using it would mix autograd's boxes with fgrad's tracers. "
            "Call install() before anything imports autograd: first thing in conftest.py or "
            "at the top of the program.")
    sys.meta_path.insert(0, AutogradFinder())


def own_names() -> None:
    """Put ``OwnNamesFinder`` last on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, OwnNamesFinder) for f in sys.meta_path):
        sys.meta_path.append(OwnNamesFinder())


def uninstall() -> None:
    """Undo :func:`install`: the finder goes, and the ``autograd`` modules it gave are
    forgotten (modules that imported them keep what they have)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, AutogradFinder)]
    for n in [n for n in sys.modules if n == "autograd" or n.startswith("autograd.")]:
        if isinstance(sys.modules[n], _Mirror):
            del sys.modules[n]
