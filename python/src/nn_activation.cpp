// Activation, softmax, normalization, dropout, linear and attention bindings (ember._C._nn).
#include "common.h"

namespace ember::py {

void bind_nn_activation(nb::module_& nn) { (void)nn; }

}  // namespace ember::py
