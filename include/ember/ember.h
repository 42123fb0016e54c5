#pragma once
// The one header a C++ user includes: tensors, ops, autograd (libtorch's torch/torch.h).
#include "ember/autograd/engine.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/core/parallel.h"
#include "ember/core/shape.h"
#include "ember/core/tensor.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/ops.h"
#include "ember/nn/nn.h"
