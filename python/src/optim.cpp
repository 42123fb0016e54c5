// Fused optimizer update bindings (ember._C._optim).
#include "common.h"

namespace ember::py {

void bind_optim(nb::module_& optim) { (void)optim; }

}  // namespace ember::py
