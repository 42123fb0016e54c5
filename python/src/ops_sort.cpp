// Scans, sorting, selection and counting (csrc/ember/ops/sort.cpp, reduce.cpp): cumsum/cumprod,
// cummax/cummin, sort/argsort, topk, kthvalue, median, mode, unique, bincount, histc. Ops that
// return (values, indices) are bound as _name and wrapped in named tuples in Python.
#include "common.h"

namespace ember::py {

void bind_sort(nb::module_& m) {
  auto cls = tensor_class();
  both(
      m, cls, "cumsum", [](const Tensor& t, int64_t d, Dt dt) { return cumsum(t, d, dt); },
      {"cumsum(input, dim, *, dtype=None) -> Tensor",
       "Running sums along dim: element i is the sum of elements 0..i."},
      nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = nb::none());
  both(
      m, cls, "cumprod", [](const Tensor& t, int64_t d, Dt dt) { return cumprod(t, d, dt); },
      {"cumprod(input, dim, *, dtype=None) -> Tensor",
       "Running products along dim: element i is the product of elements 0..i."},
      nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = nb::none());
  both(
      m, cls, "logcumsumexp", [](const Tensor& t, int64_t d) { return logcumsumexp(t, d); },
      {"logcumsumexp(input, dim) -> Tensor",
       "Running log-sum-exp along dim: element i is log(sum of exp(elements 0..i))."},
      nb::arg("dim"));
  cls.def("cumsum_", inplace([](Tensor& t, int64_t d) { copy_(t, cumsum(t, d)); }), nb::arg("dim"),
          doc("cumsum_(dim) -> Tensor", "In-place form of cumsum()."));
  m.def(
      "_cummax", [](const Tensor& t, int64_t d) { return cummax(t, d); }, nb::arg("input"),
      nb::arg("dim"),
      doc("_cummax(input, dim) -> (Tensor, Tensor)",
          "Running maxima along dim and where they occur (behind ember.cummax)."));
  m.def(
      "_cummin", [](const Tensor& t, int64_t d) { return cummin(t, d); }, nb::arg("input"),
      nb::arg("dim"),
      doc("_cummin(input, dim) -> (Tensor, Tensor)",
          "Running minima along dim and where they occur (behind ember.cummin)."));
  m.def(
      "_sort",
      [](const Tensor& t, int64_t d, bool desc, bool stable) { return sort(t, d, desc, stable); },
      nb::arg("input"), nb::arg("dim"), nb::arg("descending"), nb::arg("stable"),
      doc("_sort(input, dim, descending, stable) -> (Tensor, Tensor)",
          "The values sorted along dim and their original indices (behind ember.sort)."));
  both(
      m, cls, "argsort",
      [](const Tensor& t, int64_t d, bool desc, bool stable) {
        return argsort(t, d, desc, stable);
      },
      {"argsort(input, dim=-1, descending=False, *, stable=False) -> Tensor",
       "The indices that sort input along dim."},
      nb::arg("dim") = -1, nb::arg("descending") = false, nb::kw_only(), nb::arg("stable") = false);
  m.def(
      "_topk",
      [](const Tensor& t, int64_t k, int64_t d, bool largest, bool sorted) {
        return topk(t, k, d, largest, sorted);
      },
      nb::arg("input"), nb::arg("k"), nb::arg("dim"), nb::arg("largest"), nb::arg("sorted"),
      doc("_topk(input, k, dim, largest, sorted) -> (Tensor, Tensor)",
          "The k largest (or smallest) values along dim and their indices (behind ember.topk)."));
  m.def(
      "_kthvalue",
      [](const Tensor& t, int64_t k, int64_t d, bool keep) { return kthvalue(t, k, d, keep); },
      nb::arg("input"), nb::arg("k"), nb::arg("dim"), nb::arg("keepdim"),
      doc("_kthvalue(input, k, dim, keepdim) -> (Tensor, Tensor)",
          "The k-th smallest value along dim and its index (behind ember.kthvalue)."));
  m.def(
      "_median_all", [](const Tensor& t) { return median(t); }, nb::arg("input"),
      doc("_median_all(input) -> Tensor",
          "The lower median of all elements (behind ember.median)."));
  m.def(
      "_median_dim", [](const Tensor& t, int64_t d, bool keep) { return median(t, d, keep); },
      nb::arg("input"), nb::arg("dim"), nb::arg("keepdim"),
      doc("_median_dim(input, dim, keepdim) -> (Tensor, Tensor)",
          "The lower median along dim and its index (behind ember.median)."));
  m.def(
      "_mode", [](const Tensor& t, int64_t d, bool keep) { return mode(t, d, keep); },
      nb::arg("input"), nb::arg("dim"), nb::arg("keepdim"),
      doc("_mode(input, dim, keepdim) -> (Tensor, Tensor)",
          "The most frequent value along dim and an index of it (behind ember.mode)."));
  m.def(
      "_unique",
      [](const Tensor& t, bool sorted, bool inv, bool counts, std::optional<int64_t> dim) {
        return unique(t, sorted, inv, counts, dim);
      },
      nb::arg("input"), nb::arg("sorted"), nb::arg("return_inverse"), nb::arg("return_counts"),
      nb::arg("dim").none(),
      doc("_unique(input, sorted, return_inverse, return_counts, dim) -> (Tensor, Tensor, Tensor)",
          "The distinct values (or slices along dim), with inverse indices and counts (behind "
          "ember.unique)."));
  both(
      m, cls, "bincount",
      [](const Tensor& t, std::optional<Tensor> w, int64_t minlength) {
        return bincount(t, w, minlength);
      },
      {"bincount(input, weights=None, minlength=0) -> Tensor",
       "How often each value 0..max occurs in a 1-D tensor of non-negative ints (or the sum of "
       "their weights)."},
      nb::arg("weights") = nb::none(), nb::arg("minlength") = 0);
  both(
      m, cls, "histc",
      [](const Tensor& t, int64_t bins, double lo, double hi) { return histc(t, bins, lo, hi); },
      {"histc(input, bins=100, min=0, max=0) -> Tensor",
       "A histogram of bins equal-width bins over [min, max] (the data's range when both are 0)."},
      nb::arg("bins") = 100, nb::arg("min") = 0, nb::arg("max") = 0);
}

}  // namespace ember::py
