// Convolution, pooling, padding, interpolation, fold/unfold and embedding bindings (ember._C._nn).
#include "common.h"

namespace ember::py {

void bind_nn_spatial(nb::module_& nn) { (void)nn; }

}  // namespace ember::py
