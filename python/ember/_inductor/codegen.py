"""C++ for fused kernels (Note [Generated kernel ABI] in python/src/kernel_launch.cpp).

A pointwise kernel walks its elements in storage order of its (contiguous) output, one flat
range [begin, end) per thread, cut into runs of the innermost dimension so that every load is
`base + j * stride` in a `#pragma omp simd` loop. A row kernel (reductions, softmax,
layer_norm) gives each thread a range of rows (the kept dimensions) and loops over the reduced
dimensions inside, once per pass; a pointwise producer is inlined into every pass, or computed
once into a row buffer on the stack when the row is short and the producer is not a plain load.
"""

from __future__ import annotations

from .ir import Const, Load, Op, contiguous_strides, numel, walk
from .ops import COMPARE, CPP, LOGICAL, _lit

CTYPE = {
    "float32": "float",
    "float64": "double",
    "bool": "bool",
    "uint8": "uint8_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
}

PRELUDE = """\
#include <algorithm>
#include <cmath>
#include <cstdint>
#include "ember/cpu/vmath.h"
namespace vm = ember::cpu;
"""

COLUMN_BLOCK = 512  # outputs a column reduction accumulates side by side
ACC_FLOAT_MAX = 4096  # longest float row summed in float
ROWBUF_MAX = 16384  # elements of a row kept on the stack between passes
MULTI_PASS = {"var", "std", "softmax", "log_softmax", "layer_norm", "logsumexp"}


class KernelCode:
    """A generated function: its C++ text, the buffers behind its pointers (outputs first), the
    iterations it runs over and the smallest chunk worth a thread."""

    def __init__(self, name, source, buffers, n, grain):
        self.name, self.source, self.buffers, self.n, self.grain = name, source, buffers, n, grain


def _coalesce(shape, stride_lists, groups=None):
    """Drops size-1 dims and merges neighbours (of the same group) that every stride list walks
    as one. Returns (shape, stride_lists, groups)."""
    groups = list(groups) if groups is not None else [0] * len(shape)
    keep = [d for d, s in enumerate(shape) if s != 1]
    shape = [shape[d] for d in keep]
    strides = [[st[d] for d in keep] for st in stride_lists]
    groups = [groups[d] for d in keep]
    d = len(shape) - 2
    while d >= 0:
        if groups[d] == groups[d + 1] and all(st[d] == st[d + 1] * shape[d + 1] for st in strides):
            shape[d] *= shape[d + 1]
            for st in strides:
                st[d] = st[d + 1]
                del st[d + 1]
            del shape[d + 1]
            del groups[d + 1]
        d -= 1
    return shape, strides, groups


class _Emitter:
    """Pointer declarations and load bookkeeping shared by both kernel kinds."""

    def __init__(self, outs):
        self.buffers = list(outs)
        self.loads = {}  # (buf id, offset, strides) -> index

    def ptr(self, buf):
        for i, b in enumerate(self.buffers):
            if b is buf:
                return f"p{i}"
        self.buffers.append(buf)
        return f"p{len(self.buffers) - 1}"

    def load_key(self, ld):
        key = (ld.buf.id, ld.offset, ld.strides)
        if key not in self.loads:
            self.loads[key] = (len(self.loads), ld)
        return self.loads[key][0]

    def decls(self, nout):
        lines = []
        for i, b in enumerate(self.buffers):
            c = "" if i < nout else "const "
            t = CTYPE[b.dtype]
            lines.append(f"  {c}{t}* p{i} = reinterpret_cast<{c}{t}*>(ptrs[{i}]);")
        return lines


def _expr_lines(expr, load_fn, tag, names=None):
    """C++ statements computing `expr`; returns (lines, name of the result). `names` (id of a
    sub-expression -> its C++ name) is filled in when given."""
    names, lines = {} if names is None else names, []
    for k, e in enumerate(walk(expr)):
        if isinstance(e, Const):
            names[id(e)] = _lit(CTYPE[e.dtype], e.value)
            continue
        v = f"{tag}{k}"
        T = CTYPE[e.dtype]
        if isinstance(e, Load):
            rhs = load_fn(e)
        else:
            args = [names[id(a)] for a in e.args]
            compute = CTYPE[e.args[0].dtype] if e.name in COMPARE | LOGICAL else T
            rhs = CPP[e.name](compute, *args, **e.params)
        lines.append(f"const {T} {v} = static_cast<{T}>({rhs});")
        names[id(e)] = v
    return lines, names[id(expr)]


def pointwise(name, shape, expr, out):
    def body(load_fn):
        lines, res = _expr_lines(expr, load_fn, "t")
        return lines + [f"p0[ob + j] = {res};"]

    return flat_kernel(name, shape, [out], [expr], body)


def flat_kernel(name, shape, outs, exprs, body):
    """A kernel over the elements of `shape` (outputs contiguous in it), one flat range per
    thread; body(load_fn) gives the statements for element j (stores index `ob + j`)."""
    em = _Emitter(outs)
    for expr in exprs:
        for e in walk(expr):
            if isinstance(e, Load):
                em.load_key(e)
    uniq = [ld for _, ld in sorted(em.loads.values(), key=lambda t: t[0])]
    cshape, cstrides, _ = _coalesce(
        list(shape), [list(contiguous_strides(shape))] + [list(ld.strides) for ld in uniq]
    )
    if not cshape:
        cshape, cstrides = [1], [[1] for _ in cstrides]
    inner = cshape[-1]
    outer = cshape[:-1]
    bases = []
    ptr = {id(ld): em.ptr(ld.buf) for ld in uniq}
    for k, ld in enumerate(uniq):
        st = cstrides[k + 1]
        terms = [str(ld.offset)] + [f"c{d} * {st[d]}" for d in range(len(outer)) if st[d]]
        bases.append(f"const int64_t b{k} = {' + '.join(terms)};")

    def load_fn(e):
        k = em.load_key(e)
        s = cstrides[k + 1][-1]
        idx = f"b{k}" if s == 0 else f"b{k} + j" if s == 1 else f"b{k} + j * {s}"
        return f"{ptr[id(uniq[k])]}[{idx}]"

    lines = body(load_fn)
    src = [f'extern "C" void {name}(char* const* ptrs, int64_t begin, int64_t end) {{']
    src += em.decls(len(outs))
    if outer:
        src += [
            "  for (int64_t i = begin; i < end;) {",
            f"    const int64_t o = i / {inner}, j0 = i - o * {inner};",
            f"    const int64_t j1 = std::min<int64_t>({inner}, j0 + (end - i));",
            "    int64_t q = o;",
        ]
        for d in range(len(outer) - 1, -1, -1):
            src.append(f"    const int64_t c{d} = q % {outer[d]}; q /= {outer[d]};")
        src += ["    (void)q;"] + [f"    {b}" for b in bases]
        src.append(f"    const int64_t ob = o * {inner};")
    else:
        src += ["  {", "    const int64_t j0 = begin, j1 = end, ob = 0;"]
        src += [f"    {b}" for b in bases]
    src += ["#pragma omp simd", "    for (int64_t j = j0; j < j1; ++j) {"]
    src += [f"      {ln}" for ln in lines]
    src += ["    }"]
    if outer:
        src.append("    i += j1 - j0;")
    src += ["  }", "}"]
    return KernelCode(name, "\n".join(src) + "\n", em.buffers, numel(shape), 32768)


def _embed(shape, op_shape, strides):
    """Strides of an operand of op_shape broadcast (right-aligned) to shape."""
    pad = len(shape) - len(op_shape)
    out = [0] * pad + list(strides)
    return [
        0 if (d >= pad and op_shape[d - pad] == 1 and shape[d] != 1) else out[d]
        for d in range(len(shape))
    ]


def row(name, kind, in_shape, rdims, operands, params, out, epilogue=None):
    """A row kernel; operands are (expr, shape) with operand 0 the reduced input. `epilogue`
    (expr, buffer), for kernels whose output has the input's shape: a pointwise expression over
    that shape applied to each result before it is stored (its loads of `buffer` read it)."""
    from .ir import remap_loads

    in_shape = list(in_shape)
    rset = set(d % max(len(in_shape), 1) for d in rdims)
    same_shape = kind in ("softmax", "log_softmax", "layer_norm")
    if same_shape:
        out_strides = list(contiguous_strides(in_shape))
    else:
        kept = [in_shape[d] for d in range(len(in_shape)) if d not in rset]
        ks = list(contiguous_strides(kept))
        out_strides, it = [], iter(ks)
        for d in range(len(in_shape)):
            out_strides.append(0 if d in rset else next(it))
    exprs = []
    for expr, shp in operands:
        exprs.append(
            remap_loads(expr, lambda ld, shp=shp: (ld.offset, _embed(in_shape, shp, ld.strides)))
        )
    em = _Emitter([out])
    for e in exprs + ([epilogue[0]] if epilogue else []):
        for ld in walk(e):
            if isinstance(ld, Load) and not (epilogue and ld.buf is epilogue[1]):
                em.load_key(ld)
    uniq = [ld for _, ld in sorted(em.loads.values(), key=lambda t: t[0])]
    groups = [1 if d in rset else 0 for d in range(len(in_shape))]
    cshape, cstrides, cgroups = _coalesce(
        in_shape, [out_strides] + [list(ld.strides) for ld in uniq], groups
    )
    K = [d for d in range(len(cshape)) if cgroups[d] == 0]
    R = [d for d in range(len(cshape)) if cgroups[d] == 1]
    rsize = numel([cshape[d] for d in R])
    ptr = {id(ld): em.ptr(ld.buf) for ld in uniq}
    T_in = CTYPE[operands[0][0].dtype]
    T = CTYPE[out.dtype]
    # float rows up to ACC_FLOAT_MAX accumulate in float across the vector lanes (as eager's
    # kernels do); longer ones and double in double
    A = "double" if T_in == "double" or rsize > ACC_FLOAT_MAX else "float"
    if K and R and cgroups[-1] == 0 and kind in ("sum", "mean", "prod", "amax", "amin"):
        src = _columns(name, kind, cshape, cstrides, K, R, uniq, em, ptr, exprs[0], T_in, T, A)
        grain = max(1, 32768 // max(rsize, 1))
        return KernelCode(name, src, em.buffers, numel([cshape[d] for d in K]), grain)

    head = [f'extern "C" void {name}(char* const* ptrs, int64_t begin, int64_t end) {{']
    head += em.decls(1)
    head += ["  for (int64_t o = begin; o < end; ++o) {", "    int64_t q = o;"]
    for d in reversed(K):
        head.append(f"    const int64_t c{d} = q % {cshape[d]}; q /= {cshape[d]};")
    head.append("    (void)q;")
    for k, ld in enumerate(uniq):
        st = cstrides[k + 1]
        terms = [str(ld.offset)] + [f"c{d} * {st[d]}" for d in K if st[d]]
        head.append(f"    const int64_t b{k} = {' + '.join(terms)};")
    head.append(
        "    const int64_t ob = "
        + " + ".join(["0"] + [f"c{d} * {cstrides[0][d]}" for d in K if cstrides[0][d]])
        + ";"
    )

    def idx(k):
        st = cstrides[k + 1]
        return " + ".join(
            [f"b{k}"] + [f"r{d} * {st[d]}" if st[d] != 1 else f"r{d}" for d in R if st[d]]
        )

    def load_fn(e):
        if epilogue and e.buf is epilogue[1]:
            return "y"
        k = em.load_key(e)
        return f"{ptr[id(uniq[k])]}[{idx(k)}]"

    def store(y):
        """Statements storing result `y` of the element at oidx, through the epilogue."""
        if not epilogue:
            return [f"p0[{oidx}] = static_cast<{T}>({y});"]
        lines, res = _expr_lines(epilogue[0], load_fn, "e")
        return [f"const {CTYPE[epilogue[1].dtype]} y = {y};"] + lines + [f"p0[{oidx}] = {res};"]

    rflat = " + ".join(
        ["0"] + [f"r{d} * {s}" for d, s in zip(R, contiguous_strides([cshape[d] for d in R]))]
    )
    oidx = " + ".join(["ob"] + [f"r{d} * {cstrides[0][d]}" for d in R if cstrides[0][d]])
    use_buf = (
        kind in MULTI_PASS
        and rsize <= ROWBUF_MAX
        and any(isinstance(e, Op) for e in walk(exprs[0]))
    )
    v_lines, v_name = _expr_lines(exprs[0], load_fn, "v")

    def nest(stmts, first=False, clause=None, extra=()):
        """Loops over the reduced dims around stmts (which see `v`)."""
        lines = []
        for n_, d in enumerate(R):
            if n_ == len(R) - 1 and clause is not None:
                lines.append("#pragma omp simd" + (f" reduction({clause})" if clause else ""))
            lines.append(f"for (int64_t r{d} = 0; r{d} < {cshape[d]}; ++r{d}) {{")
        if use_buf and not first:
            lines.append(f"const {T_in} v = rb[{rflat}];")
        else:
            lines += v_lines + [f"const {T_in} v = {v_name};"]
            if use_buf:
                lines.append(f"rb[{rflat}] = v;")
        for ex in extra:
            lines += ex
        lines += stmts
        lines += ["}"] * len(R)
        if not R:  # nothing reduced: one element per row
            lines = ["{"] + lines + ["}"]
        return ["    " + ln for ln in lines]

    body = []
    if use_buf:
        body.append(f"    alignas(64) {T_in} rb[{rsize}];")
    if kind in ("sum", "mean", "var", "std", "layer_norm"):
        body += [f"    {A} acc = 0;"] + nest(["acc += v;"], first=True, clause="+:acc")
        body.append(f"    const {A} mean = acc / {A}({rsize});")
        if kind == "sum":
            body.append(f"    p0[ob] = static_cast<{T}>(acc);")
        elif kind == "mean":
            body.append(f"    p0[ob] = static_cast<{T}>(mean);")
        else:
            body += [f"    {A} acc2 = 0;"] + nest(
                [f"const {A} dv = {A}(v) - mean;", "acc2 += dv * dv;"], clause="+:acc2"
            )
            if kind in ("var", "std"):
                corr = params.get("correction", 1)
                body.append(f"    const {A} var = acc2 / {A}({rsize} - {corr});")
                body.append(
                    f"    p0[ob] = static_cast<{T}>({'std::sqrt(var)' if kind == 'std' else 'var'});"  # noqa: E501
                )
            else:
                body.append(
                    f"    const {A} rstd = 1.0 / "
                    f"std::sqrt(acc2 / {A}({rsize}) + {A}({params['eps']!r}));"
                )
                extra, terms = [], []
                for k, tag in ((1, "w"), (2, "bb")):
                    if k < len(exprs) and exprs[k] is not None:
                        ls, nm = _expr_lines(exprs[k], load_fn, tag)
                        extra.append(ls)
                        terms.append(nm)
                T_mid = CTYPE[epilogue[1].dtype] if epilogue else T
                y = f"static_cast<{T_mid}>(({A}(v) - mean) * rstd)"
                if len(terms) >= 1 and params.get("has_weight"):
                    y = f"{y} * {terms[0]}"
                if params.get("has_bias"):
                    y = f"{y} + {terms[-1]}"
                body += nest(store(y), clause="", extra=extra)
    elif kind == "prod":
        body += [f"    {A} acc = 1;"] + nest(["acc *= v;"], first=True, clause="*:acc")
        body.append(f"    p0[ob] = static_cast<{T}>(acc);")
    elif kind in ("amax", "amin"):
        body += _extremum(kind, T_in, nest)
        body.append(f"    p0[ob] = static_cast<{T}>(m);")
    elif kind in ("softmax", "log_softmax", "logsumexp"):
        body += _extremum("amax", T_in, nest)
        # logsumexp shifts by 0 where the max is infinite (as eager); softmax lets it give NaN
        shift = "std::isinf(m) ? {T}(0) : m" if kind == "logsumexp" else "m"
        body.append(f"    const {T_in} ms = {shift.format(T=T_in)};")
        body += [f"    {A} s = 0;"] + nest(
            [f"s += {A}(vm::fast_exp(static_cast<{T_in}>(v - ms)));"], clause="+:s"
        )
        if kind == "softmax":
            body.append(f"    const {T_in} inv = static_cast<{T_in}>(1.0 / s);")
            body += nest(store(f"vm::fast_exp(static_cast<{T_in}>(v - ms)) * inv"), clause="")
        elif kind == "log_softmax":
            body.append(f"    const {T_in} ls = static_cast<{T_in}>(std::log(s));")
            body += nest(store("v - ms - ls"), clause="")
        else:
            body.append(f"    p0[ob] = static_cast<{T}>({A}(ms) + std::log(s));")
    else:
        raise ValueError(f"unknown row kernel {kind}")
    src = head + body + ["  }", "}"]
    rows = numel([cshape[d] for d in K])
    grain = max(1, 32768 // max(rsize, 1))
    return KernelCode(name, "\n".join(src) + "\n", em.buffers, rows, grain)


def _extremum(kind, T, nest):
    """`m` = the row's max/min, NaN if any element is NaN, in a vectorizable loop."""
    fn, init = ("std::max", "-INFINITY") if kind == "amax" else ("std::min", "INFINITY")
    red = "max" if kind == "amax" else "min"
    lines = [f"    {T} m = {init};", "    int nn = 0;"]
    lines += nest(
        [f"m = {fn}(m, v);", "nn |= (v != v);"], first=True, clause=f"{red}:m) reduction(|:nn"
    )
    return lines + [f"    if (nn) m = {T}(NAN);"]


_INIT = {"sum": "0", "mean": "0", "prod": "1", "amax": "-INFINITY", "amin": "INFINITY"}


def _columns(name, kind, cshape, cstrides, K, R, uniq, em, ptr, expr, T_in, T, A):
    """A reduction whose innermost dimension is kept (e.g. sum over dim 0): blocks of
    COLUMN_BLOCK neighbouring outputs accumulate side by side, so the loads along that
    dimension vectorize."""
    inner, outer = K[-1], K[:-1]
    kin = cshape[inner]

    def load_fn(e):
        k = em.load_key(e)
        st = cstrides[k + 1]
        terms = [f"b{k}"] + [f"r{d} * {st[d]}" for d in R if st[d]]
        if st[inner]:
            terms.append("j" if st[inner] == 1 else f"j * {st[inner]}")
        return f"{ptr[id(uniq[k])]}[{' + '.join(terms)}]"

    v_lines, v_name = _expr_lines(expr, load_fn, "v")
    acc_t = T_in if kind in ("amax", "amin") else A
    if kind in ("amax", "amin"):
        cmp = ">" if kind == "amax" else "<"
        update = f"acc[j - jb] = (v {cmp} acc[j - jb] || v != v) ? v : acc[j - jb];"
    else:
        update = f"acc[j - jb] {'*' if kind == 'prod' else '+'}= v;"
    rsize = numel([cshape[d] for d in R])
    fin = f"acc[j - jb] / {acc_t}({rsize})" if kind == "mean" else "acc[j - jb]"
    src = [f'extern "C" void {name}(char* const* ptrs, int64_t begin, int64_t end) {{']
    src += em.decls(1)
    src += [
        "  for (int64_t i = begin; i < end;) {",
        f"    const int64_t o = i / {kin}, j0 = i - o * {kin};",
        f"    const int64_t j1 = std::min<int64_t>({kin}, j0 + (end - i));",
        "    int64_t q = o;",
    ]
    for d in reversed(outer):
        src.append(f"    const int64_t c{d} = q % {cshape[d]}; q /= {cshape[d]};")
    src.append("    (void)q;")
    for k in range(len(uniq)):
        st = cstrides[k + 1]
        terms = [str(uniq[k].offset)] + [f"c{d} * {st[d]}" for d in outer if st[d]]
        src.append(f"    const int64_t b{k} = {' + '.join(terms)};")
    ost = cstrides[0]
    src.append(
        "    const int64_t ob = "
        + " + ".join(["0"] + [f"c{d} * {ost[d]}" for d in outer if ost[d]])
        + ";"
    )
    src += [
        f"    for (int64_t jb = j0; jb < j1; jb += {COLUMN_BLOCK}) {{",
        f"      const int64_t je = std::min<int64_t>(j1, jb + {COLUMN_BLOCK});",
        f"      alignas(64) {acc_t} acc[{COLUMN_BLOCK}];",
        f"      for (int64_t j = 0; j < {COLUMN_BLOCK}; ++j) acc[j] = {acc_t}({_INIT[kind]});",
    ]
    for d in R:
        src.append(f"      for (int64_t r{d} = 0; r{d} < {cshape[d]}; ++r{d}) {{")
    src += ["#pragma omp simd", "      for (int64_t j = jb; j < je; ++j) {"]
    src += [f"        {ln}" for ln in v_lines]
    src += [f"        const {T_in} v = {v_name};", f"        {update}", "      }"]
    src += ["      }"] * len(R)
    oj = "j" if ost[inner] == 1 else f"j * {ost[inner]}"
    src += [
        f"      for (int64_t j = jb; j < je; ++j) p0[ob + {oj}] = static_cast<{T}>({fin});",
        "    }",
        "    i += j1 - j0;",
        "  }",
        "}",
    ]
    return "\n".join(src) + "\n"
