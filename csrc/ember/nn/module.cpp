// Module bookkeeping: registration, traversal in PyTorch's order, state dicts, printing.
#include "ember/nn/module.h"

#include "ember/autograd/grad_mode.h"
#include "ember/ops/ops.h"
#include "ember/serialize/serialize.h"

namespace ember::nn {

namespace {
void check_name(const std::string& name, const char* what) {
  EMBER_CHECK(!name.empty(), what, " name must not be empty");
  EMBER_CHECK(name.find('.') == std::string::npos, what, " name must not contain a dot (\"", name,
              "\")");
}
}  // namespace

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_name(name, "Parameter");
  if (tensor.defined()) tensor.requires_grad_(requires_grad);
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor) {
  check_name(name, "Buffer");
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::add_child(std::string name, std::shared_ptr<Module> child) {
  check_name(name, "Submodule");
  EMBER_CHECK(child, "register_module: submodule '", name, "' is empty");
  children_.insert(std::move(name), std::move(child));
}

void Module::collect(const std::string& prefix, bool recurse, bool params,
                     OrderedDict<std::string, Tensor>& out) const {
  for (const auto& it : params ? parameters_ : buffers_)
    if (it.value().defined()) out.insert(prefix + it.key(), it.value());
  if (!recurse) return;
  for (const auto& c : children_) c.value()->collect(prefix + c.key() + ".", true, params, out);
}

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<std::string, Tensor> out;
  collect("", recurse, true, out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  return named_parameters(recurse).values();
}

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<std::string, Tensor> out;
  collect("", recurse, false, out);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& prefix,
                                                                        bool include_self) {
  OrderedDict<std::string, std::shared_ptr<Module>> out;
  if (include_self) out.insert(prefix, shared_from_this());
  for (const auto& c : children_) {
    std::string name = prefix.empty() ? c.key() : prefix + "." + c.key();
    for (const auto& it : c.value()->named_modules(name, true)) out.insert(it.key(), it.value());
  }
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  return named_modules("", include_self).values();
}

void Module::train(bool on) {
  is_training_ = on;
  for (const auto& c : children_) c.value()->train(on);
}

void Module::to(ScalarType dtype) {
  NoGradGuard guard;
  auto cast = [dtype](Tensor& t) {
    if (!t.defined() || !is_floating_point(t.dtype()) || t.dtype() == dtype) return;
    Tensor c = to_dtype(t, dtype);
    t.impl()->set_storage(c.storage(), c.dtype());
    t.impl()->set_geometry(c.sizes(), c.strides(), c.storage_offset());
  };
  for (Tensor& p : parameters()) cast(p);
  for (Tensor& b : buffers()) cast(b);
}

void Module::to(Device device, bool) {
  EMBER_CHECK(device.is_cpu(), "Module::to: ember runs on the CPU only; got device ", device.str());
}

void Module::to(Device device, ScalarType dtype, bool non_blocking) {
  to(device, non_blocking);
  to(dtype);
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard guard;
  for (Tensor& p : parameters()) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      p.set_grad(Tensor());
    } else {
      g = g.detach();
      zero_(g);
    }
  }
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (const auto& m : modules()) fn(*m);
}

OrderedDict<std::string, Tensor> Module::state_dict() const {
  OrderedDict<std::string, Tensor> out;
  // PyTorch's order: each module's parameters, then its buffers, then its children.
  auto visit = [&out](auto& self, const Module& m, const std::string& prefix) -> void {
    for (const auto& it : m.parameters_)
      if (it.value().defined()) out.insert(prefix + it.key(), it.value());
    for (const auto& it : m.buffers_)
      if (it.value().defined()) out.insert(prefix + it.key(), it.value());
    for (const auto& c : m.children_) self(self, *c.value(), prefix + c.key() + ".");
  };
  visit(visit, *this, "");
  return out;
}

void Module::load_state_dict(const OrderedDict<std::string, Tensor>& state, bool strict) {
  NoGradGuard guard;
  OrderedDict<std::string, Tensor> own = state_dict();
  std::vector<std::string> missing, unexpected;
  for (auto& it : own) {
    const Tensor* src = state.find(it.key());
    if (!src) {
      missing.push_back(it.key());
      continue;
    }
    EMBER_CHECK(src->sizes().equals(it.value().sizes()), "load_state_dict: size mismatch for ",
                it.key(), ": copying a param with shape ", src->sizes(),
                ", the shape in current model is ", it.value().sizes(), ".");
    Tensor dst = it.value().detach();
    copy_(dst, *src);
  }
  for (const auto& it : state)
    if (!own.contains(it.key())) unexpected.push_back(it.key());
  if (!strict || (missing.empty() && unexpected.empty())) return;
  std::string msg = "Error(s) in loading state_dict for " + name_ + ":";
  auto list = [](const std::vector<std::string>& keys) {
    std::string s;
    for (const auto& k : keys) s += (s.empty() ? "\"" : ", \"") + k + "\"";
    return s;
  };
  if (!unexpected.empty()) msg += "\n\tUnexpected key(s) in state_dict: " + list(unexpected) + ".";
  if (!missing.empty()) msg += "\n\tMissing key(s) in state_dict: " + list(missing) + ".";
  EMBER_CHECK(false, msg);
}

namespace {
void print_tree(std::ostream& os, const Module& m, int indent) {
  m.pretty_print(os);
  if (m.named_children().is_empty()) return;
  os << "(\n";
  for (const auto& c : m.named_children()) {
    os << std::string(indent + 2, ' ') << "(" << c.key() << "): ";
    print_tree(os, *c.value(), indent + 2);
    os << "\n";
  }
  os << std::string(indent, ' ') << ")";
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const Module& module) {
  print_tree(os, module, 0);
  return os;
}

}  // namespace ember::nn

namespace ember {

void save(const nn::Module& module, const std::string& path) { save(module.state_dict(), path); }

void load(nn::Module& module, const std::string& path) {
  module.load_state_dict(load(path).to_ordered_tensor_dict());
}

}  // namespace ember
