"""``fgrad.numpy.lib.stride_tricks``: ``sliding_window_view`` on traced values is a gather
(``fgrad.numpy.indexing``; numpy's own called on a traced value comes here too, by
``__array_function__``); ``as_strided`` addresses memory, which a traced value does not have,
and refuses it with the way round."""
import numpy as _onp

from ..indexing import sliding_window_view  # noqa: F401
from ..namespace import mirror

mirror(_onp.lib.stride_tricks, globals(), "lib.stride_tricks.")
