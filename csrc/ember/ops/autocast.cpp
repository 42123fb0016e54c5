// The Autocast kernels of dispatcher ops (Note [Autocast] in dispatch/autocast.h), by the lists
// torch keeps for CPU: what runs in the lower precision, what in float32, what promotes.
#include "ember/ops/autocast.h"

#include "ember/dispatch/dispatcher.h"
#include "ember/schema/conv.h"
#include "ember/schema/linalg.h"
#include "ember/schema/loss.h"
#include "ember/schema/reduce.h"
#include "ember/schema/shape.h"

namespace ember::autocast {

namespace {

// The Autocast kernel of op Decl under policy P: casts, then calls the op with the key excluded.
template <class Decl, CastPolicy P, class Sig = typename Decl::Signature>
struct Kernel;
template <class Decl, CastPolicy P, class R, class... Args>
struct Kernel<Decl, P, R(Args...)> {
  static R fn(Args... args) {
    return run(
        P, [](auto&&... a) -> R { return Decl{}.call(a...); }, args...);
  }
};

#define EMBER_AUTOCAST(op_id, policy) \
  EMBER_REGISTER_KERNEL(op::op_id, Autocast, (&Kernel<op::op_id##_decl, CastPolicy::policy>::fn))

// The lower-precision list.
EMBER_AUTOCAST(mm, lower_precision_fp);
EMBER_AUTOCAST(bmm, lower_precision_fp);
EMBER_AUTOCAST(addmm, lower_precision_fp);
EMBER_AUTOCAST(baddbmm, lower_precision_fp);
EMBER_AUTOCAST(conv2d_forward, lower_precision_fp);
// The float32 list.
EMBER_AUTOCAST(_nll_loss_index, fp32);
EMBER_AUTOCAST(_cross_entropy_index, fp32);
EMBER_AUTOCAST(_ctc_loss, fp32);
EMBER_AUTOCAST(prod, fp32);
EMBER_AUTOCAST(linalg_lu_factor, fp32);
EMBER_AUTOCAST(linalg_solve, fp32);
EMBER_AUTOCAST(linalg_cholesky, fp32);
EMBER_AUTOCAST(linalg_qr, fp32);
EMBER_AUTOCAST(linalg_svd, fp32);
EMBER_AUTOCAST(linalg_eigh, fp32);
EMBER_AUTOCAST(linalg_solve_triangular, fp32);
// The promote list.
EMBER_AUTOCAST(cat, promote);

#undef EMBER_AUTOCAST

}  // namespace

}  // namespace ember::autocast
