// View ops are device-agnostic geometry: they record their own autograd node instead of going
// through the dispatcher (there is no kernel to choose).
#include "ember/ops/view.h"

#include <numeric>

#include "ember/autograd/node.h"
#include "ember/core/complex_view.h"
#include "ember/core/profiler.h"
#include "ember/core/shape.h"
#include "ember/dispatch/profile_range.h"
#include "ember/ops/ops.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// Views remember their base (the root of a chain of views: Tensor._base, as torch's). Under grad
// mode they are also autograd views: a later in-place write through the view must rebase the
// base's history (Note [Writes into views]). Inference mode records nothing (it stays cheap).
void mark_view(const Tensor& view, const Tensor& self) {
  if (InferenceMode::is_enabled()) return;
  auto& m = autograd::meta(view);
  m.is_view = GradMode::is_enabled();
  auto* sm = autograd::meta_if(self);
  m.view_base = (sm && sm->view_base.defined()) ? sm->view_base : self;
}

// A view of `self` with the given geometry; `backward` maps the view's grad to self's grad.
Tensor make_view(const Tensor& self, IntArrayRef sizes, IntArrayRef strides, int64_t offset,
                 const char* node, std::function<Tensor(const Tensor& grad)> backward) {
  // torch's views other than view itself make their geometry through aten::as_strided
  // (Note [Profiler rows]).
  if (profiler::enabled()) [[unlikely]]
    if (std::string_view(node) != "ViewBackward0" &&
        std::string_view(node) != "UnsafeViewBackward0")
      profiler::mark_op("as_strided", self, sizes, strides, offset);
  Tensor out = self.as_strided_view(sizes, strides, offset);
  bool grad = autograd::any_requires_grad({&self});
  if (grad) {
    autograd::record(node, {self}, {out}, [backward](FunctionNode&, const variable_list& g) {
      return variable_list{backward(g[0])};
    });
  }
  mark_view(out, self);
  return out;
}

DimVector shape_of(const Tensor& t) { return DimVector(t.sizes()); }

// 1 + the largest storage index a geometry reaches.
int64_t extent_of(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  int64_t e = offset + 1;
  for (size_t i = 0; i < sizes.size(); ++i) e += (std::max<int64_t>(sizes[i], 1) - 1) * strides[i];
  return e;
}

}  // namespace

Tensor view(const Tensor& self, IntArrayRef shape) {
  profiler::OpRange prof_range("view", self, shape);
  DimVector sizes = infer_size(shape, self.numel());
  auto strides = view_strides(self.sizes(), self.strides(), sizes);
  EMBER_CHECK(strides.has_value(),
              "view size is not compatible with input tensor's size and "
              "stride (at least one dimension spans across two contiguous subspaces). Use "
              ".reshape(...) instead. (input shape ",
              self.sizes(), ", requested ", shape, ")");
  DimVector in = shape_of(self);
  return make_view(self, sizes, *strides, self.storage_offset(), "ViewBackward0",
                   [in](const Tensor& g) { return reshape(g, in); });
}

// A view whose node torch names UnsafeViewBackward0: the reshape ending matmul's folded and
// batched paths (torch's _unsafe_view). Declared where it is used (ops/linalg.cpp).
Tensor unsafe_view(const Tensor& self, IntArrayRef shape) {
  profiler::OpRange prof_range("_unsafe_view", self, shape);
  DimVector sizes = infer_size(shape, self.numel());
  auto strides = view_strides(self.sizes(), self.strides(), sizes);
  EMBER_ASSERT(strides.has_value());
  DimVector in = shape_of(self);
  return make_view(self, sizes, *strides, self.storage_offset(), "UnsafeViewBackward0",
                   [in](const Tensor& g) { return reshape(g, in); });
}

Tensor alias(const Tensor& self) {
  return make_view(self, self.sizes(), self.strides(), self.storage_offset(), "AliasBackward0",
                   [](const Tensor& g) { return g; });
}

Tensor view_dtype(const Tensor& self, ScalarType dtype) {
  // As torch's, the result never requires grad: the op is outside autograd, not refused.
  const int64_t from = int64_t(self.element_size()), to = int64_t(element_size(dtype));
  DimVector sizes = shape_of(self), strides(self.strides());
  int64_t offset = self.storage_offset();
  if (from != to) {
    // torch's rule: the last dim (contiguous) absorbs the size change; every other stride and
    // the offset are rescaled, so they must divide evenly when the element grows.
    auto what = [&] {
      return std::string(" to view ") + std::string(scalar_type_name(self.dtype())) + " as " +
             std::string(scalar_type_name(dtype)) + " (different element sizes)";
    };
    const int64_t last = self.dim() - 1;
    EMBER_CHECK(self.dim() > 0, "self.dim() cannot be 0", what());
    EMBER_CHECK(strides[last] == 1, "self.stride(-1) must be 1", what(), ", but got ",
                strides[last]);
    if (to > from) {
      const int64_t ratio = to / from;
      EMBER_CHECK(sizes[last] % ratio == 0, "self.size(-1) must be divisible by ", ratio, what(),
                  ", but got ", sizes[last]);
      EMBER_CHECK(offset % ratio == 0, "self.storage_offset() must be divisible by ", ratio, what(),
                  ", but got ", offset);
      for (int64_t i = 0; i < last; ++i)
        EMBER_CHECK(strides[i] % ratio == 0, "self.stride(", i, ") must be divisible by ", ratio,
                    what(), ", but got ", strides[i]);
      for (int64_t i = 0; i < last; ++i) strides[i] /= ratio;
      sizes[last] /= ratio;
      offset /= ratio;
    } else {
      const int64_t ratio = from / to;
      for (int64_t i = 0; i < last; ++i) strides[i] *= ratio;
      sizes[last] *= ratio;
      offset *= ratio;
    }
  }
  return Tensor(make_intrusive<TensorImpl>(self.storage(), dtype, sizes, strides, offset));
}

Tensor view_as_real(const Tensor& self) {
  Tensor out = real_pairs_view(self);
  if (autograd::any_requires_grad({&self}))
    autograd::record("ViewAsRealBackward0", {self}, {out},
                     [](FunctionNode&, const variable_list& g) {
                       return variable_list{view_as_complex(contiguous(g[0]))};
                     });
  mark_view(out, self);
  return out;
}

Tensor view_as_complex(const Tensor& self) {
  Tensor out = complex_pairs_view(self);
  if (autograd::any_requires_grad({&self}))
    autograd::record(
        "ViewAsComplexBackward0", {self}, {out},
        [](FunctionNode&, const variable_list& g) { return variable_list{view_as_real(g[0])}; });
  mark_view(out, self);
  return out;
}

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  profiler::OpRange prof_range("reshape", self, shape);
  DimVector sizes = infer_size(shape, self.numel());
  if (view_strides(self.sizes(), self.strides(), sizes)) return view(self, sizes);
  // torch's _unsafe_view of a contiguous clone (UnsafeViewBackward0)
  Tensor out = unsafe_view(contiguous(self), sizes);
  if (auto* m = autograd::meta_if(out)) {  // a copy, as torch's: not a view of the temporary
    m->view_base = Tensor();
    m->is_view = false;
  }
  return out;
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  profiler::OpRange prof_range("transpose", self, dim0, dim1);
  int64_t n = self.dim();
  dim0 = maybe_wrap_dim(dim0, n);
  dim1 = maybe_wrap_dim(dim1, n);
  if (n == 0)
    return make_view(self, {}, {}, self.storage_offset(), "TransposeBackward0",
                     [](const Tensor& g) { return g; });
  DimVector sizes = shape_of(self), strides(self.strides());
  std::swap(sizes[size_t(dim0)], sizes[size_t(dim1)]);
  std::swap(strides[size_t(dim0)], strides[size_t(dim1)]);
  return make_view(self, sizes, strides, self.storage_offset(), "TransposeBackward0",
                   [dim0, dim1](const Tensor& g) { return transpose(g, dim0, dim1); });
}

Tensor t(const Tensor& self) {
  profiler::OpRange prof_range("t", self);
  EMBER_CHECK(self.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ",
              self.dim(), "D");
  // torch's own node (TBackward0), under the transpose range torch's t opens.
  profiler::OpRange inner("transpose", self, 0, 1);
  DimVector sizes = shape_of(self), strides(self.strides());
  if (self.dim() == 2) {
    std::swap(sizes[0], sizes[1]);
    std::swap(strides[0], strides[1]);
  }
  return make_view(self, sizes, strides, self.storage_offset(), "TBackward0",
                   [](const Tensor& g) { return t(g); });
}

Tensor matrix_transpose(const Tensor& self) {
  EMBER_CHECK(self.dim() >= 2,
              "tensor.mT is only supported on matrices or batches of matrices. "
              "Got ",
              self.dim(), "-D tensor.");
  return transpose(self, -2, -1);
}

Tensor permute(const Tensor& self, IntArrayRef dims) {
  profiler::OpRange prof_range("permute", self, dims);
  int64_t n = self.dim();
  EMBER_CHECK(
      int64_t(dims.size()) == n,
      "permute(sparse_coo): number of dimensions in the tensor "
      "input does not match the length of the desired ordering of dimensions i.e. input.dim() = ",
      n, " is not equal to len(dims) = ", dims.size());
  dim_mask(dims, n, "permute");
  DimVector sizes(static_cast<size_t>(n)), strides(static_cast<size_t>(n)),
      inverse(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = maybe_wrap_dim(dims[size_t(i)], n);
    sizes[size_t(i)] = self.sizes()[size_t(d)];
    strides[size_t(i)] = self.strides()[size_t(d)];
    inverse[size_t(d)] = i;
  }
  return make_view(self, sizes, strides, self.storage_offset(), "PermuteBackward0",
                   [inverse](const Tensor& g) { return permute(g, inverse); });
}

namespace {
// torch names the three overloads' nodes apart: squeeze() SqueezeBackward0, squeeze(dim)
// SqueezeBackward1, squeeze(dims) SqueezeBackward2 (a one-element dims reads as squeeze(dim)).
Tensor squeeze_named(const Tensor& self, IntArrayRef dims, const char* name) {
  profiler::OpRange prof_range("squeeze", self, dims);
  uint64_t mask = self.dim() == 0 ? 0 : dim_mask(dims, self.dim(), "squeeze");
  if (self.dim() == 0)
    for (int64_t d : dims) maybe_wrap_dim(d, 0);
  DimVector sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if ((mask >> d & 1) && self.sizes()[size_t(d)] == 1) continue;
    sizes.push_back(self.sizes()[size_t(d)]);
    strides.push_back(self.strides()[size_t(d)]);
  }
  DimVector in = shape_of(self);
  return make_view(self, sizes, strides, self.storage_offset(), name,
                   [in](const Tensor& g) { return reshape(g, in); });
}
}  // namespace

Tensor squeeze(const Tensor& self) {
  DimVector dims;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (self.sizes()[size_t(d)] == 1) dims.push_back(d);
  return squeeze_named(self, dims, "SqueezeBackward0");
}

Tensor squeeze(const Tensor& self, IntArrayRef dims) {
  return squeeze_named(self, dims, dims.size() == 1 ? "SqueezeBackward1" : "SqueezeBackward2");
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  profiler::OpRange prof_range("unsqueeze", self, dim);
  dim = maybe_wrap_dim(dim, self.dim() + 1);
  DimVector sizes = shape_of(self), strides(self.strides());
  int64_t st = dim < self.dim() ? sizes[size_t(dim)] * strides[size_t(dim)] : 1;
  sizes.insert(size_t(dim), 1);
  strides.insert(size_t(dim), st);
  return make_view(self, sizes, strides, self.storage_offset(), "UnsqueezeBackward0",
                   [dim](const Tensor& g) { return squeeze(g, {dim}); });
}

Tensor expand(const Tensor& self, IntArrayRef sizes) {
  profiler::OpRange prof_range("expand", self, sizes, false);
  int64_t n = int64_t(sizes.size());
  EMBER_CHECK(n >= self.dim(), "expand: the number of sizes provided (", n,
              ") must be greater or equal to the number of dimensions in the tensor (", self.dim(),
              ")");
  DimVector out_sizes(static_cast<size_t>(n)), out_strides(static_cast<size_t>(n));
  int64_t off = n - self.dim();
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t want = sizes[size_t(i)];
    if (i < off) {
      EMBER_CHECK(want >= 0, "expand: the expanded size of the tensor (", want,
                  ") isn't allowed in a leading, non-existing dimension ", i);
      out_sizes[size_t(i)] = want;
      out_strides[size_t(i)] = 0;
      continue;
    }
    int64_t have = self.sizes()[size_t(i - off)];
    if (want == -1) want = have;
    // a negative size other than -1 would make a view with a negative element count
    EMBER_CHECK(want >= 0, "expand: expected sizes >= 0 (or -1 to keep one); got ", want,
                " at dimension ", i, " for target sizes ", sizes);
    EMBER_CHECK(have == want || have == 1, "The expanded size of the tensor (", want,
                ") must match the existing size (", have, ") at non-singleton dimension ", i,
                ".  Target sizes: ", sizes, ".  Tensor sizes: ", self.sizes());
    out_sizes[size_t(i)] = want;
    out_strides[size_t(i)] = have == want ? self.strides()[size_t(i - off)] : 0;
  }
  DimVector in = shape_of(self);
  return make_view(self, out_sizes, out_strides, self.storage_offset(), "ExpandBackward0",
                   [in](const Tensor& g) { return sum_to(g, in); });
}

Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> end, int64_t step) {
  profiler::OpRange prof_range("slice", self, dim, start, end, step);
  EMBER_CHECK(self.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  dim = maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK(step > 0, "slice step must be positive; got ", step);
  int64_t size = self.sizes()[size_t(dim)];
  int64_t s = start.value_or(0), e = end.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  DimVector sizes = shape_of(self), strides(self.strides());
  sizes[size_t(dim)] = (e - s + step - 1) / step;
  strides[size_t(dim)] *= step;
  DimVector in = shape_of(self);
  return make_view(self, sizes, strides, self.storage_offset() + s * self.strides()[size_t(dim)],
                   "SliceBackward0", [in, dim, s, e, step](const Tensor& g) {
                     Tensor z = zeros(in, TensorOptions(g.dtype()).device(g.device()));
                     Tensor part = slice(z, dim, s, e, step);
                     copy_(part, g);
                     return z;
                   });
}

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  profiler::OpRange prof_range("narrow", self, dim, start, length);
  EMBER_CHECK(self.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  EMBER_CHECK(length >= 0, "narrow(): length must be non-negative.");  // torch's order
  dim = maybe_wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[size_t(dim)];
  EMBER_CHECK_INDEX(start >= -size && start <= size,
                    "start out of range (expected to be in range "
                    "of [",
                    -size, ", ", size, "], but got ", start, ")");
  if (start < 0) start += size;
  // length <= size - start: start + length could overflow past a huge length
  EMBER_CHECK(length <= size - start, "start (", start, ") + length (", length,
              ") exceeds dimension size (", size, ").");
  return slice(self, dim, start, start + length, 1);
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  profiler::OpRange prof_range("select", self, dim, index);
  EMBER_CHECK_INDEX(self.dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  dim = maybe_wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[size_t(dim)];
  EMBER_CHECK_INDEX(index >= -size && index < size, "index ", index,
                    " is out of bounds for dimension ", dim, " with size ", size);
  if (index < 0) index += size;
  DimVector sizes = shape_of(self), strides(self.strides());
  int64_t offset = self.storage_offset() + index * strides[size_t(dim)];
  sizes.erase(size_t(dim));
  strides.erase(size_t(dim));
  DimVector in = shape_of(self);
  return make_view(self, sizes, strides, offset, "SelectBackward0",
                   [in, dim, index](const Tensor& g) {
                     Tensor z = zeros(in, TensorOptions(g.dtype()).device(g.device()));
                     Tensor part = select(z, dim, index);
                     copy_(part, g);
                     return z;
                   });
}

// Note [Multi-output views]
// split, chunk and unbind return views whose gradients one node assembles: the input's gradient
// is written once, the pieces' gradients side by side. With a node per piece, each piece's
// gradient would be a zero-filled tensor of the input's size, and the engine would add them all;
// an LSTM unbinding a long sequence or chunking its gates paid that at every step.
std::vector<Tensor> piece_views(const Tensor& self, int64_t dim, IntArrayRef starts,
                                IntArrayRef lengths, bool drop_dim, const char* node) {
  DimVector sizes = shape_of(self), strides(self.strides());
  if (drop_dim) {
    sizes.erase(size_t(dim));
    strides.erase(size_t(dim));
  }
  std::vector<Tensor> out;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (!drop_dim) sizes[size_t(dim)] = lengths[i];
    out.push_back(
        self.as_strided_view(sizes, strides, self.storage_offset() + starts[i] * self.stride(dim)));
  }
  if (!out.empty() && autograd::any_requires_grad({&self})) {
    DimVector in = shape_of(self), st(starts), len(lengths);
    autograd::record(
        node, {self}, out, [in, st, len, dim, drop_dim](FunctionNode&, const variable_list& g) {
          Tensor z;
          for (size_t i = 0; i < g.size(); ++i) {
            if (!g[i].defined()) continue;
            if (!z.defined()) z = zeros(in, TensorOptions(g[i].dtype()).device(g[i].device()));
            Tensor part = drop_dim ? select(z, dim, st[i]) : narrow(z, dim, st[i], len[i]);
            copy_(part, g[i]);
          }
          return variable_list{z};
        });
  }
  for (const Tensor& v : out) mark_view(v, self);
  return out;
}

Tensor as_strided(const Tensor& self, IntArrayRef sizes, IntArrayRef strides,
                  std::optional<int64_t> storage_offset) {
  EMBER_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  int64_t offset = storage_offset.value_or(self.storage_offset());
  EMBER_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  bool empty_view = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    EMBER_CHECK(sizes[i] >= 0, "as_strided: negative size ", sizes[i]);
    EMBER_CHECK(
        strides[i] >= 0,
        "as_strided: Negative strides are not supported at the moment, got strides: ", strides);
    if (sizes[i] == 0) empty_view = true;
  }
  int64_t extent = extent_of(sizes, strides, offset);
  int64_t capacity = int64_t(self.storage()->nbytes() / self.element_size());
  EMBER_CHECK(empty_view || extent <= capacity, "setStorage: sizes ", sizes, ", strides ", strides,
              ", storage offset ", offset, ", and itemsize ", self.element_size(),
              " requiring a storage size of ", extent * int64_t(self.element_size()),
              " are out of bounds for storage of size ", self.storage()->nbytes());
  DimVector in = shape_of(self), in_strides(self.strides());
  int64_t in_offset = self.storage_offset();
  DimVector sz(sizes), st(strides);
  return make_view(
      self, sizes, strides, offset, "AsStridedBackward0",
      [in, in_strides, in_offset, sz, st, offset](const Tensor& g) {
        // Label each storage slot the input covers with the input's flat index,
        // read the labels through the view's geometry, and scatter-add the grad:
        // correct even when windows overlap.
        int64_t n = numel_of(in);
        int64_t span = std::max(extent_of(sz, st, offset), extent_of(in, in_strides, in_offset));
        Tensor labels = full({span}, Scalar(-1), kLong);
        Tensor slots = as_strided(labels, in, in_strides, in_offset);
        copy_(slots, reshape(arange(0, n, 1, kLong), in));
        Tensor idx = reshape(as_strided(labels, sz, st, offset), {-1});
        Tensor flat = index_add(zeros({n}, TensorOptions(g.dtype()).device(g.device())), 0, idx,
                                reshape(g, {-1}));
        return reshape(flat, in);
      });
}

Tensor unfold(const Tensor& self, int64_t dim, int64_t size, int64_t step) {
  profiler::OpRange prof_range("unfold", self, dim, size, step);
  int64_t n = self.dim();
  dim = maybe_wrap_dim(dim, n);
  int64_t len = n == 0 ? 1 : self.sizes()[size_t(dim)];
  EMBER_CHECK(size <= len, "maximum size for tensor at dimension ", dim, " is ", len,
              " but size is ", size);
  EMBER_CHECK(step > 0, "step is ", step, " but must be > 0");
  DimVector sizes = shape_of(self), strides(self.strides());
  int64_t st = n == 0 ? 1 : strides[size_t(dim)];
  if (n > 0) {
    sizes[size_t(dim)] = (len - size) / step + 1;
    strides[size_t(dim)] = st * step;
  }
  sizes.push_back(size);
  strides.push_back(st);
  return as_strided(self, sizes, strides, self.storage_offset());
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  profiler::OpRange prof_range("flatten", self, start_dim, end_dim);
  if (self.dim() == 0) return reshape(self, {1});
  start_dim = maybe_wrap_dim(start_dim, self.dim());
  end_dim = maybe_wrap_dim(end_dim, self.dim());
  EMBER_CHECK(start_dim <= end_dim,
              "flatten() has invalid args: start_dim cannot come after end_dim");
  DimVector sizes;
  for (int64_t d = 0; d < start_dim; ++d) sizes.push_back(self.sizes()[size_t(d)]);
  int64_t m = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) m *= self.sizes()[size_t(d)];
  sizes.push_back(m);
  for (int64_t d = end_dim + 1; d < self.dim(); ++d) sizes.push_back(self.sizes()[size_t(d)]);
  // torch's flatten reshapes without the reshape op: a view where one exists.
  if (view_strides(self.sizes(), self.strides(), sizes)) return view(self, sizes);
  return reshape(self, sizes);
}

Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  dim = maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  DimVector inner = infer_size(sizes, self.sizes()[size_t(dim)]);
  DimVector out;
  for (int64_t d = 0; d < dim; ++d) out.push_back(self.sizes()[size_t(d)]);
  for (int64_t s : inner) out.push_back(s);
  for (int64_t d = dim + 1; d < self.dim(); ++d) out.push_back(self.sizes()[size_t(d)]);
  return view(self, out);
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  profiler::OpRange prof_range("diagonal", self, offset, dim1, dim2);
  int64_t n = self.dim();
  dim1 = maybe_wrap_dim(dim1, n);
  dim2 = maybe_wrap_dim(dim2, n);
  EMBER_CHECK(dim1 != dim2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t s1 = self.sizes()[size_t(dim1)], s2 = self.sizes()[size_t(dim2)];
  int64_t len = offset >= 0 ? std::max<int64_t>(std::min(s1, s2 - offset), 0)
                            : std::max<int64_t>(std::min(s1 + offset, s2), 0);
  int64_t start = self.storage_offset();
  if (len > 0)
    start += offset >= 0 ? offset * self.strides()[size_t(dim2)]
                         : -offset * self.strides()[size_t(dim1)];
  DimVector sizes, strides;
  for (int64_t d = 0; d < n; ++d) {
    if (d == dim1 || d == dim2) continue;
    sizes.push_back(self.sizes()[size_t(d)]);
    strides.push_back(self.strides()[size_t(d)]);
  }
  sizes.push_back(len);
  strides.push_back(self.strides()[size_t(dim1)] + self.strides()[size_t(dim2)]);
  DimVector in = shape_of(self);
  return make_view(self, sizes, strides, start, "DiagonalBackward0",
                   [in, offset, dim1, dim2](const Tensor& g) {
                     Tensor z = zeros(in, TensorOptions(g.dtype()).device(g.device()));
                     Tensor d = diagonal(z, offset, dim1, dim2);
                     copy_(d, g);
                     return z;
                   });
}

Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  int64_t n = self.dim();
  EMBER_CHECK(source.size() == destination.size(),
              "movedim: Invalid source or destination dims: "
              "source (",
              source, " dims) should contain the same number of dims as destination (", destination,
              " dims)");
  // torch wraps every source and destination dim (IndexError) before it looks for repeats
  for (int64_t d : source) maybe_wrap_dim(d, n);
  for (int64_t d : destination) maybe_wrap_dim(d, n);
  auto mask_of = [n](IntArrayRef dims, const char* which) {
    uint64_t mask = 0;
    for (int64_t d : dims) {
      int64_t w = maybe_wrap_dim(d, n);
      EMBER_CHECK(!(mask >> w & 1), "movedim: repeated dim in `", which, "` (", dims, ")");
      mask |= uint64_t(1) << w;
    }
    return mask;
  };
  uint64_t smask = mask_of(source, "source");
  uint64_t dmask = mask_of(destination, "destination");
  DimVector order(static_cast<size_t>(n), -1);
  for (size_t i = 0; i < source.size(); ++i)
    order[size_t(maybe_wrap_dim(destination[i], n))] = maybe_wrap_dim(source[i], n);
  int64_t next = 0;
  for (int64_t d = 0; d < n; ++d) {
    if (dmask >> d & 1) continue;
    while (smask >> next & 1) ++next;
    order[size_t(d)] = next++;
  }
  return permute(self, order);
}

std::vector<Tensor> broadcast_tensors(TensorList tensors) {
  DimVector shape;
  for (const Tensor& t : tensors) shape = broadcast_shapes(shape, t.sizes(), "broadcast_tensors");
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(t.sizes().equals(shape) ? t : expand(t, shape));
  return out;
}

Tensor sum_to(const Tensor& self, IntArrayRef shape) {
  if (self.sizes().equals(shape)) return self;
  int64_t lead = self.dim() - int64_t(shape.size());
  DimVector dims;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (d < lead || (shape[size_t(d - lead)] == 1 && self.sizes()[size_t(d)] != 1))
      dims.push_back(d);
  Tensor r = dims.empty() ? self : sum(self, dims, true, std::nullopt);
  // torch's sum_to views its sum (a view always exists for the fresh sum; no reshape row)
  if (lead > 0 || !r.sizes().equals(shape))
    r = view_strides(r.sizes(), r.strides(), shape) ? view(r, shape) : reshape(r, shape);
  return r;
}

}  // namespace ember
