// copy_, to(dtype), clone, fill_, and the shared in-place machinery.
#include "ember/autograd/node.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/inplace.h"
#include "ember/core/shape.h"
#include "ember/ops/ops.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {
const TypedOperator<Tensor&(Tensor&, const Tensor&)>& copy_op() {
  static const TypedOperator<Tensor&(Tensor&, const Tensor&)> op("copy_");
  return op;
}
const TypedOperator<Tensor&(Tensor&, const Scalar&)>& fill_op() {
  static const TypedOperator<Tensor&(Tensor&, const Scalar&)> op("fill_");
  return op;
}

// dst.copy_(src) with history: the old dst contributes nothing, src gets the grad.
Tensor& copy_autograd(Tensor& self, const Tensor& src) {
  check_inplace(self);
  {
    NoGradGuard g;
    copy_op().redispatch(backend_of(self, src), self, src);
  }
  auto node = autograd::record("CopyBackwards", {self, src}, {},
                               [](FunctionNode&, const variable_list& g) {
                                 return variable_list{zeros_like(g[0]), g[0]};
                               });
  if (node) autograd::set_history(self, node);
  return self;
}
EMBER_REGISTER_KERNEL("copy_", Autograd, copy_autograd);

Tensor& fill_autograd(Tensor& self, const Scalar& v) {
  check_inplace(self);
  {
    NoGradGuard g;
    fill_op().redispatch(backend_of(self), self, v);
  }
  auto node = autograd::record("FillBackward0", {self}, {}, [](FunctionNode&, const variable_list& g) {
    return variable_list{zeros_like(g[0])};
  });
  if (node) autograd::set_history(self, node);
  return self;
}
EMBER_REGISTER_KERNEL("fill_", Autograd, fill_autograd);

bool is_leaf_requiring_grad(const Tensor& t) { return t.requires_grad() && t.is_leaf(); }

}  // namespace

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

void check_inplace_dtype(const Tensor& self, ScalarType result, const char* op) {
  EMBER_CHECK(can_cast(result, self.dtype()), op, ": result type ", scalar_type_name(result),
              " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
}

Tensor& apply_inplace(Tensor& self, const std::function<Tensor(const Tensor&)>& outofplace) {
  check_inplace(self);
  Tensor result = outofplace(autograd::any_requires_grad({&self}) ? clone(self) : self);
  check_inplace_dtype(self, result.dtype(), "in-place op");
  {
    NoGradGuard g;
    copy_op().redispatch(backend_of(self), self, result);
  }
  if (result.requires_grad()) {
    auto& rm = autograd::meta(result);
    autograd::set_history(self, rm.grad_fn, rm.output_nr);
  }
  return self;
}

Tensor& copy_(Tensor& self, const Tensor& src) {
  if (!self.sizes().equals(src.sizes()))
    broadcast_shapes(self.sizes(), src.sizes(), "copy_");  // raises on mismatch
  EMBER_CHECK(is_expandable_to(src.sizes(), self.sizes()), "copy_: source of shape ",
              src.sizes(), " cannot be broadcast to destination of shape ", self.sizes());
  copy_op().call(self, src);
  self.bump_version();
  return self;
}

Tensor& fill_(Tensor& self, const Scalar& value) {
  fill_op().call(self, value);
  self.bump_version();
  return self;
}

Tensor& zero_(Tensor& self) { return fill_(self, 0); }

Tensor to_dtype(const Tensor& self, ScalarType dtype, bool copy) {
  if (self.dtype() == dtype && !copy) return self;
  Tensor out = empty(self.sizes(), dtype, self.device());
  {
    NoGradGuard g;
    copy_op().redispatch(backend_of(self), out, self);
  }
  if (is_floating_point(dtype))
    autograd::record("ToCopyBackward0", {self}, {out},
                     [](FunctionNode&, const variable_list& g) { return g; });
  return out;
}

Tensor clone(const Tensor& self) {
  Tensor out = empty(self.sizes(), self.dtype(), self.device());
  {
    NoGradGuard g;
    copy_op().redispatch(backend_of(self), out, self);
  }
  autograd::record("CloneBackward0", {self}, {out},
                   [](FunctionNode&, const variable_list& g) { return g; });
  return out;
}

}  // namespace ember
