// Random sampling (csrc/ember/ops/random.cpp): the Generator class and the samplers behind
// ember.rand/randn/randint/randperm, Tensor.uniform_/normal_/bernoulli_/random_, bernoulli,
// multinomial and normal (Python signatures parsed in ember/_creation.py and _random_extra.py).
#include <algorithm>
#include <vector>

#include "common.h"
#include "ember/schema/random.h"

namespace ember::py {

namespace {
using Gen = std::optional<GeneratorPtr>;
GeneratorPtr gen_of(const Gen& g) { return g.value_or(nullptr); }
}  // namespace

void bind_random(nb::module_& m) {
  nb::class_<Generator>(m, "Generator",
                        "Generator(device='cpu') -> Generator\n\n"
                        "A pseudo-random number generator with its own state, to pass as "
                        "generator= to the sampling functions.")
      .def(
          "__init__",
          [](Generator* g, nb::handle device) {
            // torch's errors for the devices a CPU build has no generator of
            if (!device.is_none())
              nb::module_::import_("ember._device").attr("check_generator_device")(device);
            new (g) Generator();
          },
          nb::arg("device") = nb::none(),
          doc("__init__(device='cpu')", "Makes a generator seeded with the default seed."))
      .def_prop_ro(
          "device", [](nb::handle) { return nb::module_::import_("ember").attr("device")("cpu"); },
          "device -> torch.device\n\nThe device the generator draws for: the cpu, the only "
          "device with generators in this build.")
      .def(
          "manual_seed",
          [](nb::handle self, uint64_t seed) {
            nb::cast<Generator&>(self).manual_seed(seed);
            return nb::borrow(self);
          },
          nb::arg("seed"),
          doc("manual_seed(seed) -> Generator",
              "Resets the state from seed and returns the generator."))
      .def("initial_seed", &Generator::initial_seed,
           doc("initial_seed() -> int", "The seed that the current state started from."))
      .def("seed", &Generator::seed,
           doc("seed() -> int", "Reseeds from a nondeterministic source and returns the new seed."))
      .def(
          "get_state",
          [](const Generator& g) {
            // torch's form: the 5056 bytes of its CPU generator (saved in checkpoints)
            std::vector<uint8_t> bytes = g.state();
            Tensor out = empty({int64_t(bytes.size())}, kByte);
            std::copy(bytes.begin(), bytes.end(), out.data_ptr<uint8_t>());
            return out;
          },
          doc("get_state() -> Tensor",
              "The generator's state as a uint8 tensor, to restore with set_state()."))
      .def(
          "set_state",
          [](nb::handle self, nb::handle new_state) {
            Tensor* t = nullptr;
            if (!nb::try_cast<Tensor*>(new_state, t) || !t)
              throw nb::type_error(("expected a torch.ByteTensor, but got " +
                                    std::string(nb::type_name(new_state.type()).c_str()))
                                       .c_str());
            if (t->dtype() != kByte) throw nb::type_error("RNG state must be a torch.ByteTensor");
            Tensor c = t->contiguous();
            nb::cast<Generator&>(self).set_state(c.data_ptr<uint8_t>(), c.numel());
            return nb::borrow(self);
          },
          nb::arg("new_state"),
          doc("set_state(new_state) -> Generator",
              "Restores a state returned by get_state() (ember's or torch's) and returns the "
              "generator."));
  m.def(
      "default_generator", [] { return default_generator(); },
      doc("default_generator() -> Generator",
          "The process-wide generator that sampling uses when none is given."));
  auto size = nb::arg("size"), gen = nb::arg("generator"), dtype = nb::arg("dtype");
  m.def(
      "_rand",
      [](std::vector<int64_t> size, Gen g, Dt dtype) {
        return rand(size, gen_of(g), dtype.value_or(default_dtype()));
      },
      size, gen, dtype,
      doc("_rand(size, generator, dtype) -> Tensor",
          "Uniform samples from [0, 1) (behind ember.rand)."));
  m.def(
      "_randn",
      [](std::vector<int64_t> size, Gen g, Dt dtype) {
        return randn(size, gen_of(g), dtype.value_or(default_dtype()));
      },
      size, gen, dtype,
      doc("_randn(size, generator, dtype) -> Tensor",
          "Standard normal samples (behind ember.randn)."));
  m.def(
      "_randint",
      [](int64_t low, int64_t high, std::vector<int64_t> size, Gen g, Dt dtype) {
        return randint(low, high, size, gen_of(g), dtype.value_or(kLong));
      },
      nb::arg("low"), nb::arg("high"), size, gen, dtype,
      doc("_randint(low, high, size, generator, dtype) -> Tensor",
          "Uniform integers from [low, high) (behind ember.randint)."));
  m.def(
      "_randperm",
      [](int64_t n, Gen g, Dt dtype) { return randperm(n, gen_of(g), dtype.value_or(kLong)); },
      nb::arg("n"), gen, dtype,
      doc("_randperm(n, generator, dtype) -> Tensor",
          "A random permutation of 0..n-1 (behind ember.randperm)."));
  m.def(
      "_uniform_", [](Tensor& t, double a, double b, Gen g) { uniform_(t, a, b, gen_of(g)); },
      nb::arg("self"), nb::arg("low"), nb::arg("high"), gen,
      doc("_uniform_(self, low, high, generator) -> None",
          "Fills self with uniform samples from [low, high) (behind Tensor.uniform_)."));
  m.def(
      "_normal_",
      [](Tensor& t, double mean, double std, Gen g) { normal_(t, mean, std, gen_of(g)); },
      nb::arg("self"), nb::arg("mean"), nb::arg("std"), gen,
      doc("_normal_(self, mean, std, generator) -> None",
          "Fills self with normal samples (behind Tensor.normal_)."));
  m.def(
      "_normal_size",
      [](double mean, double std, std::vector<int64_t> size, Gen g, Dt dtype) {
        return normal(mean, std, size, gen_of(g), dtype.value_or(default_dtype()));
      },
      nb::arg("mean"), nb::arg("std"), size, gen, dtype,
      doc("_normal_size(mean, std, size, generator, dtype) -> Tensor",
          "Normal samples of one mean and std (behind ember.normal with a size)."));
  m.def(
      "_bernoulli_", [](Tensor& t, double p, Gen g) { bernoulli_(t, p, gen_of(g)); },
      nb::arg("self"), nb::arg("p"), gen,
      doc("_bernoulli_(self, p, generator) -> None",
          "Fills self with ones (probability p) and zeros (behind Tensor.bernoulli_)."));
  m.def(
      "_random_",
      [](Tensor& t, int64_t from, std::optional<int64_t> to, Gen g) {
        random_(t, from, to, gen_of(g));
      },
      nb::arg("self"), nb::arg("low"), nb::arg("high"), gen,
      doc("_random_(self, low, high, generator) -> None",
          "Fills self with uniform integers from [low, high) (behind Tensor.random_)."));
  m.def(
      "_exponential_", [](Tensor& t, double lambd, Gen g) { exponential_(t, lambd, gen_of(g)); },
      nb::arg("self"), nb::arg("lambd"), gen,
      doc("_exponential_(self, lambd, generator) -> None",
          "Fills self with exponential samples (behind Tensor.exponential_)."));
  m.def(
      "_cauchy_",
      [](Tensor& t, double median, double sigma, Gen g) { cauchy_(t, median, sigma, gen_of(g)); },
      nb::arg("self"), nb::arg("median"), nb::arg("sigma"), gen,
      doc("_cauchy_(self, median, sigma, generator) -> None",
          "Fills self with Cauchy samples (behind Tensor.cauchy_)."));
  m.def(
      "_log_normal_",
      [](Tensor& t, double mean, double std, Gen g) { log_normal_(t, mean, std, gen_of(g)); },
      nb::arg("self"), nb::arg("mean"), nb::arg("std"), gen,
      doc("_log_normal_(self, mean, std, generator) -> None",
          "Fills self with log-normal samples (behind Tensor.log_normal_)."));
  m.def(
      "_geometric_", [](Tensor& t, double p, Gen g) { geometric_(t, p, gen_of(g)); },
      nb::arg("self"), nb::arg("p"), gen,
      doc("_geometric_(self, p, generator) -> None",
          "Fills self with geometric samples (behind Tensor.geometric_)."));
  m.def(
      "_poisson",
      [](const Tensor& t, Gen g) {
        GeneratorPtr p = gen_of(g);
        return op::poisson.call(t, p ? p : default_generator());
      },
      nb::arg("input"), gen,
      doc("_poisson(input, generator) -> Tensor",
          "Poisson samples with the rates in input (behind ember.poisson)."));
  m.def(
      "_binomial",
      [](const Tensor& count, const Tensor& prob, Gen g) {
        GeneratorPtr p = gen_of(g);
        return op::binomial.call(count, prob, p ? p : default_generator());
      },
      nb::arg("count"), nb::arg("prob"), gen,
      doc("_binomial(count, prob, generator) -> Tensor",
          "Binomial samples of count trials of probability prob (behind ember.binomial)."));
  m.def(
      "_standard_gamma",
      [](const Tensor& t, Gen g) {
        GeneratorPtr p = gen_of(g);
        return op::_standard_gamma.call(t, p ? p : default_generator());
      },
      nb::arg("input"), gen,
      doc("_standard_gamma(input, generator) -> Tensor",
          "Gamma(input, 1) samples, drawn as torch does (behind ember._standard_gamma)."));
  m.def(
      "_sample_dirichlet",
      [](const Tensor& t, Gen g) {
        GeneratorPtr p = gen_of(g);
        return op::_sample_dirichlet.call(t, p ? p : default_generator());
      },
      nb::arg("input"), gen,
      doc("_sample_dirichlet(input, generator) -> Tensor",
          "Dirichlet(input) samples over the last dim (behind ember._sample_dirichlet)."));
  m.def(
      "_standard_gamma_grad",
      [](const Tensor& alpha, const Tensor& x) { return op::_standard_gamma_grad.call(alpha, x); },
      nb::arg("input"), nb::arg("output"),
      doc("_standard_gamma_grad(input, output) -> Tensor",
          "d output / d input of standard gamma samples output (torch's approximation)."));
  m.def(
      "_dirichlet_grad",
      [](const Tensor& x, const Tensor& alpha, const Tensor& total) {
        return op::_dirichlet_grad.call(x, alpha, total);
      },
      nb::arg("x"), nb::arg("alpha"), nb::arg("total"),
      doc("_dirichlet_grad(x, alpha, total) -> Tensor",
          "Reparameterized gradient of Dirichlet samples x (torch's approximation)."));
  m.def(
      "_bernoulli", [](const Tensor& t, Gen g) { return bernoulli(t, gen_of(g)); },
      nb::arg("input"), gen,
      doc("_bernoulli(input, generator) -> Tensor",
          "Ones with the probabilities in input, zeros elsewhere (behind ember.bernoulli)."));
  m.def(
      "_multinomial",
      [](const Tensor& t, int64_t n, bool replacement, Gen g) {
        return multinomial(t, n, replacement, gen_of(g));
      },
      nb::arg("input"), nb::arg("num_samples"), nb::arg("replacement"), gen,
      doc("_multinomial(input, num_samples, replacement, generator) -> Tensor",
          "Category indices drawn with the weights in each row of input (behind "
          "ember.multinomial)."));
  m.def(
      "_normal",
      [](const Tensor& mean, const Tensor& std, Gen g) { return normal(mean, std, gen_of(g)); },
      nb::arg("mean"), nb::arg("std"), gen,
      doc("_normal(mean, std, generator) -> Tensor",
          "Normal samples with elementwise means and standard deviations (behind ember.normal)."));
}

}  // namespace ember::py
