// Checkpoint format bindings (ember._C._serialize).
#include "common.h"

namespace ember::py {

void bind_serialize(nb::module_& ser) { (void)ser; }

}  // namespace ember::py
