// Joining, splitting and reordering: argument checks, shape rules and derivatives. Splits are
// narrow/select views and repeats are expand + copy, so autograd comes from those ops; cat,
// flip, roll and the take/place pair have kernels (cpu/shape_ops.cpp) and derivatives here.
#include "ember/autograd/rename.h"
#include "ember/core/memory_format.h"
#include "ember/core/shape.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/derivative.h"
#include "ember/ops/derivative_list.h"
#include "ember/ops/meta.h"
#include "ember/ops/ops.h"
#include "ember/schema/shape.h"

namespace ember {

using autograd::variable_list;

namespace {

// PyTorch's legacy rule: 1-d empty tensors may join anything and are skipped by cat.
bool skipped_in_cat(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

// cat's gradient: grad's slice of each input's length along dim; a skipped input gets an empty
// one.
autograd::variable_list cat_backward(const Tensor& grad, const std::vector<DimVector>& sizes,
                                     int64_t dim) {
  autograd::variable_list grads;
  int64_t offset = 0;
  for (const DimVector& s : sizes) {
    if (s.size() == 1 && s[0] == 0) {
      grads.push_back(zeros({0}, TensorOptions(grad.dtype()).device(grad.device())));
      continue;
    }
    const int64_t n = s[size_t(dim)];
    grads.push_back(narrow(grad, dim, offset, n));
    offset += n;
  }
  return grads;
}

DimVector negated(IntArrayRef v) {
  DimVector out;
  for (int64_t x : v) out.push_back(-x);
  return out;
}
}  // namespace

EMBER_DERIVATIVE_LIST(op::cat, "CatBackward0", (tensors, dim),
                      cat_backward(grad, tensors_sizes, dim));

EMBER_DERIVATIVE(op::flip, "FlipBackward0", (self, dims), flip(grad, dims));
EMBER_DERIVATIVE(op::roll, "RollBackward0", (self, shifts, dims),
                 dims.empty() ? grad : roll(grad, negated(shifts), dims));
// take and place are each other's derivative, so higher orders come free.
EMBER_DERIVATIVE(op::_take_along_dim, "TakeAlongDimBackward0", (self, dim, index),
                 _place_along_dim(grad, dim, index,
                                  self_sizes.empty() ? 1 : self_sizes[size_t(dim)]),
                 not_differentiable());
EMBER_DERIVATIVE(op::_place_along_dim, "PlaceAlongDimBackward0", (src, dim, index, size),
                 _take_along_dim(grad, dim, index), not_differentiable());

namespace {
Tensor atleast_1d(const Tensor& t) { return t.dim() == 0 ? reshape(t, {1}) : t; }
Tensor atleast_2d(const Tensor& t) {
  if (t.dim() == 0) return reshape(t, {1, 1});
  return t.dim() == 1 ? unsqueeze(t, 0) : t;
}

}  // namespace

namespace {
// cat's meta step (Note [Meta step] in ops/meta.h): the promoted dtype, the shape and, as torch's
// cat, the inputs' common suggested memory format (channels-last inputs give a channels-last
// result; row-major as soon as one input is row-major or they disagree). ember::cat validated the
// shapes and wrapped `dim`.
template <DispatchKey K>
Tensor cat_structured(TensorList tensors, int64_t dim) {
  ScalarType dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) {
    if constexpr (K == DispatchKey::Meta) meta::check_meta_devices("cat", {&t});
    dtype = promote_types(dtype, t.dtype());
  }
  const Device device = meta::device_of(K);
  const Tensor* first = nullptr;
  int64_t total = 0;
  MemoryFormat format = MemoryFormat::Preserve;
  for (const Tensor& t : tensors) {
    if (skipped_in_cat(t)) continue;
    if (!first) first = &t;
    total += t.sizes()[size_t(dim)];
    MemoryFormat f = suggest_memory_format(t.sizes(), t.strides());
    format = format == MemoryFormat::Preserve || format == f ? f : MemoryFormat::Contiguous;
  }
  if (!first) return empty({0}, dtype, device);
  DimVector shape(first->sizes());
  shape[size_t(dim)] = total;
  Tensor out = format == MemoryFormat::Contiguous
                   ? empty(shape, dtype, device)
                   : empty_strided(shape, strides_for(shape, format), dtype, device);
  if constexpr (K != DispatchKey::Meta)
    if (out.numel() > 0) meta::kernel(op::cat_out, K)(tensors, dim, out);
  return out;
}
EMBER_REGISTER_KERNEL(op::cat, CPU, cat_structured<DispatchKey::CPU>);
EMBER_REGISTER_KERNEL(op::cat, Meta, cat_structured<DispatchKey::Meta>);
}  // namespace

Tensor cat(TensorList tensors, int64_t dim) {
  EMBER_CHECK_VALUE(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const Tensor* first = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].dim() > 0, "zero-dimensional tensor (at position ", i,
                ") cannot be concatenated");
    if (!first && !skipped_in_cat(tensors[i])) first = &tensors[i];
  }
  if (first) {
    dim = maybe_wrap_dim(dim, first->dim());
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& t = tensors[i];
      if (skipped_in_cat(t)) continue;
      EMBER_CHECK(t.dim() == first->dim(), "Tensors must have same number of dimensions: got ",
                  first->dim(), " and ", t.dim());
      for (int64_t d = 0; d < t.dim(); ++d)
        EMBER_CHECK(d == dim || t.sizes()[size_t(d)] == first->sizes()[size_t(d)],
                    "Sizes of tensors must match except in dimension ", dim, ". Expected size ",
                    first->sizes()[size_t(d)], " but got size ", t.sizes()[size_t(d)],
                    " for tensor number ", i, " in the list.");
    }
  }
  return op::cat.call(tensors, dim);
}

Tensor stack(TensorList tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  dim = maybe_wrap_dim(dim, tensors[0].dim() + 1);
  for (size_t i = 1; i < tensors.size(); ++i)
    EMBER_CHECK(tensors[i].sizes().equals(tensors[0].sizes()),
                "stack expects each tensor to be equal size, but got ", tensors[0].sizes(),
                " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(unsqueeze(t, dim));
  // torch's node name (Note [Composite node names] in docs/ARCHITECTURE.md)
  Tensor out = cat(parts, dim);
  autograd::rename_history(out, "StackBackward0");
  return out;
}

Tensor hstack(TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "hstack expects a non-empty TensorList");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(atleast_1d(t));
  return cat(parts, parts[0].dim() == 1 ? 0 : 1);
}

Tensor vstack(TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "vstack expects a non-empty TensorList");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(atleast_2d(t));
  return cat(parts, 0);
}

std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {
  EMBER_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  EMBER_CHECK(split_size >= 0,
              "split expects split_size be non-negative, but got split_size=", split_size);
  dim = maybe_wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[size_t(dim)];
  EMBER_CHECK(split_size != 0 || size == 0,
              "split_size can only be 0 if dimension size is 0, but got dimension size of ", size);
  int64_t pieces = split_size == 0 ? 1 : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  DimVector starts, lengths;
  for (int64_t i = 0; i < pieces; ++i) {
    starts.push_back(i * split_size);
    lengths.push_back(std::min(split_size, size - i * split_size));
  }
  return piece_views(self, dim, starts, lengths, false, "SplitBackward0");
}

std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef sizes, int64_t dim) {
  EMBER_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  dim = maybe_wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[size_t(dim)], total = 0;
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0,
                "split_with_sizes expects split_sizes have only non-negative entries, but "
                "got split_sizes=",
                sizes);
    total += s;
  }
  EMBER_CHECK(total == size, "split_with_sizes expects split_sizes to sum exactly to ", size,
              " (input tensor's size at dimension ", dim, "), but got split_sizes=", sizes);
  DimVector starts;
  int64_t start = 0;
  for (int64_t s : sizes) {
    starts.push_back(start);
    start += s;
  }
  return piece_views(self, dim, starts, sizes, false, "SplitWithSizesBackward0");
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  EMBER_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  dim = maybe_wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[size_t(dim)];
  int64_t split_size = (size + chunks - 1) / chunks;
  // split would return one piece for an empty dim; chunk keeps the `chunks` empty pieces.
  if (split_size == 0 && size == 0)
    return split_with_sizes(self, DimVector(size_t(chunks), 0), dim);
  return split(self, split_size, dim);
}

std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  dim = maybe_wrap_dim(dim, self.dim(), /*scalar_ok=*/false);
  DimVector starts;
  for (int64_t i = 0; i < self.sizes()[size_t(dim)]; ++i) starts.push_back(i);
  return piece_views(self, dim, starts, DimVector(starts.size(), 1), true, "UnbindBackward0");
}

Tensor flip(const Tensor& self, IntArrayRef dims) {
  uint64_t mask = dim_mask(dims, self.dim(), "flip");
  DimVector d;  // only dims where flipping moves something
  for (int64_t i = 0; i < self.dim(); ++i)
    if ((mask >> i & 1) && self.sizes()[size_t(i)] > 1) d.push_back(i);
  return op::flip.call(self, d);
}

Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  EMBER_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty()) {
    EMBER_CHECK(shifts.size() == 1, "shifts and dimensions must align. shifts: ", shifts.size(),
                ", dims:", dims.size());
    Tensor out = view(roll(reshape(self, {-1}), shifts, {0}), self.sizes());
    autograd::rename_history(out, "RollBackward0");  // torch's one roll over the flattened self
    return out;
  }
  EMBER_CHECK(shifts.size() == dims.size(),
              "shifts and dimensions must align. shifts: ", shifts.size(), ", dims:", dims.size());
  // Repeated dims add up; shifts are normalized to [0, size) and no-op dims dropped.
  DimVector total(size_t(self.dim()), 0);
  for (size_t i = 0; i < dims.size(); ++i)
    total[size_t(maybe_wrap_dim(dims[i], self.dim(), /*scalar_ok=*/false))] += shifts[i];
  DimVector s, d;
  for (int64_t i = 0; i < self.dim(); ++i) {
    int64_t n = self.sizes()[size_t(i)];
    int64_t r = n == 0 ? 0 : ((total[size_t(i)] % n) + n) % n;
    if (r == 0) continue;
    s.push_back(r);
    d.push_back(i);
  }
  return op::roll.call(self, s, d);
}

Tensor repeat(const Tensor& self, IntArrayRef repeats) {
  EMBER_CHECK(int64_t(repeats.size()) >= self.dim(),
              "Number of dimensions of repeat dims can not "
              "be smaller than number of dimensions of tensor");
  size_t pad = repeats.size() - size_t(self.dim());
  DimVector target, inner, expanded;  // [s0, ...], [1, s0, 1, s1, ...], [r0, s0, r1, s1, ...]
  for (size_t i = 0; i < repeats.size(); ++i) {
    int64_t s = i < pad ? 1 : self.sizes()[i - pad];
    int64_t t = 0;
    EMBER_CHECK(!__builtin_mul_overflow(s, repeats[i], &t),
                "repeat: numel: integer multiplication overflow");
    target.push_back(t);
    inner.push_back(1);
    inner.push_back(s);
    expanded.push_back(repeats[i]);
    expanded.push_back(s);
  }
  for (int64_t t : target)
    EMBER_CHECK(t >= 0, "Trying to create tensor with negative dimension ", t, ": ", target);
  // clone always copies, as repeat must, even when every repeat is 1.
  Tensor out = view(clone(expand(reshape(self, inner), expanded)), target);
  autograd::rename_history(out, "RepeatBackward0");
  return out;
}

Tensor tile(const Tensor& self, IntArrayRef reps) {
  DimVector r;
  for (int64_t i = int64_t(reps.size()); i < self.dim(); ++i) r.push_back(1);
  for (int64_t v : reps) r.push_back(v);
  return repeat(self, r);
}

Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim) {
  EMBER_CHECK(repeats >= 0, "Repeats must be non-negative");
  Tensor x = dim ? self : reshape(self, {-1});
  int64_t d = maybe_wrap_dim(dim.value_or(0), x.dim());
  Tensor u = unsqueeze(x, d + 1);
  DimVector shape(u.sizes());
  shape[size_t(d) + 1] = repeats;
  return flatten(clone(expand(u, shape)), d, d + 1);
}

Tensor repeat_interleave(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim) {
  EMBER_CHECK(repeats.dim() <= 1, "repeats must be 0-dim or 1-dim tensor");
  // One repeat count broadcasts over the dim.
  if (repeats.numel() == 1 && is_integral(repeats.dtype(), false))
    return repeat_interleave(self, repeats.item<int64_t>(), dim);
  Tensor x = dim ? self : reshape(self, {-1});
  int64_t d = maybe_wrap_dim(dim.value_or(0), x.dim());
  EMBER_CHECK_INDEX(x.dim() > 0,
                    "Dimension out of range (expected to be in range of [-1, 0], but "
                    "got 1)");  // PyTorch's error here, from its unsqueeze(dim + 1)
  int64_t size = x.sizes()[size_t(d)];
  EMBER_CHECK(repeats.numel() == size,
              "repeats must have the same size as input along dim, but "
              "got repeats.size(0) = ",
              repeats.numel(), " and input.size(", d, ") = ", size);
  Tensor idx = repeat_interleave(repeats);
  DimVector ishape(size_t(x.dim()), 1), shape(x.sizes());
  ishape[size_t(d)] = shape[size_t(d)] = idx.numel();
  return _take_along_dim(x, d, expand(reshape(idx, ishape), shape));
}

Tensor repeat_interleave(const Tensor& repeats) {
  EMBER_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  return op::repeat_interleave.call(repeats);
}

std::vector<Tensor> meshgrid(TensorList tensors, const std::string& indexing) {
  EMBER_CHECK(!tensors.empty(), "meshgrid expects a non-empty TensorList");
  EMBER_CHECK(indexing == "ij" || indexing == "xy",
              "torch.meshgrid: indexing must be one of "
              "\"xy\" or \"ij\", but received: ",
              indexing);
  for (const Tensor& t : tensors) {
    EMBER_CHECK(t.dim() <= 1,
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                "got a tensor of shape ",
                t.sizes());
    EMBER_CHECK(t.dtype() == tensors[0].dtype(),
                "meshgrid expects all tensors to have the same dtype");
  }
  // "xy" is "ij" with the first two inputs' roles swapped in the output shape.
  std::vector<Tensor> in(tensors.begin(), tensors.end());
  bool swap = indexing == "xy" && in.size() >= 2;
  if (swap) std::swap(in[0], in[1]);
  DimVector shape;
  for (const Tensor& t : in) shape.push_back(t.numel());
  std::vector<Tensor> out;
  for (size_t i = 0; i < in.size(); ++i) {
    DimVector view_shape(in.size(), 1);
    view_shape[i] = shape[i];
    out.push_back(expand(reshape(in[i], view_shape), shape));
  }
  if (swap) std::swap(out[0], out[1]);
  return out;
}

Tensor broadcast_to(const Tensor& self, IntArrayRef shape) { return expand(self, shape); }

Tensor _take_along_dim(const Tensor& self, int64_t dim, const Tensor& index) {
  dim = maybe_wrap_dim(dim, self.dim());
  return op::_take_along_dim.call(self, dim, index);
}

Tensor _place_along_dim(const Tensor& src, int64_t dim, const Tensor& index, int64_t size) {
  dim = maybe_wrap_dim(dim, src.dim());
  return op::_place_along_dim.call(src, dim, index, size);
}

}  // namespace ember
