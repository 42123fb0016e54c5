// Tensor's autograd accessors (declared in core/tensor.h, defined here in the autograd layer).
#include "ember/autograd/engine.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"

namespace ember {

using autograd::meta;
using autograd::meta_if;

bool Tensor::requires_grad() const {
  auto* m = meta_if(*this);
  return m && (m->requires_grad || m->grad_fn);
}

const Tensor& Tensor::requires_grad_(bool requires_grad) const {
  auto* m = meta_if(*this);
  if (!requires_grad && m && m->grad_fn)
    EMBER_ERROR(ErrorKind::Runtime,
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().");
  EMBER_CHECK(!requires_grad || ember::is_differentiable_type(dtype()),
              "Only Tensors of floating point and complex dtype can require gradients");
  // Every path that turns requires_grad on (the setter, requires_grad_, Parameter, factories)
  // comes through here, so torch's inference-tensor rule is checked once, for all of them.
  EMBER_CHECK(!requires_grad || !storage()->is_inference() || InferenceMode::is_enabled(),
              "Setting requires_grad=True on inference tensor outside InferenceMode is not "
              "allowed.");
  if (requires_grad || m) meta(*this).requires_grad = requires_grad;
  return *this;
}

Tensor Tensor::grad() const {
  auto* m = meta_if(*this);
  if (!m) return Tensor();
  if (m->retained_grad) return *m->retained_grad;
  return m->grad;
}

void Tensor::set_grad(const Tensor& grad) const {
  if (grad.defined()) {
    EMBER_CHECK(grad.dtype() == dtype(), "assigned grad has data of a different type");
    EMBER_CHECK(grad.sizes().equals(sizes()), "assigned grad has data of a different size");
  }
  auto& m = meta(*this);
  if (m.retained_grad) *m.retained_grad = grad;
  else m.grad = grad;
}

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<autograd::Node> none;
  auto* m = meta_if(*this);
  return m ? m->grad_fn : none;
}

bool Tensor::is_leaf() const { return !grad_fn(); }

uint32_t Tensor::output_nr() const {
  auto* m = meta_if(*this);
  return m ? m->output_nr : 0;
}

void Tensor::retain_grad() const {
  EMBER_CHECK(requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
  if (is_leaf()) return;  // leaves keep .grad anyway
  auto& m = meta(*this);
  if (m.retained_grad) return;
  m.retained_grad = std::make_shared<Tensor>();
  std::weak_ptr<Tensor> slot = m.retained_grad;
  m.grad_fn->tensor_pre_hooks.push_back({m.output_nr, [slot](const Tensor& g) {
                                           if (auto s = slot.lock()) {
                                             if (!s->defined()) *s = g.detach().clone();
                                             else *s = s->add(g.detach());
                                           }
                                           return Tensor();
                                         }});
}

bool Tensor::retains_grad() const {
  auto* m = meta_if(*this);
  return m && m->retained_grad != nullptr;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph,
                      bool create_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph.value_or(create_graph), create_graph);
}

Tensor Tensor::detach() const {
  Tensor t(make_intrusive<TensorImpl>(storage(), dtype(), sizes(), strides(), storage_offset()));
  t.impl()->quantizer = impl()->quantizer;
  return t;
}

const Tensor& Tensor::detach_() const {
  auto* m = meta_if(*this);
  if (m) {
    m->grad_fn.reset();
    m->requires_grad = false;
    m->output_nr = 0;
  }
  return *this;
}

}  // namespace ember
