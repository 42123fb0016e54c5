"""fullgraph errors for a tensor's truth value, as torch 2.13 reports them.

torch tells two cases apart. A branch on a tensor (``if x.sum() > 0:``, ``while t:``, ``t and
u``) is a jump its bytecode tracer cannot follow: ``Unsupported`` whose text starts with
"Data-dependent branching". An explicit ``bool(t)`` is traced as a symbolic boolean that must be
guarded on: ``UserError`` ("Could not guard on data-dependent expression"). ember's capture
sees both as ``Tensor.__bool__``; the instruction that called it (in the innermost user frame)
says which: a conditional jump or ``not`` is a branch, a call is ``bool(t)``."""

import dis
import os
import sys

__all__ = ["BRANCH", "EXPLICIT", "bool_reason", "fullgraph_error"]

BRANCH = "(Data-dependent branching)"
EXPLICIT = "(bool() of a data-dependent value)"

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_frame():
    frame = sys._getframe(2)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PKG):
        frame = frame.f_back
    return frame


def _calling_instruction(frame):
    for ins in dis.get_instructions(frame.f_code):
        if ins.offset == frame.f_lasti:
            return ins.opname
    return None


def bool_reason(what):
    """The break reason of a ``__bool__`` read: a branch or an explicit ``bool()``."""
    frame = _user_frame()
    op = _calling_instruction(frame) if frame is not None else None
    if op is not None and ("CALL" in op or op == "PRECALL"):
        return f"{what} {EXPLICIT}"
    return f"{what} {BRANCH}"


def _where(stack):
    lines = []
    for f in stack[-1:]:
        lines.append(f'  File "{f.filename}", line {f.lineno}, in {f.name}')
        if f.line:
            lines.append(f"    {f.line}")
    return "\n".join(lines)


def fullgraph_error(reason, stack):
    """The exception ``fullgraph=True`` raises for a break with ``reason`` (None: the plain
    Unsupported as before)."""
    from .exc import Unsupported, UserError

    if reason.endswith(BRANCH):
        text = (
            "Data-dependent branching\n"
            "  Explanation: the condition of a Python branch depends on a tensor's values, "
            "which one graph cannot capture.\n"
            "  Hint: express the branch with torch.where, or with torch.cond for whole "
            "computations.\n"
            f"  Developer debug context: {reason}\n\n"
            f"from user code:\n{_where(stack)}"
        )
        return Unsupported(text)
    if reason.endswith(EXPLICIT):
        text = (
            "Consider annotating your code using torch._check*(). Could not guard on "
            "data-dependent expression (the truth value of a tensor computed in the graph).\n\n"
            f"from user code:\n{_where(stack)}"
        )
        return UserError(text)
    return None
