// Loss function bindings (ember._C._nn).
#include "common.h"

namespace ember::py {

void bind_nn_loss(nb::module_& nn) { (void)nn; }

}  // namespace ember::py
