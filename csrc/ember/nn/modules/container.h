#pragma once
// Sequential: modules applied in order, each a Tensor -> Tensor forward.
#include <functional>
#include <string>
#include <vector>

#include "ember/nn/module.h"

namespace ember::nn {

class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("Sequential") {}
  template <class... Modules>
  requires(sizeof...(Modules) > 0) explicit SequentialImpl(Modules&&... modules)
      : SequentialImpl() {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  /// Appends a module (a holder or a shared_ptr to a module) named by its position.
  template <class M>
  void push_back(M&& module) {
    push_back(std::to_string(steps_.size()), std::forward<M>(module));
  }
  template <class M>
  void push_back(std::string name, M&& module) {
    auto ptr = shared(std::forward<M>(module));
    register_module(std::move(name), ptr);
    steps_.push_back({ptr, [ptr](Tensor x) { return ptr->forward(std::move(x)); }});
  }

  Tensor forward(Tensor input);
  size_t size() const { return steps_.size(); }
  bool is_empty() const { return steps_.empty(); }
  /// The i-th module (negative counts from the end).
  std::shared_ptr<Module> operator[](int64_t index) const;
  std::shared_ptr<Module> ptr(int64_t index) const { return (*this)[index]; }

 private:
  template <class M>
  static auto shared(M&& m) {
    if constexpr (requires { m.ptr(); }) return m.ptr();
    else return std::shared_ptr<typename std::decay_t<M>::element_type>(std::forward<M>(m));
  }

  struct Step {
    std::shared_ptr<Module> module;
    std::function<Tensor(Tensor)> forward;
  };
  std::vector<Step> steps_;
};
EMBER_MODULE(Sequential);

}  // namespace ember::nn
