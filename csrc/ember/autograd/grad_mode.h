#pragma once
// The grad-mode switches are core state (core/grad_mode.h); autograd users keep this include.
#include "ember/core/grad_mode.h"
