#pragma once
// Random sampling into tensors: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(uniform_,
                 "uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? "
                 "generator=None) -> Tensor(a!)",
                 Tensor&(Tensor&, double, double, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(normal_,
                 "normal_(Tensor(a!) self, float mean=0., float std=1., *, Generator? "
                 "generator=None) -> Tensor(a!)",
                 Tensor&(Tensor&, double, double, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(
    bernoulli_,
    "bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)",
    Tensor&(Tensor&, double, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(
    random_,
    "random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> Tensor(a!)",
    Tensor&(Tensor&, int64_t, std::optional<int64_t>, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(exponential_,
                 "exponential_(Tensor(a!) self, float lambd=1., *, Generator? generator=None) "
                 "-> Tensor(a!)",
                 Tensor&(Tensor&, double, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(cauchy_,
                 "cauchy_(Tensor(a!) self, float median=0., float sigma=1., *, Generator? "
                 "generator=None) -> Tensor(a!)",
                 Tensor&(Tensor&, double, double, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(log_normal_,
                 "log_normal_(Tensor(a!) self, float mean=1., float std=2., *, Generator? "
                 "generator=None) -> Tensor(a!)",
                 Tensor&(Tensor&, double, double, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(geometric_,
                 "geometric_(Tensor(a!) self, float p, *, Generator? generator=None) -> "
                 "Tensor(a!)",
                 Tensor&(Tensor&, double, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(poisson, "poisson(Tensor self, Generator? generator=None) -> Tensor",
                 Tensor(const Tensor&, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(binomial,
                 "binomial(Tensor count, Tensor prob, Generator? generator=None) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(_standard_gamma,
                 "_standard_gamma(Tensor self, Generator? generator=None) -> Tensor",
                 Tensor(const Tensor&, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(_sample_dirichlet,
                 "_sample_dirichlet(Tensor self, Generator? generator=None) -> Tensor",
                 Tensor(const Tensor&, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(_standard_gamma_grad, "_standard_gamma_grad(Tensor self, Tensor output) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(_dirichlet_grad, "_dirichlet_grad(Tensor x, Tensor alpha, Tensor total) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&));
EMBER_DECLARE_OP(bernoulli, "bernoulli(Tensor self, *, Generator? generator=None) -> Tensor",
                 Tensor(const Tensor&, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(multinomial,
                 "multinomial(Tensor self, SymInt num_samples, bool replacement=False, *, "
                 "Generator? generator=None) -> Tensor",
                 Tensor(const Tensor&, int64_t, bool, const std::shared_ptr<Generator>&));
EMBER_DECLARE_OP(_randperm_fill,
                 "_randperm_fill(Tensor(a!) self, Generator? generator) -> Tensor(a!)",
                 Tensor&(Tensor&, const std::shared_ptr<Generator>&));

}  // namespace ember::op
