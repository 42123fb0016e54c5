#pragma once
// Kernels keep this include; the dtype switch itself is core's (core/dispatch_dtype.h).
#include "ember/core/dispatch_dtype.h"
