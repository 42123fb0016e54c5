#include "ember/nn/modules/container.h"

namespace ember::nn {

Tensor SequentialImpl::forward(Tensor input) {
  for (const Step& s : steps_) input = s.forward(std::move(input));
  return input;
}

std::shared_ptr<Module> SequentialImpl::operator[](int64_t index) const {
  int64_t n = int64_t(steps_.size());
  EMBER_CHECK_INDEX(index >= -n && index < n, "index ", index,
                    " is out of range for Sequential of size ", n);
  return steps_[size_t(index < 0 ? index + n : index)].module;
}

}  // namespace ember::nn
