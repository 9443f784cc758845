"""The core: tracers and their dispatch, the primitive table, values, errors, pytrees, other libraries' arrays."""
