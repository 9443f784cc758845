"""Whether a function may still read a local variable: a conservative liveness analysis of
its bytecode, from the instruction its frame is at.

``fgrad.numpy.views`` asks it before refusing an augmented assignment that writes through
another name: a name the function never reads again (a caller's temporary, rebound before it
is read) cannot tell numpy's in-place write from fgrad's new array. The answer errs towards
"may read": every path from the next instruction is followed (jumps, loops' back edges and
exception handlers), a path ends only where the name is stored or deleted, and a name held
by a closure cell, a function that calls ``locals()``, ``vars()``, ``eval()`` or ``exec()``,
code outside a function, or a Python whose bytecode it does not know (before 3.11, whose
exception handling is not a table) counts as read.
"""
import bisect
import dis
import sys

__all__ = ["may_read"]

_UNCONDITIONAL = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP",
                  "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_NO_INTERRUPT"}
_TERMINAL = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}
_INTROSPECTION = {"locals", "vars", "eval", "exec"}
_JUMPS = set(dis.hasjrel) | set(dis.hasjabs)
_CACHE = {}


def may_read(frame, name):
    """Whether the function running in ``frame`` may read its local ``name`` after the
    instruction it is at (True whenever that cannot be told)."""
    code = frame.f_code
    if sys.version_info < (3, 11) or not code.co_flags & 0x1 or name in code.co_cellvars or \
            name in code.co_freevars or _INTROSPECTION & set(code.co_names):
        return True  # (0x1: CO_OPTIMIZED, a function's fast locals)
    flow = _CACHE.get(code)
    if flow is None:
        flow = _CACHE[code] = _Flow(code)
    return flow.may_read(frame.f_lasti, name)


class _Flow:
    """The instructions of a code object and each one's successors."""

    def __init__(self, code):
        self.ins = list(dis.get_instructions(code))
        where = {ins.offset: k for k, ins in enumerate(self.ins)}
        handlers = [(e.start, e.end, e.target) for e in dis.Bytecode(code).exception_entries]

        def index(offset):  # (a target between instructions: the next one)
            return where.get(offset, next((k for k, i in enumerate(self.ins)
                                           if i.offset >= offset), len(self.ins)))

        self.next = []
        for k, ins in enumerate(self.ins):
            succ = []
            if ins.opname not in _UNCONDITIONAL and ins.opname not in _TERMINAL:
                succ.append(k + 1)
            if ins.opcode in _JUMPS and isinstance(ins.argval, int):
                succ.append(index(ins.argval))
            succ += [index(t) for s, e, t in handlers if s <= ins.offset < e]
            self.next.append([j for j in succ if j < len(self.ins)])
        self.offsets = [ins.offset for ins in self.ins]

    def may_read(self, lasti, name):
        # (a frame in a call is at the call's inline caches, after the instruction itself)
        start = bisect.bisect_right(self.offsets, lasti) - 1
        if start < 0:
            return True
        todo, seen = list(self.next[start]), set()
        while todo:
            k = todo.pop()
            if k in seen:
                continue
            seen.add(k)
            ins = self.ins[k]
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            if name in names:
                if "LOAD" in ins.opname:
                    return True
                if ins.opname.startswith(("STORE", "DELETE")):
                    continue  # (this path rebinds it first)
            todo.extend(self.next[k])
        return False
