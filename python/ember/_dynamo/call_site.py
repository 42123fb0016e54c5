"""The argument types of the builtin call a user frame is making, read from its bytecode.

A profile hook's ``c_call`` event names the builtin (``print``) but not its arguments, which
sit on the frame's value stack where Python code cannot read them. torch's break reason names
their types (``print`` with argument types ['str', 'Tensor']). The call's instruction
(``frame.f_lasti``) and the instructions before it say how each argument was pushed: a constant,
a local, a global or a cell is read from the frame; an f-string or a literal list / tuple / dict
has its type; anything else (a call, an attribute, arithmetic) is not modelled and the types
stay unknown (None)."""

import builtins
import dis

__all__ = ["argument_types"]

_LOADS = frozenset({"LOAD_CONST", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_GLOBAL"})
_BUILT = {
    "BUILD_STRING": "str",
    "FORMAT_VALUE": "str",
    "BUILD_LIST": "list",
    "BUILD_TUPLE": "tuple",
    "BUILD_MAP": "dict",
    "BUILD_SET": "set",
}


def _value(frame, ins):
    if ins.opname == "LOAD_CONST":
        return ins.argval
    if ins.opname == "LOAD_GLOBAL":
        name = ins.argval
        return frame.f_globals[name] if name in frame.f_globals else getattr(builtins, name)
    return frame.f_locals[ins.argval]


def _argument_type(frame, span):
    """The type name of the value one argument's instructions push, or None."""
    last = span[-1]
    if last.opname in _BUILT:
        return _BUILT[last.opname]
    if len(span) != 1 or last.opname not in _LOADS:
        return None
    if last.opname == "LOAD_GLOBAL" and last.arg & 1:  # pushes NULL too: not one value
        return None
    try:
        return type(_value(frame, last)).__name__
    except (KeyError, AttributeError):
        return None


def argument_types(frame):
    """(positional argument type names, has keyword arguments, the callee's name where a global
    or builtin name pushed it, else None) of the call ``frame`` is making at its current
    instruction; None where the bytecode is not one this reads."""
    instrs = list(dis.get_instructions(frame.f_code))
    at = next((k for k, i in enumerate(instrs) if i.offset == frame.f_lasti), None)
    if at is None or instrs[at].opname != "CALL":
        return None
    nargs, j, kwnames = instrs[at].arg, at - 1, ()
    if j >= 0 and instrs[j].opname == "PRECALL":
        j -= 1
    if j >= 0 and instrs[j].opname == "KW_NAMES":
        kwnames = frame.f_code.co_consts[instrs[j].arg]
        j -= 1
    types = []
    for _ in range(nargs):  # each argument: the instructions pushing exactly one value
        depth, end = 0, j
        while j >= 0:
            ins = instrs[j]
            if "JUMP" in ins.opname or ins.is_jump_target:
                return None
            depth += dis.stack_effect(
                ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
            )
            j -= 1
            if depth == 1:
                break
            if depth > 1:
                return None
        else:
            return None
        types.append(_argument_type(frame, instrs[j + 1 : end + 1]))
    types.reverse()
    positional = types[: nargs - len(kwnames)]
    if None in positional:
        return None
    callee = instrs[j] if j >= 0 else None
    name = callee.argval if callee is not None and callee.opname == "LOAD_GLOBAL" else None
    return positional, bool(kwnames), name
