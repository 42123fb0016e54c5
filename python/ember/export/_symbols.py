"""torch's names for the dynamic dims of an exported program (``s77``, ``s77 + 1``).

torch 2.13's ShapeEnv names the symbol of an input's dynamic dim after its source:
``s<k>`` with ``k = sha256("L['x'].size()[0]") % 100``, the next free number where taken, in
the order the inputs' dims are created. ``range_constraints`` is keyed by those symbols (and by
expressions of them for derived dims), and the printed program annotates inputs with them.
ember keeps each dim under its Dim's name internally (the saved file, ``module()``'s checks);
this module maps those names to torch's symbols for what the user sees."""

import hashlib

__all__ = ["Symbol", "ValueRanges", "symbol_names"]

_INT_MAX = (1 << 63) - 1


class Symbol(str):
    """A dynamic dim's symbol (or an expression of one): a str that prints without quotes, as
    torch's sympy symbols do in ``range_constraints``."""

    @property
    def name(self):
        return str(self)

    def __repr__(self):
        return str(self)


class ValueRanges(tuple):
    """(lower, upper) of a dynamic dim; prints as torch's ``VR[2, int_oo]``."""

    def __new__(cls, lower, upper):
        return super().__new__(cls, (lower, upper))

    @property
    def lower(self):
        return self[0]

    @property
    def upper(self):
        return self[1]

    def __repr__(self):
        lo = "-int_oo" if self[0] <= -_INT_MAX else self[0]
        hi = "int_oo" if self[1] >= _INT_MAX else self[1]
        return f"VR[{lo}, {hi}]"


def _symbol_id(source, taken):
    k = int(hashlib.sha256(source.encode()).hexdigest(), 16) % 100
    while k in taken:
        k += 1
    taken.add(k)
    return k


def _expr(symbol, a, b):
    text = symbol if a == 1 else f"{a}*{symbol}"
    return text if b == 0 else f"{text} {'+' if b > 0 else '-'} {abs(b)}"


def symbol_names(input_shapes, user_inputs, parse_dim):
    """{Dim name: torch's symbol expression} for the dims of ``input_shapes`` ({input: sizes
    with Dim names}), visiting ``user_inputs`` in order; ``parse_dim(name)`` gives (root, a, b)
    of a Dim name ``a*root + b``."""
    taken, roots, seen = set(), {}, []  # root -> the symbols of its inputs' dims
    for name in user_inputs:
        for d, size in enumerate(input_shapes.get(name) or ()):
            if not isinstance(size, str):
                continue
            root, a, b = parse_dim(size)
            seen.append((size, root, a, b))
            # each input dim of a root gets a symbol (a derived dim reuses its root's), and
            # torch keeps the lexicographically lowest of those it finds equal (s17 over s77)
            if size == root or root not in roots:
                symbol = f"s{_symbol_id(f'L[{name!r}].size()[{d}]', taken)}"
                roots.setdefault(root, []).append(symbol)
    out = {}
    for size, root, a, b in seen:
        out.setdefault(root, min(roots[root]))
        out[size] = _expr(out[root], a, b)
    return out
