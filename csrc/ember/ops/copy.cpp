// copy_, to(dtype), clone, fill_, and the shared in-place machinery.
#include "ember/schema/copy.h"
#include "ember/autograd/node.h"
#include "ember/core/grad_mode.h"
#include "ember/core/profiler.h"
#include "ember/core/quantizer.h"
#include "ember/core/shape.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/profile_range.h"
#include "ember/ops/inplace.h"
#include "ember/ops/memory_format.h"
#include "ember/ops/meta.h"
#include "ember/ops/ops.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {
// Flat indices (into base's own element order) of every element of `view`.
Tensor positions_in_base(const Tensor& view, const Tensor& base) {
  NoGradGuard g;
  int64_t extent = int64_t(base.storage()->nbytes() / base.element_size());
  Tensor labels = full({extent}, Scalar(-1), TensorOptions(kLong));
  Tensor slots = as_strided(labels, base.sizes(), base.strides(), base.storage_offset());
  copy_(slots, reshape(arange(0, base.numel(), 1, TensorOptions(kLong)), base.sizes()));
  return reshape(as_strided(labels, view.sizes(), view.strides(), view.storage_offset()), {-1});
}

// Note [Writes into views]
// An in-place write into a view changes its base, so the base's history is rebased: a CopySlices
// node sends the base's gradient outside the written region to the old base and inside it to the
// written value. The view is then re-derived from the new base so its own grad_fn stays right.
Tensor& write_into_view(Tensor& view, const Tensor& base_in, const Tensor& src) {
  Tensor base = base_in;
  op::copy_.redispatch(backend_of(view, src), view, src);
  Tensor idx = positions_in_base(view, base);
  DimVector base_shape(base.sizes()), view_shape(view.sizes());
  auto node =
      autograd::record("CopySlices", {base, src}, {},
                       [idx, base_shape, view_shape](FunctionNode&, const variable_list& g) {
                         Tensor flat = reshape(g[0], {-1});
                         Tensor outside = reshape(index_fill(flat, 0, idx, 0), base_shape);
                         Tensor inside = reshape(index_select(flat, 0, idx), view_shape);
                         return variable_list{outside, inside};
                       });
  if (!node) return view;
  autograd::set_history(base, node);
  auto rebased = autograd::record(
      "AsStridedBackward0", {base}, {}, [idx, base_shape](FunctionNode&, const variable_list& g) {
        Tensor z = zeros({numel_of(base_shape)}, TensorOptions(g[0].dtype()).device(g[0].device()));
        return variable_list{reshape(index_add(z, 0, idx, reshape(g[0], {-1})), base_shape)};
      });
  autograd::set_history(view, rebased);
  return view;
}

bool is_view_of_base(const Tensor& t) {
  auto* m = autograd::meta_if(t);
  return m && m->is_view && m->view_base.defined();
}

// dst.copy_(src) with history: the old dst contributes nothing, src gets the grad.
Tensor& copy_autograd(Tensor& self, const Tensor& src) {
  check_inplace(self);
  if (is_view_of_base(self)) return write_into_view(self, autograd::meta(self).view_base, src);
  op::copy_.redispatch(backend_of(self, src), self, src);
  auto node =
      autograd::record("CopyBackwards", {self, src}, {}, [](FunctionNode&, const variable_list& g) {
        return variable_list{zeros_like(g[0]), g[0]};
      });
  if (node) autograd::set_history(self, node);
  return self;
}
EMBER_REGISTER_KERNEL(op::copy_, Autograd, copy_autograd);

Tensor& fill_autograd(Tensor& self, const Scalar& v) {
  check_inplace(self);
  op::fill_.redispatch(backend_of(self), self, v);
  auto node = autograd::record(
      "FillBackward0", {self}, {},
      [](FunctionNode&, const variable_list& g) { return variable_list{zeros_like(g[0])}; });
  if (node) autograd::set_history(self, node);
  return self;
}
EMBER_REGISTER_KERNEL(op::fill_, Autograd, fill_autograd);

bool is_leaf_requiring_grad(const Tensor& t) { return t.requires_grad() && t.is_leaf(); }

}  // namespace

void bump_inplace_version(const Tensor& self) {
  // After the write, as PyTorch's version counter raises (the data has changed by then).
  EMBER_CHECK(!self.storage()->is_inference() || InferenceMode::is_enabled(),
              "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
              "make a clone to get a normal tensor before doing inplace update.See "
              "https://github.com/pytorch/rfcs/pull/17 for more details.");
  self.bump_version();
}

void check_inplace(const Tensor& self) {
  if (!GradMode::is_enabled()) return;
  EMBER_CHECK(!is_leaf_requiring_grad(self),
              "a leaf Variable that requires grad is being used in an in-place operation.");
  auto* m = autograd::meta_if(self);
  if (m && m->is_view && m->view_base.defined())
    EMBER_CHECK(!is_leaf_requiring_grad(m->view_base),
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation.");
}

Tensor& apply_inplace(Tensor& self, const std::function<Tensor(const Tensor&)>& outofplace) {
  check_inplace(self);
  Tensor result = outofplace(autograd::any_requires_grad({&self}) ? clone(self) : self);
  // an operand that broadcasts self to a bigger shape: torch's shape check runs before its
  // dtype check
  EMBER_CHECK(result.sizes().equals(self.sizes()), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", result.sizes());
  check_inplace_dtype(self, result.dtype(), "in-place op");
  if (is_view_of_base(self) && result.requires_grad())
    return write_into_view(self, autograd::meta(self).view_base, result);
  op::copy_.redispatch(backend_of(self), self, result);
  if (result.requires_grad()) {
    auto& rm = autograd::meta(result);
    autograd::set_history(self, rm.grad_fn, rm.output_nr);
  }
  return self;
}

Tensor& copy_(Tensor& self, const Tensor& src) {
  if (backend_of(self) != DispatchKey::Meta) {  // torch's TensorIterator checks, first
    meta::check_no_internal_overlap(self);
    meta::check_out_overlap(self, {&src});
  }
  if (!self.sizes().equals(src.sizes()))
    broadcast_shapes(self.sizes(), src.sizes(), "copy_");  // raises on mismatch
  EMBER_CHECK(is_expandable_to(src.sizes(), self.sizes()), "copy_: source of shape ", src.sizes(),
              " cannot be broadcast to destination of shape ", self.sizes());
  op::copy_.call(self, src);
  bump_inplace_version(self);
  return self;
}

Tensor& fill_(Tensor& self, const Scalar& value) {
  op::fill_.call(self, value);
  bump_inplace_version(self);
  return self;
}

// torch's row: aten::zero_ (its fill is no op of its own; ember.autograd.profiler folds fill_ in).
Tensor& zero_(Tensor& self) {
  profiler::OpRange range("zero_", self);
  return fill_(self, 0);
}

namespace {
// copy_with_layout's copy under a profile, in torch's rows (Note [Profiler rows]): a conversion
// is aten::_to_copy > (aten::empty_strided, aten::copy_), a clone aten::empty_like >
// aten::empty, then aten::copy_.
[[gnu::noinline]] Tensor copy_rows(const Tensor& self, IntArrayRef strides, ScalarType dtype,
                                   const char* node) {
  auto alloc = [&] { return empty_strided(self.sizes(), strides, dtype, self.device()); };
  auto fill = [&](Tensor& out) { op::copy_.redispatch(backend_of(self), out, self); };
  if (std::string_view(node) == "ToCopyBackward0")
    return profiler::to_copy_rows(self, dtype, alloc, fill, false);
  Tensor out;
  {
    const std::nullopt_t none = std::nullopt;
    profiler::OpRange el("empty_like", self, none, none, none, none, none);
    profiler::OpRange e("empty", none, none, none, none, none, none);
    out = alloc();
  }
  fill(out);
  return out;
}

// A copy with its own storage, the given strides and dtype, recorded for autograd as `node`.
Tensor copy_with_layout(const Tensor& self, IntArrayRef strides, ScalarType dtype,
                        const char* node) {
  if (is_quantized(self.dtype()) && dtype == self.dtype()) {  // Note [Quantized tensors]
    Tensor repr = int_repr_view(self);                        // copy the integers
    return make_quantized_like(copy_with_layout(repr, strides, repr.dtype(), node), self);
  }
  Tensor out;
  if (profiler::enabled()) [[unlikely]] {
    out = copy_rows(self, strides, dtype, node);
  } else {
    out = empty_strided(self.sizes(), strides, dtype, self.device());
    op::copy_.redispatch(backend_of(self), out, self);
  }
  if (is_differentiable_type(dtype))
    autograd::record(node, {self}, {out}, [](FunctionNode&, const variable_list& g) { return g; });
  return out;
}

// The strides of ember::clone's copy: a dense input's own, else row-major. C++ callers such as
// repeat view the copy of an expanded tensor as row-major, so the full preserve_format rule
// (Note [Memory formats]), which the Python bindings follow, is `clone(self, Preserve)`.
DimVector kept_or_row_major(const Tensor& self) {
  if (self.is_contiguous() || !is_non_overlapping_and_dense(self.sizes(), self.strides()))
    return contiguous_strides(self.sizes());
  return DimVector(self.strides());
}
}  // namespace

Tensor to_dtype(const Tensor& self, ScalarType dtype, bool copy) {
  // a call that changes nothing (the ops' own dtype checks) records no row
  if (self.dtype() == dtype && !copy) return self;  // row-major (Python's to(): to_format)
  profiler::OpRange prof_range("to", self, dtype, false, copy, std::nullopt);
  return copy_with_layout(self, contiguous_strides(self.sizes()), dtype, "ToCopyBackward0");
}

Tensor to_dtype(const Tensor& self, ScalarType dtype, IntArrayRef strides) {
  profiler::OpRange prof_range("to", self, dtype, false, false, std::nullopt);
  return copy_with_layout(self, strides, dtype, "ToCopyBackward0");
}

Tensor clone_strided(const Tensor& self, IntArrayRef strides) {
  return copy_with_layout(self, strides, self.dtype(), "CloneBackward0");
}

Tensor clone(const Tensor& self) {
  profiler::OpRange prof_range("clone", self, std::nullopt);
  return copy_with_layout(self, kept_or_row_major(self), self.dtype(), "CloneBackward0");
}

Tensor contiguous(const Tensor& self) {
  if (self.is_contiguous()) return self;
  profiler::OpRange prof_range("contiguous", self, std::nullopt);
  profiler::OpRange clone_range("clone", self, std::nullopt);
  return copy_with_layout(self, contiguous_strides(self.sizes()), self.dtype(), "CloneBackward0");
}

}  // namespace ember
