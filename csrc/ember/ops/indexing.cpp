// Indexing with Python's rules: advanced indexing reduced to the kernels' terms, and
// self[idx...] / self[idx...] = value (Tensor.__getitem__/__setitem__).
#include "ember/core/shape.h"
#include "ember/ops/ops.h"

namespace ember {

using IndexList = std::vector<std::optional<Tensor>>;

// Note [Advanced indexing]
// self[i0, i1, ...] with index tensors follows numpy: a bool (or uint8) mask becomes its
// nonzero() coordinates, one int64 tensor per mask dim; all index tensors broadcast to one index
// shape; the result is self's shape with the indexed dims replaced by that shape — where they
// were if the indexed dims are adjacent, in front if an unindexed dim separates them. The kernels
// see `src`, self restrided to the result shape with stride 0 over the index dims, so element
// i of the result lives at src's address for i plus sum_k index_k[i] * stride_k: one offset per
// index position, computed and bounds-checked before any element moves.

namespace detail {

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
      mask = reshape(mask, {1});
    }
    if (d + size_t(mask.dim()) > sizes.size()) too_many();
    for (int64_t j = 0; j < mask.dim(); ++j)
      EMBER_CHECK_INDEX(mask.sizes()[size_t(j)] == sizes[d + size_t(j)], "The shape of the mask ",
                        mask.sizes(), " at index ", j,
                        " does not match the shape of the indexed tensor ", sizes, " at index ",
                        d + size_t(j));
    Tensor nz = nonzero(mask);
    for (int64_t j = 0; j < mask.dim(); ++j) idx.push_back(select(nz, 1, j));
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
    r.indices.push_back(expand(*idx[p], r.index_shape));
    r.sizes.push_back(sizes[p]);
    r.strides.push_back(strides[p]);
    r.dims.push_back(user_dims[p]);
  }
  return r;
}

}  // namespace detail

namespace {

// Note [Python indexing]
// Entries apply left to right on a view of self: an int selects (its dim disappears), a slice
// narrows, None and bool scalars insert a size-1 dim, Ellipsis stands for the dims no other entry
// claims. Tensors are set aside, each at the dim it claims (a mask claims one dim per mask dim),
// for one advanced-indexing call on the view afterwards. So ints act before tensors, as in
// PyTorch: t[0, :, i] keeps i's dims in place where numpy would move them to the front. A 0-d
// integer tensor acts as an int, a 0-d bool tensor as a bool.
struct Applied {
  Tensor view;                                  // self after the basic entries
  std::vector<std::optional<Tensor>> advanced;  // tensor entries, by the view's dims
};

bool is_mask(const Tensor& t) { return t.dtype() == kBool || t.dtype() == kByte; }
bool is_int_scalar(const Tensor& t) {
  return t.dim() == 0 && is_integral(t.dtype(), false) && t.dtype() != kByte;
}

// The dims of self an entry consumes.
int64_t claimed(const TensorIndex& entry) {
  if (std::holds_alternative<int64_t>(entry) || std::holds_alternative<Slice>(entry)) return 1;
  if (const Tensor* t = std::get_if<Tensor>(&entry)) {
    if (t->dim() == 0) return is_mask(*t) ? 0 : 1;
    return is_mask(*t) ? t->dim() : 1;
  }
  return 0;  // None, Ellipsis, bool
}

Applied apply_indices(const Tensor& self, const std::vector<TensorIndex>& indices) {
  int64_t specified = 0;
  for (const auto& entry : indices) specified += claimed(entry);
  EMBER_CHECK_INDEX(self.dim() > 0 || specified == 0,
                    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                    "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
  EMBER_CHECK_INDEX(specified <= self.dim(), "too many indices for tensor of dimension ",
                    self.dim());
  Applied r{self, {}};
  int64_t dim = 0, covered = 0;  // dim: next dim of the view; covered: dims `advanced` spans
  auto record = [&](const Tensor& t) {
    for (; covered < dim; ++covered) r.advanced.emplace_back();
    r.advanced.emplace_back(t);
    int64_t n = is_mask(t) ? t.dim() : 1;
    covered += n;
    dim += n;
  };
  // A bool scalar: a new size-1 dim, kept whole (true) or emptied (false).
  auto record_bool = [&](bool b) {
    r.view = unsqueeze(r.view, dim);
    record(b ? zeros({1}, kLong) : empty({0}, kLong));
  };
  for (const auto& entry : indices) {
    if (const int64_t* i = std::get_if<int64_t>(&entry)) {
      r.view = select(r.view, dim, *i);
    } else if (const Slice* s = std::get_if<Slice>(&entry)) {
      EMBER_CHECK_VALUE(s->step > 0, s->step == 0 ? "slice step cannot be zero"
                                                  : "step must be greater than zero");
      bool full = (!s->start || *s->start == 0) && !s->stop && s->step == 1;
      if (!full) r.view = slice(r.view, dim, s->start, s->stop, s->step);
      ++dim;
    } else if (std::holds_alternative<NoneIndex>(entry)) {
      r.view = unsqueeze(r.view, dim);
      ++dim;
    } else if (std::holds_alternative<EllipsisIndex>(entry)) {
      dim += self.dim() - specified;  // as in PyTorch, a second Ellipsis is allowed (and empty)
    } else if (const bool* b = std::get_if<bool>(&entry)) {
      record_bool(*b);
    } else {
      const Tensor& t = std::get<Tensor>(entry);
      if (is_int_scalar(t)) r.view = select(r.view, dim, t.item<int64_t>());
      else if (t.dim() == 0 && is_mask(t)) record_bool(t.item<bool>());
      else record(t);
    }
  }
  return r;
}

// A value with leading size-1 dims dropped, as PyTorch's setitem does before broadcasting.
Tensor strip_leading_ones(const Tensor& value) {
  int64_t k = 0;
  while (k < value.dim() && value.size(k) == 1) ++k;
  if (k == 0) return value;
  return view(value, value.sizes().slice(size_t(k), size_t(value.dim() - k)));
}

}  // namespace

Tensor getitem(const Tensor& self, const std::vector<TensorIndex>& indices) {
  Applied a = apply_indices(self, indices);
  if (!a.advanced.empty()) return index(a.view, a.advanced);
  // t[()] and t[...] are aliases, not the same tensor object.
  return a.view.is_same(self) ? view(self, self.sizes()) : a.view;
}

void setitem(Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& value_in) {
  Applied a = apply_indices(self, indices);
  // Basic writes convert through copy_; advanced ones (index_put_) want self's dtype, which a
  // Python number gets here and a tensor must already have, as in PyTorch.
  bool convert = value_in.impl()->is_wrapped_number && value_in.dtype() != self.dtype();
  Tensor value = strip_leading_ones(convert ? to_dtype(value_in, self.dtype()) : value_in);
  // A write through a view of self rebases self's history (Note [Writes into views]).
  if (a.advanced.empty()) copy_(a.view, value);
  else index_put_(a.view, a.advanced, value);
}

void setitem(Tensor& self, const std::vector<TensorIndex>& indices, const Scalar& value) {
  setitem(self, indices, scalar_tensor(value, self.dtype()));
}

}  // namespace ember
