#pragma once
// Every public operator of ember, by family.
#include "ember/autograd/grad_mode.h"
#include "ember/ops/creation.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/index.h"
#include "ember/ops/linalg.h"
#include "ember/ops/random.h"
#include "ember/ops/reduce.h"
#include "ember/ops/shape_ops.h"
#include "ember/ops/view.h"
#include "ember/ops/softmax.h"
#include "ember/ops/loss.h"
