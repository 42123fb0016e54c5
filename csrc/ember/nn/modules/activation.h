#pragma once
// ReLU, Dropout and Functional (a module around any Tensor -> Tensor function).
#include <functional>

#include "ember/nn/module.h"

namespace ember::nn {

struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}
  EMBER_ARG(bool, inplace);
};

class ReLUImpl : public Module {
 public:
  explicit ReLUImpl(const ReLUOptions& options = {}) : Module("ReLU"), options(options) {}
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& os) const override;
  ReLUOptions options;
};
EMBER_MODULE(ReLU);

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}
  EMBER_ARG(double, p);
  EMBER_ARG(bool, inplace) = false;
};

/// Zeroes elements with probability p while training and scales the rest by 1/(1-p).
class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {});
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& os) const override;
  DropoutOptions options;
};
EMBER_MODULE(Dropout);

/// Wraps a function (with extra arguments bound) as a module: `Functional(ember::relu)`.
class FunctionalImpl : public Module {
 public:
  using Function = std::function<Tensor(Tensor)>;
  explicit FunctionalImpl(Function function)
      : Module("Functional"), function_(std::move(function)) {}
  template <class F, class Arg, class... Args>
  FunctionalImpl(F f, Arg arg, Args... args)
      : FunctionalImpl(Function([=](Tensor x) { return f(x, arg, args...); })) {}
  Tensor forward(Tensor input) { return function_(std::move(input)); }
  Tensor operator()(Tensor input) { return forward(std::move(input)); }

 private:
  Function function_;
};
EMBER_MODULE(Functional);

}  // namespace ember::nn
