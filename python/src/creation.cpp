// Factory functions and random sampling (Python signatures parsed in ember/_creation.py).
#include <random>

#include "common.h"

namespace ember::py {

namespace {
TensorOptions opts(std::optional<ScalarType> dtype, bool requires_grad) {
  TensorOptions o;
  o.dtype_ = dtype;
  o.requires_grad_ = requires_grad;
  return o;
}
using Gen = std::optional<GeneratorPtr>;
GeneratorPtr gen_of(const Gen& g) { return g.value_or(nullptr); }
}  // namespace

void bind_creation(nb::module_& m) {
  using Dt = std::optional<ScalarType>;
  m.def("_empty", [](std::vector<int64_t> size, Dt dtype, bool rg) { return empty(size, opts(dtype, rg)); });
  m.def("_zeros", [](std::vector<int64_t> size, Dt dtype, bool rg) { return zeros(size, opts(dtype, rg)); });
  m.def("_ones", [](std::vector<int64_t> size, Dt dtype, bool rg) { return ones(size, opts(dtype, rg)); });
  m.def("_full", [](std::vector<int64_t> size, Scalar v, Dt dtype, bool rg) { return full(size, v, opts(dtype, rg)); });
  m.def("_arange", [](Scalar start, Scalar end, Scalar step, Dt dtype, bool rg) {
    return arange(start, end, step, opts(dtype, rg));
  });
  m.def("_linspace", [](Scalar start, Scalar end, int64_t steps, Dt dtype, bool rg) {
    return linspace(start, end, steps, opts(dtype, rg));
  });
  m.def("_logspace", [](Scalar start, Scalar end, int64_t steps, double base, Dt dtype, bool rg) {
    return logspace(start, end, steps, base, opts(dtype, rg));
  });
  m.def("_eye", [](int64_t n, std::optional<int64_t> mm, Dt dtype, bool rg) { return eye(n, mm, opts(dtype, rg)); });
  m.def("tril", &tril, nb::arg("input"), nb::arg("diagonal") = 0);
  m.def("triu", &triu, nb::arg("input"), nb::arg("diagonal") = 0);
  m.def("diag", &diag, nb::arg("input"), nb::arg("diagonal") = 0);

  nb::class_<Generator>(m, "Generator")
      .def("__init__", [](Generator* g, nb::handle) { new (g) Generator(); },
           nb::arg("device") = nb::none())
      .def("manual_seed", [](nb::handle self, uint64_t seed) {
        nb::cast<Generator&>(self).manual_seed(seed);
        return nb::borrow(self);
      })
      .def("initial_seed", &Generator::initial_seed)
      .def("seed", [](Generator& g) {
        uint64_t s = std::random_device{}();
        g.manual_seed(s);
        return s;
      })
      .def("get_state", [](const Generator& g) { return g.state(); })
      .def("set_state", [](Generator& g, std::pair<uint64_t, uint64_t> s) { g.set_state(s.first, s.second); });
  m.def("default_generator", [] { return default_generator(); });
  m.def("_rand", [](std::vector<int64_t> size, Gen g, Dt dtype) {
    return rand(size, gen_of(g), dtype.value_or(default_dtype()));
  });
  m.def("_randn", [](std::vector<int64_t> size, Gen g, Dt dtype) {
    return randn(size, gen_of(g), dtype.value_or(default_dtype()));
  });
  m.def("_randint", [](int64_t low, int64_t high, std::vector<int64_t> size, Gen g, Dt dtype) {
    return randint(low, high, size, gen_of(g), dtype.value_or(kLong));
  });
  m.def("_randperm", [](int64_t n, Gen g, Dt dtype) { return randperm(n, gen_of(g), dtype.value_or(kLong)); });
  m.def("_uniform_", [](Tensor& t, double a, double b, Gen g) { uniform_(t, a, b, gen_of(g)); });
  m.def("_normal_", [](Tensor& t, double mean, double std, Gen g) { normal_(t, mean, std, gen_of(g)); });
  m.def("_bernoulli_", [](Tensor& t, double p, Gen g) { bernoulli_(t, p, gen_of(g)); });
  m.def("_random_", [](Tensor& t, int64_t from, std::optional<int64_t> to, Gen g) {
    random_(t, from, to, gen_of(g));
  });
  m.def("_bernoulli", [](const Tensor& t, Gen g) { return bernoulli(t, gen_of(g)); });
  m.def("_multinomial", [](const Tensor& t, int64_t n, bool replacement, Gen g) {
    return multinomial(t, n, replacement, gen_of(g));
  });
  m.def("_normal", [](const Tensor& mean, const Tensor& std, Gen g) { return normal(mean, std, gen_of(g)); });
}

}  // namespace ember::py
