"""``autograd.builtins``: autograd boxes tuples, lists and dicts of traced values, and gives
``isinstance``, ``type``, ``tuple``, ``list`` and ``dict`` that see through its boxes. fgrad
takes containers as pytrees and never boxes one, so these are Python's own, and
``SequenceBox``/``DictBox`` are classes no value of fgrad's is an instance of (what a
library's ``isinstance(x, DictBox)`` test means: not a traced container)."""
import builtins as _builtins

__all__ = ["isinstance", "type", "tuple", "list", "dict", "SequenceBox", "DictBox"]

isinstance = _builtins.isinstance
type = _builtins.type
tuple = _builtins.tuple
list = _builtins.list
dict = _builtins.dict


class SequenceBox:
    """autograd's box of a traced tuple or list (fgrad has none: see the module's text)."""


class DictBox:
    """autograd's box of a traced dict (fgrad has none: see the module's text)."""
