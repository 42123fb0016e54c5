#!/usr/bin/env python3
"""Writes python/ember/_sobol_table.py: the Sobol' direction numbers of Joe and Kuo
(new-joe-kuo-6.21201, search criterion D(6); https://web.maths.unsw.edu.au/~fkuo/sobol/, BSD-style
licence) for the first DIMS dimensions, read from SciPy's copy of the table
(scipy/stats/_sobol_direction_numbers.npz). Each dimension after the first is "poly:m1,...,ms":
its primitive polynomial as an integer (leading and trailing 1 bits included, degree s) and its
s initial direction numbers. The text is zlib-compressed and base64-encoded.

Usage: python3 tools/gen_sobol_table.py [DIMS]   (needs numpy and scipy; default 1111)
"""

import base64
import pathlib
import sys
import zlib

import numpy as np
import scipy.stats

DIMS = int(sys.argv[1]) if len(sys.argv) > 1 else 1111
src = pathlib.Path(scipy.stats.__file__).parent / "_sobol_direction_numbers.npz"
data = np.load(src)
parts = []
for i in range(1, DIMS):
    poly = int(data["poly"][i])
    degree = poly.bit_length() - 1
    parts.append(f"{poly}:" + ",".join(str(int(v)) for v in data["vinit"][i, :degree]))
blob = base64.b64encode(zlib.compress(";".join(parts).encode(), 9)).decode()
lines = [blob[i : i + 92] for i in range(0, len(blob), 92)]
out = pathlib.Path(__file__).resolve().parent.parent / "python" / "ember" / "_sobol_table.py"
body = "\n".join(f'    "{line}"' for line in lines)
out.write_text(
    '"""Sobol\' direction numbers of Joe and Kuo (new-joe-kuo-6.21201) for the first '
    f"{DIMS}\ndimensions, written by tools/gen_sobol_table.py (see there for the format and "
    'the source)."""\n\n'
    f"MAXDIM = {DIMS}\n\n"
    f"DATA = (\n{body}\n)\n"
)
print(f"wrote {out} ({DIMS} dimensions, {len(lines)} lines)")
