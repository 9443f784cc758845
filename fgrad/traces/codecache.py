"""Compiled graph code, kept by its source text: in memory for this process, and on disk for
the next one.

A graph's generated code (``graph.compile_graph``) depends only on the graph's structure: its
constants, functions and parameters are names the code looks up in a namespace made per
graph. So two graphs of one structure (a second signature of a ``jit`` function, the same
function in a second process) share one code object, and compiling it (about 60 ms of a
3400-line RNN gradient, against 1 ms to load it) is done once.

The disk cache lives in ``$FGRAD_CACHE_DIR``, else the user's cache directory
(``$XDG_CACHE_HOME/fgrad`` or ``~/.cache/fgrad`` on Linux, ``~/Library/Caches/fgrad`` on
macOS, ``%LOCALAPPDATA%\\fgrad\\Cache`` on Windows), in ``graphs/``; ``FGRAD_CACHE=0`` turns
it off, and deleting the folder clears it (``clear_disk_cache()``). An entry is the source's
code object (``marshal``) behind a header: the entry's key (a hash of the source text,
CPython's bytecode magic number and fgrad's version) and a hash of the payload. An entry
whose header does not match (stale, written by another Python or fgrad, or corrupt) is
compiled again and rewritten; a writer writes a private file and renames it into place, so
concurrent writers and readers see a whole entry or none. A cache that cannot be read or
written is no error: the code is compiled, as without it.
"""
import marshal
import os
import sys
import _thread
import types

from ..core.version import __version__

# (hashlib, tempfile, shutil and importlib.util are imported where used: together they were
# 14 ms of ``import fgrad.numpy``'s 230, which no program that stages nothing should pay)

_FORMAT = b"fgrad-graph-code 1\n"
_MEMORY_ENTRIES = 64  # (code and source kept in memory: a 3400-line graph's are about 400 KB)
_memory = {}
_lock = _thread.allocate_lock()

#: How the code of each compiled graph was found (for tests and benchmarks).
stats = {"memory": 0, "disk": 0, "compiled": 0}


def cache_dir():
    """The folder of the disk cache, or None where it is turned off (``FGRAD_CACHE=0``)."""
    if os.environ.get("FGRAD_CACHE", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    root = os.environ.get("FGRAD_CACHE_DIR")
    if not root:
        if sys.platform == "win32":
            base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
            root = os.path.join(base, "fgrad", "Cache")
        elif sys.platform == "darwin":
            root = os.path.expanduser("~/Library/Caches/fgrad")
        else:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
            root = os.path.join(base, "fgrad")
    return os.path.join(root, "graphs")


def clear_disk_cache():
    """Delete the disk cache's entries (the code is compiled again when next needed)."""
    import shutil
    where = cache_dir()
    if where is not None:
        shutil.rmtree(where, ignore_errors=True)


def code_for(src, filename):
    """The code object of ``src`` (a module defining the graph's ``run``), named
    ``filename`` in tracebacks: from memory, from disk, or compiled (and then stored)."""
    code = _memory.get(src)
    if code is not None:
        stats["memory"] += 1
    else:
        key = _key(src)
        code = _read(key)
        if code is not None:
            stats["disk"] += 1
        else:
            code = compile(src, filename, "exec")
            stats["compiled"] += 1
            _write(key, code)
        with _lock:
            if len(_memory) >= _MEMORY_ENTRIES:
                _memory.pop(next(iter(_memory)))
            _memory[src] = code
    return code if code.co_filename == filename else _renamed(code, filename)


def _renamed(code, filename):
    """``code`` and the code objects in it (the graph's ``run``) named ``filename``, as
    tracebacks through a replay show it."""
    consts = tuple([_renamed(c, filename) if isinstance(c, types.CodeType) else c
                    for c in code.co_consts])
    return code.replace(co_filename=filename, co_consts=consts)


def _key(src):
    import hashlib
    import importlib.util
    h = hashlib.sha256(importlib.util.MAGIC_NUMBER)
    h.update(__version__.encode())
    h.update(b"\0")
    h.update(src.encode())
    return h.hexdigest()


def _path(key):
    where = cache_dir()
    return None if where is None else os.path.join(where, key[:2], key[2:] + ".code")


def _read(key):
    """The entry's code object, or None (absent, turned off, stale or corrupt)."""
    path = _path(key)
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    import hashlib
    head = len(_FORMAT) + 64 + 64
    if len(data) <= head or not data.startswith(_FORMAT):
        return None
    stored_key = data[len(_FORMAT):len(_FORMAT) + 64].decode("ascii", "replace")
    digest = data[len(_FORMAT) + 64:head].decode("ascii", "replace")
    payload = data[head:]
    if stored_key != key or hashlib.sha256(payload).hexdigest() != digest:
        return None
    try:
        code = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) else None


def _write(key, code):
    path = _path(key)
    if path is None:
        return
    import hashlib
    import tempfile
    payload = marshal.dumps(code)
    data = _FORMAT + key.encode() + hashlib.sha256(payload).hexdigest().encode() + payload
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)  # (atomic: a reader sees the old entry or this one)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:  # (a read-only or full disk: the code is compiled next time too)
        pass
