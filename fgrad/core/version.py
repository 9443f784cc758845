"""fgrad's version, read by the package's metadata (``pyproject.toml``) and by what keys
caches on it (``fgrad.traces.codecache``)."""
__version__ = "0.1.0"
