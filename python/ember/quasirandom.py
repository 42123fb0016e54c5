"""ember.quasirandom, as torch.quasirandom: SobolEngine draws Sobol' low-discrepancy sequences.

The points are those of torch's engine: Joe and Kuo's direction numbers (ember/_sobol_table.py,
the first 1111 dimensions of their 21201), 30 bits, Gray-code order (each point differs from the
previous by the direction number of the lowest zero bit of its index), the first point being the
origin (or the scrambling shift). Unscrambled sequences equal torch's exactly. Scrambling is
Owen-style linear matrix scrambling plus a digital shift, as torch's, drawn from an ember
Generator seeded with `seed` (so scrambled points differ from torch's, whose random stream is
another)."""

import base64
import zlib

from . import _C
from ._ops.creation import from_numpy

__all__ = ["SobolEngine"]

_MAXBIT = 30


def _table():
    from ._sobol_table import DATA

    text = zlib.decompress(base64.b64decode("".join(DATA))).decode()
    rows = []
    for item in text.split(";"):
        poly, _, init = item.partition(":")
        rows.append((int(poly), [int(v) for v in init.split(",")]))
    return rows


_rows = []


def _direction_numbers(dimension):
    """(dimension, MAXBIT) int64: column j of dimension d holds v_{d,j} << (MAXBIT - 1 - j)."""
    import numpy as np  # (at use: `import ember` leaves numpy unloaded)

    if not _rows:
        _rows.extend(_table())
    state = np.zeros((dimension, _MAXBIT), dtype=np.int64)
    state[0, :] = 1
    for d in range(1, dimension):
        poly, init = _rows[d - 1]
        m = poly.bit_length() - 1
        state[d, :m] = init
        for j in range(m, _MAXBIT):
            value = int(state[d, j - m])
            power = 1
            for k in range(m):
                power <<= 1
                if (poly >> (m - 1 - k)) & 1:
                    value ^= power * int(state[d, j - k - 1])
            state[d, j] = value
    shifts = np.left_shift(np.int64(1), np.arange(_MAXBIT - 1, -1, -1, dtype=np.int64))
    return state * shifts[None, :]


def _lowest_zero_bit(n):
    bit = 0
    while n & 1:
        n >>= 1
        bit += 1
    return bit


class SobolEngine:
    """SobolEngine(dimension, scramble=False, seed=None)

    An engine drawing Sobol' quasi-random points in [0, 1)^dimension (1 <= dimension <= 1111):
    draw(n), draw_base2(m), fast_forward(n), reset(). With scramble=True the direction numbers
    are scrambled and the points shifted, reproducibly for a given seed."""

    MAXBIT = _MAXBIT
    MAXDIM = None  # set below from the table

    def __init__(self, dimension, scramble=False, seed=None):
        import numpy as np

        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(
                f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}]"
            )
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self._state = _direction_numbers(dimension)
        self._shift = np.zeros(dimension, dtype=np.int64)
        if scramble:
            self._scramble()
        self._quasi = self._shift.copy()
        self._first_point = self._shift.astype(np.float64) / 2**_MAXBIT
        self.num_generated = 0

    def _scramble(self):
        import numpy as np

        from ._ops.random import randint

        gen = _C.Generator()
        if self.seed is not None:
            gen.manual_seed(self.seed)
        bits = randint(0, 2, (self.dimension, _MAXBIT), generator=gen).numpy()
        self._shift = bits @ (np.int64(1) << np.arange(_MAXBIT, dtype=np.int64))
        ltm = np.tril(randint(0, 2, (self.dimension, _MAXBIT, _MAXBIT), generator=gen).numpy())
        idx = np.arange(_MAXBIT)
        ltm[:, idx, idx] = 1  # unit diagonal: the scrambling matrix is invertible
        # bit k of a direction number, most significant first, and its scrambled bit p
        weights = np.int64(1) << np.arange(_MAXBIT - 1, -1, -1, dtype=np.int64)
        for d in range(self.dimension):
            v = self._state[d]
            digits = (v[:, None] >> np.arange(_MAXBIT - 1, -1, -1)[None, :]) & 1  # (j, k)
            scrambled = (digits @ ltm[d].T) % 2  # (j, p)
            self._state[d] = scrambled @ weights

    def _advance(self, n, index, out=None):
        for i in range(n):
            self._quasi ^= self._state[:, _lowest_zero_bit(index + i)]
            if out is not None:
                out[i] = self._quasi
        return index + n

    def draw(self, n=1, out=None, dtype=None):
        """draw(n=1, out=None, dtype=None) -> Tensor

        The next n points as an (n, dimension) tensor of dtype (the default dtype when None)."""
        import numpy as np

        if dtype is None:
            dtype = _C.get_default_dtype()
        points = np.empty((n, self.dimension), dtype=np.int64)
        if self.num_generated == 0:
            if n > 0:
                points[0] = self._shift
                self._advance(n - 1, 0, points[1:])
        else:
            self._advance(n, self.num_generated - 1, points)
        self.num_generated += n
        result = from_numpy(points.astype(np.float64) / 2**_MAXBIT).to(dtype)
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """draw_base2(m, out=None, dtype=None) -> Tensor

        The next 2**m points; the total drawn must stay a power of two (the sequence's balance
        properties hold only then)."""
        n = 2**m
        total = self.num_generated + n
        if total & (total - 1):
            raise ValueError(
                "The balance properties of Sobol' points require n to be a power of 2. "
                f"{self.num_generated} points have been previously generated, then: "
                f"n={self.num_generated}+2**{m}={total}. If you still want to do this, please "
                "use 'SobolEngine.draw()' instead."
            )
        return self.draw(n, out, dtype)

    def reset(self):
        """reset() -> SobolEngine

        Back to the first point."""

        self._quasi = self._shift.copy()
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """fast_forward(n) -> SobolEngine

        Skips the next n points."""
        if self.num_generated == 0:
            if n > 0:
                self._advance(n - 1, 0)
        else:
            self._advance(n, self.num_generated - 1)
        self.num_generated += n
        return self

    def __repr__(self):
        parts = [f"dimension={self.dimension}"]
        if self.scramble:
            parts.append("scramble=True")
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(parts)})"


def _maxdim():
    from ._sobol_table import MAXDIM

    return MAXDIM


SobolEngine.MAXDIM = _maxdim()
