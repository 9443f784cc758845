"""fgrad's version (the one in ``pyproject.toml``, as a test checks), here for what keys
caches on it (``fgrad.traces.codecache``) without importing the package's top."""
__version__ = "0.1.0"
