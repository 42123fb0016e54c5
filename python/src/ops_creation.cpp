// Factory functions (csrc/ember/ops/creation.cpp). The _name bindings take the parsed arguments
// of torch's signatures, which python/ember/_creation.py parses; tril/triu/diag are public.
#include "common.h"

namespace {
// check_scalar_fits for a fill of `t` (full, fill_): torch's one-element fill converts a number
// to float16 or bfloat16 unchecked (full((1,), 1e39, dtype=float16) is inf; (2,) raises).
void check_fill_fits(const ember::Scalar& v, const ember::Tensor& t) {
  if (t.numel() == 1 && (t.dtype() == ember::kHalf || t.dtype() == ember::kBFloat16)) return;
  ember::check_scalar_fits(v, t.dtype());
}
}  // namespace

namespace ember::py {

namespace {
TensorOptions opts(std::optional<ScalarType> dtype, bool requires_grad) {
  TensorOptions o;
  o.dtype_ = dtype;
  o.requires_grad_ = requires_grad;
  return o;
}
}  // namespace

void bind_creation(nb::module_& m) {
  auto size = nb::arg("size"), dtype = nb::arg("dtype"), rg = nb::arg("requires_grad");
  m.def(
      "_empty",
      [](std::vector<int64_t> size, Dt dtype, bool rg) { return empty(size, opts(dtype, rg)); },
      size, dtype, rg,
      doc("_empty(size, dtype, requires_grad) -> Tensor",
          "An uninitialized tensor of the given shape (behind ember.empty)."));
  m.def(
      "_zeros",
      [](std::vector<int64_t> size, Dt dtype, bool rg) { return zeros(size, opts(dtype, rg)); },
      size, dtype, rg,
      doc("_zeros(size, dtype, requires_grad) -> Tensor",
          "A tensor of zeros (behind ember.zeros)."));
  m.def(
      "_ones",
      [](std::vector<int64_t> size, Dt dtype, bool rg) { return ones(size, opts(dtype, rg)); },
      size, dtype, rg,
      doc("_ones(size, dtype, requires_grad) -> Tensor", "A tensor of ones (behind ember.ones)."));
  m.def(
      "_full",
      [](std::vector<int64_t> size, Scalar v, Dt dtype, bool rg) {
        Tensor r = full(size, v, opts(dtype, rg));
        check_fill_fits(v, r);  // full((2,), 300, dtype=uint8) raises, as PyTorch
        return r;
      },
      size, nb::arg("fill_value"), dtype, rg,
      doc("_full(size, fill_value, dtype, requires_grad) -> Tensor",
          "A tensor with every element set to fill_value (behind ember.full)."));
  m.def(
      "_arange",
      [](Scalar start, Scalar end, Scalar step, Dt dtype, bool rg) {
        return arange(start, end, step, opts(dtype, rg));
      },
      nb::arg("start"), nb::arg("end"), nb::arg("step"), dtype, rg,
      doc("_arange(start, end, step, dtype, requires_grad) -> Tensor",
          "The values start, start + step, ... up to but excluding end (behind ember.arange)."));
  m.def(
      "_linspace",
      [](Scalar start, Scalar end, int64_t steps, Dt dtype, bool rg) {
        return linspace(start, end, steps, opts(dtype, rg));
      },
      nb::arg("start"), nb::arg("end"), nb::arg("steps"), dtype, rg,
      doc("_linspace(start, end, steps, dtype, requires_grad) -> Tensor",
          "steps evenly spaced values from start to end inclusive (behind ember.linspace)."));
  m.def(
      "_logspace",
      [](Scalar start, Scalar end, int64_t steps, double base, Dt dtype, bool rg) {
        return logspace(start, end, steps, base, opts(dtype, rg));
      },
      nb::arg("start"), nb::arg("end"), nb::arg("steps"), nb::arg("base"), dtype, rg,
      doc("_logspace(start, end, steps, base, dtype, requires_grad) -> Tensor",
          "base raised to steps evenly spaced exponents from start to end (behind "
          "ember.logspace)."));
  m.def(
      "_eye",
      [](int64_t n, std::optional<int64_t> mm, Dt dtype, bool rg) {
        return eye(n, mm, opts(dtype, rg));
      },
      nb::arg("n"), nb::arg("m"), dtype, rg,
      doc("_eye(n, m, dtype, requires_grad) -> Tensor",
          "An n x m matrix with ones on the diagonal and zeros elsewhere (behind ember.eye)."));
  m.def("tril", &tril, nb::arg("input"), nb::arg("diagonal") = 0,
        doc("tril(input, diagonal=0) -> Tensor",
            "A copy of the matrix (or batch) with the elements above the given diagonal set to "
            "zero."));
  m.def("triu", &triu, nb::arg("input"), nb::arg("diagonal") = 0,
        doc("triu(input, diagonal=0) -> Tensor",
            "A copy of the matrix (or batch) with the elements below the given diagonal set to "
            "zero."));
  m.def(
      "diag", &diag, nb::arg("input"), nb::arg("diagonal") = 0,
      doc("diag(input, diagonal=0) -> Tensor",
          "A square matrix with the vector on the given diagonal, or the diagonal of a matrix as a "
          "vector."));
}

}  // namespace ember::py
