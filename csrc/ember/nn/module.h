#pragma once
// ember::nn::Module and ModuleHolder: libtorch's C++ module API under namespace ember.
#include <concepts>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>

#include "ember/core/arg.h"
#include "ember/core/ordered_dict.h"
#include "ember/core/tensor.h"

namespace ember::nn {

/// A tree of parameters, buffers and submodules; subclasses add `forward`.
class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string name = "Module") : name_(std::move(name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }

  /// Registers a parameter (a leaf that requires grad unless told otherwise) and returns it.
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  /// Registers a buffer (state saved with the module but not trained).
  Tensor& register_buffer(std::string name, Tensor tensor);
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    add_child(std::move(name), module);
    return module;
  }
  template <class Holder>
  requires requires(Holder h) { h.ptr(); }
  Holder register_module(std::string name, Holder holder) {
    add_child(std::move(name), holder.ptr());
    return holder;
  }

  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const { return children_.values(); }
  const OrderedDict<std::string, std::shared_ptr<Module>>& named_children() const {
    return children_;
  }
  /// This module (first) and every descendant, depth first.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& prefix = "",
                                                                  bool include_self = true);

  virtual void train(bool on = true);
  void eval() { train(false); }
  /// Casts floating parameters and buffers to `dtype` in place (handles stay valid, as libtorch's
  /// Module::to); a device other than the CPU raises.
  void to(ScalarType dtype);
  void to(Device device, bool non_blocking = false);
  void to(Device device, ScalarType dtype, bool non_blocking = false);
  bool is_training() const { return is_training_; }
  void zero_grad(bool set_to_none = true);
  void apply(const std::function<void(Module&)>& fn);

  /// Parameters then buffers under dotted names: the keys of PyTorch's state_dict().
  OrderedDict<std::string, Tensor> state_dict() const;
  /// Copies values in by name; with `strict`, missing or unexpected keys raise.
  void load_state_dict(const OrderedDict<std::string, Tensor>& state, bool strict = true);

  /// One line describing this module (its options), as libtorch prints it.
  virtual void pretty_print(std::ostream& os) const { os << name_; }

 private:
  void add_child(std::string name, std::shared_ptr<Module> child);
  void collect(const std::string& prefix, bool recurse, bool params,
               OrderedDict<std::string, Tensor>& out) const;

  OrderedDict<std::string, Tensor> parameters_;
  OrderedDict<std::string, Tensor> buffers_;
  OrderedDict<std::string, std::shared_ptr<Module>> children_;
  bool is_training_ = true;
  std::string name_;
};

/// Prints the module tree like libtorch (and like PyTorch's repr).
std::ostream& operator<<(std::ostream& os, const Module& module);

/// A shared_ptr to a module implementation with call syntax: `Linear fc(3, 4); fc(x); fc->weight`.
template <class Impl>
class ModuleHolder {
 public:
  using ContainedType = Impl;

  ModuleHolder() requires std::is_default_constructible_v<Impl> : impl_(std::make_shared<Impl>()) {}
  /// An empty holder, to be assigned later (`Linear fc{nullptr};`).
  ModuleHolder(std::nullptr_t) {}
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  template <class Head, class... Tail>
  requires(!std::is_same_v<std::decay_t<Head>, ModuleHolder> &&
           !std::is_same_v<std::decay_t<Head>, std::nullptr_t> &&
           std::is_constructible_v<Impl, Head, Tail...>) explicit ModuleHolder(Head&& head,
                                                                               Tail&&... tail)
      : impl_(std::make_shared<Impl>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}

  Impl* operator->() const { return get(); }
  Impl& operator*() const { return *get(); }
  Impl* get() const {
    EMBER_CHECK(impl_, "Accessing an empty ModuleHolder (construct the module before use)");
    return impl_.get();
  }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const { return !impl_; }
  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    return get()->forward(std::forward<Args>(args)...);
  }

 private:
  std::shared_ptr<Impl> impl_;
};

template <class Impl>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& m) {
  return os << *m;
}

/// Defines `Name` as the holder of `NameImpl` (libtorch's TORCH_MODULE).
#define EMBER_MODULE(Name)                                     \
  class Name : public ::ember::nn::ModuleHolder<Name##Impl> {  \
   public:                                                     \
    using ::ember::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }

// Note [TORCH_MODULE]
// Porting by renaming the namespace leaves macros as they are, so a libtorch program's
// TORCH_MODULE(Net) must keep working: ember defines it as EMBER_MODULE unless the program has
// its own (for instance because it also includes libtorch, where the definition is libtorch's).
#ifndef TORCH_MODULE
#define TORCH_MODULE(Name) EMBER_MODULE(Name)
#endif

}  // namespace ember::nn

namespace ember {

/// Saves a module's state_dict (parameters and buffers by dotted name), as torch::save(module).
void save(const nn::Module& module, const std::string& path);
/// Loads a checkpoint written by save(module) into a module of the same structure (strict).
void load(nn::Module& module, const std::string& path);
template <class M>
requires std::derived_from<M, nn::Module>
void save(const std::shared_ptr<M>& module, const std::string& path) {
  save(static_cast<const nn::Module&>(*module), path);
}
template <class M>
requires std::derived_from<M, nn::Module>
void load(const std::shared_ptr<M>& module, const std::string& path) {
  load(static_cast<nn::Module&>(*module), path);
}
template <class Impl>
void save(const nn::ModuleHolder<Impl>& module, const std::string& path) {
  save(module.ptr(), path);
}
template <class Impl>
void load(const nn::ModuleHolder<Impl>& module, const std::string& path) {
  load(module.ptr(), path);
}

}  // namespace ember
