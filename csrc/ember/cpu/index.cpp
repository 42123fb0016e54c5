// CPU kernels of the indexing ops. Shapes and dtypes arrive checked (ops/index.cpp); index
// values are checked here, each one before it is used to address memory.
#include <cstring>
#include <limits>

#include "ember/core/shape.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/tensor_iter.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/index.h"

namespace ember::cpu {

namespace {

using IndexList = std::vector<std::optional<Tensor>>;

// Note [Moves by element size]
// gather, index_select, index, masked_fill and the assigning scatter/index_put only move
// elements, so they dispatch on the element's size (5 instantiations) rather than its dtype
// (10): every dtype is supported, bool, the 16-bit floats and complex included. Kernels that
// compute (accumulate, reduce) dispatch on the dtype.

// The 16-byte element (complex128), moved whole.
struct Bytes16 {
  uint64_t lo, hi;
};

template <class F>
void dispatch_size(size_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    case 8:
      return f(uint64_t{});
    case 16:
      return f(Bytes16{});
    default:
      EMBER_ASSERT(false);
  }
}

template <class T>
T* ptr(char* p) {
  return reinterpret_cast<T*>(p);
}
template <class T>
const T* ptr(const char* p) {
  return reinterpret_cast<const T*>(p);
}

[[noreturn]] void out_of_bounds(ErrorKind kind, int64_t v, int64_t dim, int64_t size) {
  EMBER_ERROR(kind, "index ", v, " is out of bounds for dimension ", dim, " with size ", size);
}

constexpr int64_t kSerial = std::numeric_limits<int64_t>::max();

// `t` broadcast to `shape` as a view (stride 0 on broadcast dims); the caller checked it fits.
Tensor expand_view(const Tensor& t, IntArrayRef shape) {
  DimVector strides(shape.size(), 0);
  size_t off = shape.size() - size_t(t.dim());
  for (size_t d = 0; d < size_t(t.dim()); ++d)
    strides[off + d] = t.sizes()[d] == shape[off + d] ? t.strides()[d] : 0;
  return t.as_strided_view(shape, strides, t.storage_offset());
}

// Note [Loops along a dim]
// gather, scatter, index_select and index_add walk one dim with an index while the other dims
// move in lockstep. Each operand is viewed with that dim cut to size 1 (its stride kept aside), a
// TensorIter runs over the remaining positions, and the body walks a range of the dim from each
// run of positions, with whichever of the two axes is faster in memory inner. Threads split the
// positions — two positions never touch the same element — in runs of at least kMinRun, or, for
// kernels that write a distinct element per step along the dim (gather, index_select), split the
// dim when it is the longer axis (an embedding lookup has 100k rows of 128 positions).
struct Along {
  Tensor view;   // the operand over `sizes` with `dim` cut to 1 (0-d counts as 1-d)
  int64_t step;  // its byte stride along `dim`
};

Along along(const Tensor& t, IntArrayRef sizes, int64_t dim) {
  DimVector sz(sizes), st(t.strides());
  if (sz.empty()) sz = DimVector{1};
  if (st.empty()) st = DimVector{1};
  int64_t step = st[size_t(dim)] * int64_t(t.element_size());
  sz[size_t(dim)] = 1;
  return {t.as_strided_view(sz, st, t.storage_offset()), step};
}

int64_t extent(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.sizes()[size_t(dim)]; }

constexpr int64_t kMinRun = 64;

// body(p, strides, n, j0, j1): a run of n positions, steps [j0, j1) of the dim.
template <class Body>
void for_each_along(const TensorIter& it, int64_t len, bool split_dim, const Body& body) {
  const int64_t positions = it.numel();
  if (split_dim && len > positions) {
    parallel_for(0, len, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(positions, 1)),
                 [&](int64_t j0, int64_t j1) {
                   auto loop = [&](char** p, const int64_t* st, int64_t n) {
                     body(p, st, n, j0, j1);
                   };
                   it.serial(0, positions, loop);
                 });
    return;
  }
  it.for_each([&](char** p, const int64_t* st, int64_t n) { body(p, st, n, int64_t(0), len); },
              std::max<int64_t>(kMinRun, kGrainSize / std::max<int64_t>(len, 1)));
}

// Visits (e, j) for e < n, j in [j0, j1): the dim inner when it is the faster axis in memory.
template <class F>
inline void visit(int64_t n, int64_t j0, int64_t j1, bool dim_inner, const F& f) {
  if (dim_inner) {
    for (int64_t e = 0; e < n; ++e)
      for (int64_t j = j0; j < j1; ++j) f(e, j);
  } else {
    for (int64_t j = j0; j < j1; ++j)
      for (int64_t e = 0; e < n; ++e) f(e, j);
  }
}

// o[e] = f(o[e], x[e]) along contiguous rows, in blocks of 8 staged through a local array: GCC's
// -O2 cost model vectorizes this form (it needs no alias check between o and x), not the plain
// loop, which ran 2.5x slower on index_add_'s embedding-backward shape.
template <class T, class F>
void row_apply(T* o, const T* x, int64_t n, const F& f) {
  int64_t e = 0;
  for (; e + 8 <= n; e += 8) {
    T t[8];
    for (int k = 0; k < 8; ++k) t[k] = f(o[e + k], x[e + k]);
    for (int k = 0; k < 8; ++k) o[e + k] = t[k];
  }
  for (; e < n; ++e) o[e] = f(o[e], x[e]);
}

// Runs `inplace` on a fresh copy of self: the out-of-place form of an in-place kernel.
template <class F>
Tensor on_copy(const Tensor& self, F&& inplace) {
  Tensor out = self.clone();
  inplace(out);
  return out;
}

// ---- gather / scatter ---------------------------------------------------------------------------

Tensor gather_kernel(const Tensor& self, int64_t dim, const Tensor& index) {
  Tensor out = empty(index.sizes(), self.dtype());
  if (out.numel() == 0) return out;
  Along o = along(out, index.sizes(), dim), s = along(self, index.sizes(), dim),
        i = along(index, index.sizes(), dim);
  const int64_t len = extent(index, dim), bound = extent(self, dim);
  TensorIter it({&o.view, &s.view, &i.view}, 1, WriteOverlap::kAllow);
  dispatch_size(self.element_size(), [&](auto tag) {
    using T = decltype(tag);
    for_each_along(
        it, len, true, [&](char** p, const int64_t* st, int64_t n, int64_t j0, int64_t j1) {
          visit(n, j0, j1, std::abs(i.step) < std::abs(st[2]), [&](int64_t e, int64_t j) {
            int64_t v = *ptr<int64_t>(p[2] + e * st[2] + j * i.step);
            if (v < 0 || v >= bound) [[unlikely]]
              out_of_bounds(ErrorKind::Runtime, v, dim, bound);
            *ptr<T>(p[0] + e * st[0] + j * o.step) = *ptr<T>(p[1] + e * st[1] + v * s.step);
          });
        });
  });
  return out;
}

enum class Reduce { None, Sum, Prod, Mean, Max, Min };

Reduce parse_reduce(const std::string& r) {
  if (r == "sum") return Reduce::Sum;
  if (r == "prod") return Reduce::Prod;
  if (r == "mean") return Reduce::Mean;
  if (r == "amax") return Reduce::Max;
  EMBER_CHECK(r == "amin", "scatter_reduce: unknown reduce '", r, "'");
  return Reduce::Min;
}

// One step of a reduction; max/min propagate NaN; on bool, sum is `or` and prod is `and`.
template <class T>
T combine(Reduce op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return (op == Reduce::Prod || op == Reduce::Min) ? (a && b) : (a || b);
  } else {
    using A = acc_t<T>;
    A x = A(a), y = A(b);
    switch (op) {
      case Reduce::Prod:
        return T(x * y);
      case Reduce::Max:
        return (y != y || y > x) ? b : a;
      case Reduce::Min:
        return (y != y || y < x) ? b : a;
      default:
        return T(x + y);
    }
  }
}

// The value a reduction starts from when self is left out (include_self=false).
template <class T>
T identity(Reduce op) {
  using L = std::numeric_limits<T>;
  if (op == Reduce::Prod) return T(1);
  if (op == Reduce::Max) {
    if constexpr (L::has_infinity) return T(-std::numeric_limits<acc_t<T>>::infinity());
    else return L::lowest();
  }
  if (op == Reduce::Min) return L::has_infinity ? L::infinity() : L::max();
  return T(0);
}

// self[index along dim] (op)= src, in place; see Note [Loops along a dim]. Positions along the
// dim are visited in order, so with repeated indices the last write wins.
void scatter_into(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                  Reduce op) {
  if (index.numel() == 0) return;
  Along d = along(self, index.sizes(), dim), i = along(index, index.sizes(), dim),
        s = along(src, index.sizes(), dim);
  const int64_t len = extent(index, dim), bound = extent(self, dim);
  TensorIter it({&d.view, &i.view, &s.view}, 1, WriteOverlap::kAllow);
  auto loop = [&](auto tag, auto f) {
    using T = decltype(tag);
    for_each_along(
        it, len, false, [&](char** p, const int64_t* st, int64_t n, int64_t j0, int64_t j1) {
          visit(n, j0, j1, std::abs(i.step) < std::abs(st[1]), [&](int64_t e, int64_t j) {
            int64_t v = *ptr<int64_t>(p[1] + e * st[1] + j * i.step);
            if (v < 0 || v >= bound) [[unlikely]]
              out_of_bounds(ErrorKind::Runtime, v, dim, bound);
            T* dst = ptr<T>(p[0] + e * st[0] + v * d.step);
            *dst = f(*dst, *ptr<T>(p[2] + e * st[2] + j * s.step));
          });
        });
  };
  if (op == Reduce::None) {
    dispatch_size(self.element_size(), [&](auto tag) {
      using T = decltype(tag);
      loop(tag, [](T, T b) { return b; });
    });
  } else {
    dispatch<kAllTypes>(self.dtype(), "scatter_reduce", [&](auto tag) {
      using T = decltype(tag);
      loop(tag, [op](T a, T b) { return combine(op, a, b); });
    });
  }
}

Tensor& scatter_kernel_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  scatter_into(self, dim, index, src, Reduce::None);
  return self;
}
Tensor scatter_kernel(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return on_copy(self, [&](Tensor& out) { scatter_kernel_(out, dim, index, src); });
}

Tensor& scatter_add_kernel_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  scatter_into(self, dim, index, src, Reduce::Sum);
  return self;
}
Tensor scatter_add_kernel(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return on_copy(self, [&](Tensor& out) { scatter_add_kernel_(out, dim, index, src); });
}

// mean = sum / count, count including self when include_self; untouched slots keep self.
void divide_by_count(Tensor& self, int64_t dim, const Tensor& index, bool include_self) {
  Tensor count = zeros(self.sizes(), kLong);
  Tensor one = scalar_tensor(1, kLong);
  scatter_into(count, dim, index, expand_view(one, index.sizes()), Reduce::Sum);
  TensorIter it({&self, &count}, 1, WriteOverlap::kAllow);
  dispatch<kNumericTypes>(self.dtype(), "scatter_reduce", [&](auto tag) {
    using T = decltype(tag);
    it.for_each([&](char** p, const int64_t* st, int64_t n) {
      for (int64_t e = 0; e < n; ++e) {
        int64_t c = *ptr<int64_t>(p[1] + e * st[1]);
        if (c == 0) continue;
        c += include_self;
        T& x = *ptr<T>(p[0] + e * st[0]);
        if constexpr (std::is_integral_v<T>) {
          const int64_t xv = int64_t(x);
          int64_t q = xv / c;  // floor division, as torch does for integers
          if (xv % c != 0 && xv < 0) --q;
          x = T(q);
        } else {
          x = T(acc_t<T>(x) / acc_t<T>(c));
        }
      }
    });
  });
}

Tensor& scatter_reduce_kernel_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                               const std::string& reduce, bool include_self) {
  Reduce op = parse_reduce(reduce);
  if (index.numel() == 0) return self;
  if (!include_self) {
    Tensor start = empty({}, self.dtype());
    dispatch<kAllTypes>(self.dtype(), "scatter_reduce", [&](auto tag) {
      using T = decltype(tag);
      *ptr<T>(static_cast<char*>(start.data_ptr())) = identity<T>(op);
    });
    scatter_into(self, dim, index, expand_view(start, index.sizes()), Reduce::None);
  }
  scatter_into(self, dim, index, src, op);
  if (op == Reduce::Mean) divide_by_count(self, dim, index, include_self);
  return self;
}
Tensor scatter_reduce_kernel(const Tensor& self, int64_t dim, const Tensor& index,
                             const Tensor& src, const std::string& reduce, bool include_self) {
  return on_copy(self, [&](Tensor& out) {
    scatter_reduce_kernel_(out, dim, index, src, reduce, include_self);
  });
}

// ---- index_select / index_add -------------------------------------------------------------------

// The values of a 1-d index, copied so that a self that shares memory with the index can't
// change them mid-loop.
std::vector<int64_t> index_values(const Tensor& index) {
  Tensor ix = contiguous(to_dtype(index, kLong));
  const int64_t* p = ix.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + ix.numel());
}

// index_values, checked against [0, bound).
std::vector<int64_t> read_index(const Tensor& index, int64_t bound, int64_t dim, const char* op,
                                ErrorKind kind = ErrorKind::Index) {
  std::vector<int64_t> v = index_values(index);
  for (int64_t x : v)
    if (x < 0 || x >= bound) [[unlikely]]
      EMBER_ERROR(kind, op, "(): index ", x, " is out of bounds for dimension ", dim, " with size ",
                  bound);
  return v;
}

Tensor index_select_kernel(const Tensor& self, int64_t dim, const Tensor& index) {
  // torch's CPU index_select words a bad index by kernel: its dim-1 kernel for a matrix or more
  // raises RuntimeError, the general one IndexError (both without the op's name); an empty
  // matrix or more needs the indexed dim to have a size, then fails as the dim-1 kernel does
  // along any dim
  bool matrix_kernel = self.dim() > 1 && dim == 1;
  if (self.dim() > 1 && self.numel() == 0 && index.numel() > 0) {
    EMBER_CHECK(self.sizes()[size_t(dim)] > 0,
                "index_select(): self indexing axis dim should be positive");
    matrix_kernel = true;
  }
  const int64_t bound = extent(self, dim);
  std::vector<int64_t> idx = index_values(index);
  for (int64_t x : idx)
    if (x < 0 || x >= bound) [[unlikely]] {
      if (matrix_kernel)
        EMBER_ERROR(ErrorKind::Runtime, "INDICES element is out of DATA bounds, id=", x,
                    " axis_dim=", bound);
      EMBER_ERROR(ErrorKind::Index, "index out of range in self");
    }
  DimVector shape(self.sizes());
  if (self.dim() > 0) shape[size_t(dim)] = int64_t(idx.size());
  Tensor out = empty(shape, self.dtype());
  if (out.numel() == 0) return out;
  Along o = along(out, shape, dim), s = along(self, shape, dim);
  const int64_t es = int64_t(self.element_size());
  TensorIter it({&o.view, &s.view}, 1, WriteOverlap::kAllow);
  dispatch_size(size_t(es), [&](auto tag) {
    using T = decltype(tag);
    for_each_along(
        it, int64_t(idx.size()), true,
        [&](char** p, const int64_t* st, int64_t n, int64_t j0, int64_t j1) {
          if (st[0] == es && st[1] == es) {  // rows: one copy each
            for (int64_t j = j0; j < j1; ++j)
              std::memcpy(p[0] + j * o.step, p[1] + idx[size_t(j)] * s.step, size_t(n * es));
            return;
          }
          visit(n, j0, j1, std::abs(s.step) < std::abs(st[1]), [&](int64_t e, int64_t j) {
            *ptr<T>(p[0] + e * st[0] + j * o.step) =
                *ptr<T>(p[1] + e * st[1] + idx[size_t(j)] * s.step);
          });
        });
  });
  return out;
}

template <class T, class A>
T add_scaled(T d, T x, A alpha) {
  if constexpr (std::is_same_v<T, bool>) return d || (alpha && x);
  else return T(A(d) + alpha * A(x));
}

Tensor& index_add_kernel_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                          const Scalar& alpha) {
  // out of bounds is RuntimeError in PyTorch's index_add of a matrix, IndexError of a vector (its
  // 1-d path indexes elements directly), as in index_select
  // nothing to add, or nowhere to add it: PyTorch reads no index either
  if (source.numel() == 0 || self.numel() == 0) return self;
  std::vector<int64_t> idx = read_index(index, extent(self, dim), dim, "index_add_",
                                        self.dim() <= 1 ? ErrorKind::Index : ErrorKind::Runtime);
  Along d = along(self, source.sizes(), dim), s = along(source, source.sizes(), dim);
  TensorIter it({&d.view, &s.view}, 1, WriteOverlap::kAllow);
  dispatch<kAllTypes>(self.dtype(), "index_add_", [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    const A a = alpha.to<A>();
    auto add = [a](T o, T x) { return add_scaled(o, x, a); };
    for_each_along(
        it, int64_t(idx.size()), false,
        [&](char** p, const int64_t* st, int64_t n, int64_t j0, int64_t j1) {
          if (st[0] == int64_t(sizeof(T)) && st[1] == int64_t(sizeof(T))) {  // rows
            for (int64_t j = j0; j < j1; ++j)
              row_apply(ptr<T>(p[0] + idx[size_t(j)] * d.step), ptr<T>(p[1] + j * s.step), n, add);
            return;
          }
          visit(n, j0, j1, std::abs(d.step) < std::abs(st[0]), [&](int64_t e, int64_t j) {
            T* o = ptr<T>(p[0] + e * st[0] + idx[size_t(j)] * d.step);
            *o = add_scaled(*o, *ptr<T>(p[1] + e * st[1] + j * s.step), a);
          });
        });
  });
  return self;
}
Tensor index_add_kernel(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                        const Scalar& alpha) {
  return on_copy(self, [&](Tensor& out) { index_add_kernel_(out, dim, index, source, alpha); });
}

// ---- masked_fill --------------------------------------------------------------------------------

Tensor& masked_fill_kernel_(Tensor& self, const Tensor& mask, const Tensor& value) {
  if (self.numel() == 0) return self;
  Tensor v = to_dtype(value, self.dtype());
  Tensor m = expand_view(mask, self.sizes());
  TensorIter it({&self, &m}, 1, WriteOverlap::kAllow);
  dispatch_size(self.element_size(), [&](auto tag) {
    using T = decltype(tag);
    const T fill = *ptr<T>(static_cast<const char*>(v.data_ptr()));
    it.for_each([&](char** p, const int64_t* st, int64_t n) {
      for (int64_t e = 0; e < n; ++e)
        if (*ptr<bool>(p[1] + e * st[1])) *ptr<T>(p[0] + e * st[0]) = fill;
    });
  });
  return self;
}

// ---- advanced indexing --------------------------------------------------------------------------

// Note [Advanced indexing]
// self[i0, i1, ...] with index tensors follows numpy: a bool (or uint8) mask becomes its
// nonzero() coordinates, one int64 tensor per mask dim; all index tensors broadcast to one index
// shape; the result is self's shape with the indexed dims replaced by that shape — where they
// were if the indexed dims are adjacent, in front if an unindexed dim separates them. The kernels
// see `src`, self restrided to the result shape with stride 0 over the index dims, so element
// i of the result lives at src's address for i plus sum_k index_k[i] * stride_k: one offset per
// index position, computed and bounds-checked before any element moves.

// Advanced indexing in the kernels' terms.
struct AdvancedIndex {
  Tensor src;                   // self restrided to the result shape, stride 0 over index dims
  std::vector<Tensor> indices;  // int64, each broadcast to index_shape
  DimVector sizes;              // self's size along each indexed dim (the bound)
  DimVector strides;            // self's stride along each indexed dim (elements)
  DimVector dims;               // the indexed dims as the user numbered them (for messages)
  int64_t before = 0;           // result dims in front of the index dims
  DimVector index_shape;
};

Tensor nonzero_kernel(const Tensor& self);

// Column j of a 2-d tensor, as a view.
Tensor column(const Tensor& t, int64_t j) {
  return t.as_strided_view({t.size(0)}, {t.stride(0)}, t.storage_offset() + j * t.stride(1));
}

// Expands masks, checks dtypes and counts, broadcasts, and moves separated index dims first.
// Runs in the kernel with the kernel-side helpers (nonzero_kernel, cpu::to_dtype, views), so
// the op never climbs back to ops/.
AdvancedIndex make_advanced_index(const Tensor& self, const IndexList& indices) {
  DimVector sizes(self.sizes()), strides(self.strides()), user_dims;
  for (int64_t d = 0; d < self.dim(); ++d) user_dims.push_back(d);
  auto too_many = [&] {
    EMBER_ERROR(ErrorKind::Index, "too many indices for tensor of dimension ", self.dim());
  };
  IndexList idx;  // one entry per dim of `sizes`
  for (const auto& entry : indices) {
    if (!entry || !entry->defined()) {
      if (idx.size() >= sizes.size()) too_many();
      idx.emplace_back();
      continue;
    }
    ScalarType t = entry->dtype();
    EMBER_CHECK_INDEX(t == kLong || t == kInt || t == kByte || t == kBool,
                      "tensors used as indices must be long, int, byte or bool tensors");
    if (t == kLong || t == kInt) {
      if (idx.size() >= sizes.size()) too_many();
      idx.push_back(t == kLong ? *entry : to_dtype(*entry, kLong));
      continue;
    }
    Tensor mask = *entry;
    size_t d = idx.size();
    if (mask.dim() == 0) {
      // A 0-d mask indexes a new size-1 dim: all of it (true) or none of it (false).
      sizes.insert(d, 1);
      strides.insert(d, 0);
      user_dims.insert(d, int64_t(d));
      mask = mask.as_strided_view({1}, {1}, mask.storage_offset());
    }
    if (d + size_t(mask.dim()) > sizes.size()) too_many();
    for (int64_t j = 0; j < mask.dim(); ++j)
      EMBER_CHECK_INDEX(mask.sizes()[size_t(j)] == sizes[d + size_t(j)], "The shape of the mask ",
                        mask.sizes(), " at index ", j,
                        " does not match the shape of the indexed tensor ", sizes, " at index ",
                        d + size_t(j));
    Tensor nz = nonzero_kernel(mask);
    for (int64_t j = 0; j < mask.dim(); ++j) idx.push_back(column(nz, j));
  }
  idx.resize(sizes.size());

  std::vector<size_t> pos;
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i]) pos.push_back(i);
  AdvancedIndex r;
  try {
    for (size_t p : pos) r.index_shape = broadcast_shapes(r.index_shape, idx[p]->sizes());
  } catch (const Error&) {
    std::ostringstream shapes;
    for (size_t k = 0; k < pos.size(); ++k) shapes << (k ? ", " : "") << idx[pos[k]]->sizes();
    EMBER_ERROR(ErrorKind::Index,
                "shape mismatch: indexing tensors could not be broadcast together with shapes ",
                shapes.str());
  }
  // Separated index dims go to the front, in order; adjacent ones stay where they are.
  bool adjacent = pos.empty() || pos.back() - pos.front() + 1 == pos.size();
  if (!adjacent) {
    std::vector<size_t> order = pos;
    for (size_t i = 0; i < idx.size(); ++i)
      if (!idx[i]) order.push_back(i);
    DimVector s2, st2, u2;
    IndexList i2;
    for (size_t o : order) {
      s2.push_back(sizes[o]);
      st2.push_back(strides[o]);
      u2.push_back(user_dims[o]);
      i2.push_back(idx[o]);
    }
    sizes = s2, strides = st2, user_dims = u2, idx = std::move(i2);
    for (size_t k = 0; k < pos.size(); ++k) pos[k] = k;
  }
  r.before = pos.empty() ? int64_t(sizes.size()) : int64_t(pos.front());
  size_t after = pos.empty() ? sizes.size() : pos.back() + 1;
  DimVector src_sizes, src_strides;
  for (size_t d = 0; d < size_t(r.before); ++d) {
    src_sizes.push_back(sizes[d]);
    src_strides.push_back(strides[d]);
  }
  for (int64_t s : r.index_shape) {
    src_sizes.push_back(s);
    src_strides.push_back(0);
  }
  for (size_t d = after; d < sizes.size(); ++d) {
    src_sizes.push_back(sizes[d]);
    src_strides.push_back(strides[d]);
  }
  r.src = self.as_strided_view(src_sizes, src_strides, self.storage_offset());
  for (size_t p : pos) {
    // torch refuses any index into an empty dim here, before a value's shape is looked at
    EMBER_CHECK_INDEX(sizes[p] != 0 || numel_of(r.index_shape) == 0,
                      "index is out of bounds for dimension with size 0");
    r.indices.push_back(expand_view(*idx[p], r.index_shape));
    r.sizes.push_back(sizes[p]);
    r.strides.push_back(strides[p]);
    r.dims.push_back(user_dims[p]);
  }
  return r;
}

// Byte offsets into `src` for each index position (Note [Advanced indexing]), checked and
// wrapped, viewed over the result's shape with stride 0 off the index dims.
Tensor index_offsets(const AdvancedIndex& ai, int64_t itemsize) {
  Tensor off = zeros(ai.index_shape, kLong);
  for (size_t k = 0; k < ai.indices.size(); ++k) {
    const int64_t size = ai.sizes[k], step = ai.strides[k] * itemsize, dim = ai.dims[k];
    TensorIter it({&off, &ai.indices[k]}, 1, WriteOverlap::kAllow);
    it.for_each([&](char** p, const int64_t* st, int64_t n) {
      for (int64_t e = 0; e < n; ++e) {
        int64_t v = *ptr<int64_t>(p[1] + e * st[1]);
        if (v < -size || v >= size) [[unlikely]]
          out_of_bounds(ErrorKind::Index, v, dim, size);
        *ptr<int64_t>(p[0] + e * st[0]) += (v < 0 ? v + size : v) * step;
      }
    });
  }
  DimVector sizes, strides;
  int64_t after = ai.src.dim() - ai.before - int64_t(ai.index_shape.size());
  for (int64_t d = 0; d < ai.before; ++d) sizes.push_back(1), strides.push_back(0);
  for (size_t d = 0; d < ai.index_shape.size(); ++d)
    sizes.push_back(ai.index_shape[d]), strides.push_back(off.strides()[d]);
  for (int64_t d = 0; d < after; ++d) sizes.push_back(1), strides.push_back(0);
  return off.as_strided_view(sizes, strides, 0);
}

Tensor index_kernel(const Tensor& self, const IndexList& indices) {
  AdvancedIndex ai = make_advanced_index(self, indices);
  const int64_t es = int64_t(self.element_size());
  Tensor out = empty(ai.src.sizes(), self.dtype());
  // torch checks each index as its kernel reads it: an empty result reads none
  // (ones(2, 0)[[5]] is an empty (1, 0) tensor)
  if (out.numel() == 0) return out;
  Tensor off = index_offsets(ai, es);
  TensorIter it({&out, &ai.src, &off}, 1, WriteOverlap::kAllow);
  dispatch_size(size_t(es), [&](auto tag) {
    using T = decltype(tag);
    it.for_each([&](char** p, const int64_t* st, int64_t n) {
      if (st[2] == 0 && st[0] == es && st[1] == es) {  // a run that moves in one piece
        std::memcpy(p[0], p[1] + *ptr<int64_t>(p[2]), size_t(n * es));
        return;
      }
      for (int64_t e = 0; e < n; ++e)
        *ptr<T>(p[0] + e * st[0]) = *ptr<T>(p[1] + e * st[1] + *ptr<int64_t>(p[2] + e * st[2]));
    });
  });
  return out;
}

Tensor& index_put_kernel_(Tensor& self, const IndexList& indices, const Tensor& values,
                          bool accumulate) {
  AdvancedIndex ai = make_advanced_index(self, indices);
  EMBER_CHECK(is_expandable_to(values.sizes(), ai.src.sizes()),
              "shape mismatch: value tensor of shape ", values.sizes(),
              " cannot be broadcast to indexing result of shape ", ai.src.sizes());
  const int64_t es = int64_t(self.element_size());
  Tensor off = index_offsets(ai, es);  // every index checked before the first write
  if (ai.src.numel() == 0) return self;
  Tensor v = expand_view(values, ai.src.sizes());
  TensorIter it({&ai.src, &v, &off}, 1, WriteOverlap::kAllow);
  auto loop = [&](auto tag, auto f, int64_t grain) {
    using T = decltype(tag);
    it.for_each(
        [&](char** p, const int64_t* st, int64_t n) {
          if (st[2] == 0 && st[0] == int64_t(sizeof(T)) && st[1] == int64_t(sizeof(T))) {
            row_apply(ptr<T>(p[0] + *ptr<int64_t>(p[2])), ptr<T>(p[1]), n, f);  // one offset
            return;
          }
          for (int64_t e = 0; e < n; ++e) {
            T* dst = ptr<T>(p[0] + e * st[0] + *ptr<int64_t>(p[2] + e * st[2]));
            *dst = f(*dst, *ptr<T>(p[1] + e * st[1]));
          }
        },
        grain);
  };
  if (!accumulate) {
    dispatch_size(size_t(es), [&](auto tag) {
      using T = decltype(tag);
      loop(
          tag, [](T, T b) { return b; }, kGrainSize);
    });
  } else {
    // Repeated indices add up: one thread, in order.
    dispatch<kAllTypes>(self.dtype(), "index_put_", [&](auto tag) {
      using T = decltype(tag);
      loop(
          tag, [](T a, T b) { return combine(Reduce::Sum, a, b); }, kSerial);
    });
  }
  return self;
}
Tensor index_put_kernel(const Tensor& self, const IndexList& indices, const Tensor& values,
                        bool accumulate) {
  return on_copy(self, [&](Tensor& out) { index_put_kernel_(out, indices, values, accumulate); });
}

// ---- nonzero ------------------------------------------------------------------------------------

// Two passes over fixed chunks: count per chunk, then write each chunk's coordinates at its
// prefix offset (the output is in row-major order for any thread count).
Tensor nonzero_kernel(const Tensor& self) {
  Tensor m = contiguous(to_dtype(self, kBool));  // the copy to bool is x != 0
  const bool* flag = m.data_ptr<bool>();
  const int64_t n = m.numel(), nd = self.dim();
  const int64_t nchunks = (n + kGrainSize - 1) / kGrainSize;
  std::vector<int64_t> start(size_t(nchunks) + 1, 0);
  parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t cnt = 0;
      for (int64_t i = c * kGrainSize, end = std::min(n, i + kGrainSize); i < end; ++i)
        cnt += flag[i];
      start[size_t(c) + 1] = cnt;
    }
  });
  for (int64_t c = 0; c < nchunks; ++c) start[size_t(c) + 1] += start[size_t(c)];
  Tensor out = empty({start[size_t(nchunks)], nd}, kLong);
  if (out.numel() == 0) return out;
  int64_t* o = out.data_ptr<int64_t>();
  IntArrayRef sizes = self.sizes();
  parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
    DimVector coord(size_t(nd), 0);
    for (int64_t c = b; c < e; ++c) {
      int64_t i = c * kGrainSize, end = std::min(n, i + kGrainSize);
      for (int64_t d = nd - 1, rem = i; d >= 0; --d) {
        coord[size_t(d)] = rem % sizes[size_t(d)];
        rem /= sizes[size_t(d)];
      }
      int64_t* w = o + start[size_t(c)] * nd;
      for (; i < end; ++i) {
        if (flag[i])
          for (int64_t d = 0; d < nd; ++d) *w++ = coord[size_t(d)];
        for (int64_t d = nd - 1; d >= 0 && ++coord[size_t(d)] == sizes[size_t(d)]; --d)
          coord[size_t(d)] = 0;
      }
    }
  });
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::gather, CPU, gather_kernel);
EMBER_REGISTER_KERNEL(op::scatter, CPU, scatter_kernel);
EMBER_REGISTER_KERNEL(op::scatter_, CPU, scatter_kernel_);
EMBER_REGISTER_KERNEL(op::scatter_add, CPU, scatter_add_kernel);
EMBER_REGISTER_KERNEL(op::scatter_add_, CPU, scatter_add_kernel_);
EMBER_REGISTER_KERNEL(op::scatter_reduce, CPU, scatter_reduce_kernel);
EMBER_REGISTER_KERNEL(op::scatter_reduce_, CPU, scatter_reduce_kernel_);
EMBER_REGISTER_KERNEL(op::index_select, CPU, index_select_kernel);
EMBER_REGISTER_KERNEL(op::index_add, CPU, index_add_kernel);
EMBER_REGISTER_KERNEL(op::index_add_, CPU, index_add_kernel_);
EMBER_REGISTER_KERNEL(op::masked_fill_, CPU, masked_fill_kernel_);
EMBER_REGISTER_KERNEL(op::index, CPU, index_kernel);
EMBER_REGISTER_KERNEL(op::index_put, CPU, index_put_kernel);
EMBER_REGISTER_KERNEL(op::index_put_, CPU, index_put_kernel_);
EMBER_REGISTER_KERNEL(op::nonzero, CPU, nonzero_kernel);

}  // namespace ember::cpu
