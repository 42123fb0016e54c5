// The C++ quick start: the same API as libtorch under namespace ember.
#include <ember/ember.h>

#include <iostream>

int main() {
  using namespace ember;
  Tensor x = linspace(-1, 1, 5);
  Tensor w = ones({5}).requires_grad_();
  Tensor y = sum(tanh(w * x));
  y.backward();
  std::cout << "y = " << y.item<double>() << "\n";
  std::cout << "dy/dw[0] = " << select(w.grad(), 0, 0).item<double>() << "\n";
  Tensor m = matmul(ones({2, 3}), reshape(arange(6, kFloat), {3, 2}));
  std::cout << "matmul sum = " << sum(m).item<double>() << "\n";
  return 0;
}
