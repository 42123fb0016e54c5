// Indexing with Python's rules: advanced indexing reduced to the kernels' terms, and
// self[idx...] / self[idx...] = value (Tensor.__getitem__/__setitem__).
#include "ember/core/shape.h"
#include "ember/ops/ops.h"

namespace ember {

using IndexList = std::vector<std::optional<Tensor>>;

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
  // A lone slice's step is checked first, as torch's single-slice path (x0d[::-1] is a
  // ValueError); a tuple's entries are counted first (x1d[::0, idx] is an IndexError).
  if (const Slice* s = indices.size() == 1 ? std::get_if<Slice>(&indices[0]) : nullptr)
    EMBER_CHECK_VALUE(
        s->step > 0, s->step == 0 ? "slice step cannot be zero" : "step must be greater than zero");
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
