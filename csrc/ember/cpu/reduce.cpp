// CPU reduction kernels: each is a small Op for the engine in reduce_engine.h.
// Compiled for the vectorizer: see Note [Vectorized elementwise] in cpu/loops.h.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno", "fp-contract=off")
#include <cmath>
#include <limits>

#include "ember/core/complex_view.h"
#include "ember/core/reduce_shape.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/reduce_engine.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/reduce.h"

namespace ember::cpu {

ReducePlan plan_reduction(const Tensor& self, uint64_t mask) {
  ReducePlan p;
  int64_t n = self.dim();
  DimVector order;
  for (int64_t d = 0; d < n; ++d)
    if (!(mask >> d & 1)) order.push_back(d);
  size_t nkept = order.size();
  for (int64_t d = 0; d < n; ++d)
    if (mask >> d & 1) order.push_back(d);
  p.M = 1;
  p.K = 1;
  for (size_t i = 0; i < order.size(); ++i)
    (i < nkept ? p.M : p.K) *= self.sizes()[size_t(order[i])];
  // Try to express kept and reduced parts each as one strided dim over self's storage.
  auto collapse = [&](size_t b, size_t e, int64_t& stride) {
    stride = 0;
    int64_t expect = -1;
    for (size_t i = e; i-- > b;) {
      int64_t d = order[i], size = self.sizes()[size_t(d)], st = self.strides()[size_t(d)];
      if (size == 1) continue;
      if (expect == -1) stride = st;
      else if (st != expect) return false;
      expect = st * size;
    }
    if (expect == -1) stride = 1;
    return true;
  };
  int64_t ms = 0, ks = 0;
  if (collapse(0, nkept, ms) && collapse(nkept, order.size(), ks) && (ks == 1 || ms == 1)) {
    p.input = self;
    p.row_stride = ms;
    p.k_stride = ks;
    if (p.M == 1) p.row_stride = 0;
    return p;
  }
  // Kept dims first, then the reduced ones: permute's geometry as a view, then one copy.
  DimVector sizes, strides;
  for (int64_t d : order) {
    sizes.push_back(self.sizes()[size_t(d)]);
    strides.push_back(self.strides()[size_t(d)]);
  }
  p.input = contiguous(self.as_strided_view(sizes, strides, self.storage_offset()));
  p.row_stride = p.K;
  p.k_stride = 1;
  return p;
}

namespace {

// The output as the meta step (ops/reduce.cpp) hands it over: of `dtype`, contiguous, one
// element per output (Note [Meta step] in ops/meta.h).
void check_prepared(const char* name, const Tensor& self, uint64_t mask, const Tensor& out,
                    ScalarType dtype) {
  int64_t outputs = 1;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!(mask >> d & 1)) outputs *= self.sizes()[size_t(d)];
  EMBER_CHECK(out.dtype() == dtype && out.is_contiguous() && out.numel() == outputs, name,
              ": expected an output of the result dtype and the reduced shape (the op's meta ",
              "step prepares it); got ", out.dtype(), " output");
}

// Integer sums and products wrap modulo 2^64 as PyTorch's (and numpy's) do; computed in the
// unsigned type, where wrapping is defined, since signed overflow is undefined behaviour.
template <class A>
A wrap_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return A(U(a) + U(b));
  } else {
    return a + b;
  }
}
template <class A>
A wrap_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return A(U(a) * U(b));
  } else {
    return a * b;
  }
}

template <class A, class B = A>
struct SumOp {
  using acc_t = A;
  using block_t = B;  // see Note [Reductions]
  static constexpr bool kLaned = true;
  A init() const { return A(0); }
  template <class V>
  void step(A& a, V x, int64_t) const {
    a = wrap_add(a, A(x));
  }
  A combine(A a, A b) const { return wrap_add(a, b); }
};

template <class A>
struct ProdOp {
  using acc_t = A;
  static constexpr bool kLaned = true;
  A init() const { return A(1); }
  template <class V>
  void step(A& a, V x, int64_t) const {
    a = wrap_mul(a, A(x));
  }
  A combine(A a, A b) const { return wrap_mul(a, b); }
};

// Widest accumulator per input type: sums of floats in double, of ints in int64.
template <class T>
using sum_acc_t = std::conditional_t<std::is_floating_point_v<acc_t<T>>, double, int64_t>;

// Sum's op per input type: floating inputs add short blocks in their own accumulator type first.
template <class A, class T>
using SumFor = SumOp<A, std::conditional_t<std::is_floating_point_v<acc_t<T>>, acc_t<T>, A>>;
template <class A, class T>
using ProdFor = ProdOp<A>;

// Integer and bool inputs accumulate in int64, written to an int64 output or (a requested
// integer dtype) to their own.
template <template <class, class> class Op>
Tensor& sum_like(const char* name, const Tensor& self, uint64_t mask, Tensor& out) {
  ReducePlan plan = plan_reduction(self, mask);
  dispatch<kAllTypes>(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using A = sum_acc_t<T>;
    auto loop = [&](auto* o) {
      using O = std::remove_pointer_t<decltype(o)>;
      run_reduction<T>(plan, Op<A, T>(), [&](int64_t m, A a) { o[m] = O(a); });
    };
    if (std::is_floating_point_v<acc_t<T>> || out.dtype() == self.dtype())
      loop(reinterpret_cast<T*>(out.data_ptr()));
    else loop(reinterpret_cast<int64_t*>(out.data_ptr()));
  });
  return out;
}

// The dtype a sum's output may have: the input's, or int64 for an integer or bool input.
ScalarType summed(ScalarType in, ScalarType out) {
  return is_integral(in, true) && out == kLong ? kLong : in;
}

Tensor& sum_out_kernel(const Tensor& self, IntArrayRef dims, bool keepdim,
                       std::optional<ScalarType>, Tensor& out) {
  const uint64_t mask = reduction_mask(self, dims, "sum");
  check_prepared("sum", self, mask, out, summed(self.dtype(), out.dtype()));
  if (is_complex(self.dtype())) {
    // Complex sums: the real and imaginary parts reduce as a trailing pair dim of the real view.
    Tensor pairs = real_pairs_view(out);
    sum_like<SumFor>("sum", real_pairs_view(self), mask, pairs);
    return out;
  }
  return sum_like<SumFor>("sum", self, mask, out);
}
Tensor& prod_out_kernel(const Tensor& self, IntArrayRef dims, bool keepdim,
                        std::optional<ScalarType>, Tensor& out) {
  const uint64_t mask = reduction_mask(self, dims, "prod");
  check_prepared("prod", self, mask, out, summed(self.dtype(), out.dtype()));
  return sum_like<ProdFor>("prod", self, mask, out);
}
EMBER_REGISTER_KERNEL(op::sum_out, CPU, sum_out_kernel);
EMBER_REGISTER_KERNEL(op::prod_out, CPU, prod_out_kernel);

// max/min keep the first NaN they meet; index tracks where the winner was found.
template <class A, bool Max>
struct ExtremeOp {
  struct acc_t {
    A v;
    int64_t i;
  };
  acc_t init() const {
    return {Max ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max(), -1};
  }
  static bool better(A x, A cur) {
    if constexpr (std::is_floating_point_v<A>) {
      if (std::isnan(cur)) return false;
      if (std::isnan(x)) return true;
    }
    return Max ? x > cur : x < cur;
  }
  template <class V>
  void step(acc_t& a, V x, int64_t k) const {
    A v = A(x);
    if (a.i < 0 || better(v, a.v)) a = {v, k};
  }
  acc_t combine(acc_t a, acc_t b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    return better(b.v, a.v) ? b : a;
  }
};

template <bool Max>
void extreme(const char* name, const Tensor& self, uint64_t mask, Tensor* values, Tensor* indices) {
  ReducePlan plan = plan_reduction(self, mask);
  dispatch<kAllTypes>(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    T* vo = values ? reinterpret_cast<T*>(values->data_ptr()) : nullptr;
    int64_t* io = indices ? reinterpret_cast<int64_t*>(indices->data_ptr()) : nullptr;
    run_reduction<T>(plan, ExtremeOp<A, Max>(), [&](int64_t m, auto a) {
      if (vo) vo[m] = T(a.v);
      if (io) io[m] = a.i;
    });
  });
}

template <bool Max>
Tensor& amax_out_kernel(const Tensor& self, IntArrayRef dims, bool keepdim, Tensor& out) {
  const char* name = Max ? "amax" : "amin";
  const uint64_t mask = reduction_mask(self, dims, name);
  check_prepared(name, self, mask, out, self.dtype());
  extreme<Max>(name, self, mask, &out, nullptr);
  return out;
}
EMBER_REGISTER_KERNEL(op::amax_out, CPU, amax_out_kernel<true>);
EMBER_REGISTER_KERNEL(op::amin_out, CPU, amax_out_kernel<false>);

uint64_t dim_bit(const Tensor& self, int64_t dim) {
  return self.dim() == 0 ? 0 : uint64_t(1) << maybe_wrap_dim(dim, self.dim());
}

template <bool Max>
std::tuple<Tensor&, Tensor&> max_dim_out_kernel(const Tensor& self, int64_t dim, bool keepdim,
                                                Tensor& values, Tensor& indices) {
  const char* name = Max ? "max" : "min";
  const uint64_t mask = dim_bit(self, dim);
  check_prepared(name, self, mask, values, self.dtype());
  check_prepared(name, self, mask, indices, kLong);
  extreme<Max>(name, self, mask, &values, &indices);
  return {values, indices};
}
EMBER_REGISTER_KERNEL(op::max_dim_out, CPU, max_dim_out_kernel<true>);
EMBER_REGISTER_KERNEL(op::min_dim_out, CPU, max_dim_out_kernel<false>);

template <bool Max>
Tensor& argmax_out_kernel(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                          Tensor& out) {
  const char* name = Max ? "argmax" : "argmin";
  if (dim) {
    const uint64_t mask = dim_bit(self, *dim);
    check_prepared(name, self, mask, out, kLong);
    extreme<Max>(name, self, mask, nullptr, &out);
    return out;
  }
  // over all elements: a flat contiguous view
  Tensor flat = contiguous(self);
  flat = flat.as_strided_view({flat.numel()}, {1}, flat.storage_offset());
  EMBER_CHECK(out.dtype() == kLong && out.numel() == 1, name,
              ": expected a one-element int64 output (the op's meta step prepares it)");
  extreme<Max>(name, flat, 1, nullptr, &out);
  return out;
}
EMBER_REGISTER_KERNEL(op::argmax_out, CPU, argmax_out_kernel<true>);
EMBER_REGISTER_KERNEL(op::argmin_out, CPU, argmax_out_kernel<false>);

// Welford's online mean/variance, merged with Chan's formula.
struct WelfordOp {
  struct acc_t {
    double mean = 0, m2 = 0;
    int64_t n = 0;
  };
  acc_t init() const { return {}; }
  template <class V>
  void step(acc_t& a, V x, int64_t) const {
    double v = double(x);
    ++a.n;
    double delta = v - a.mean;
    a.mean += delta / double(a.n);
    a.m2 += delta * (v - a.mean);
  }
  acc_t combine(acc_t a, acc_t b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    int64_t n = a.n + b.n;
    double delta = b.mean - a.mean;
    return {a.mean + delta * double(b.n) / double(n),
            a.m2 + b.m2 + delta * delta * double(a.n) * double(b.n) / double(n), n};
  }
};

std::tuple<Tensor&, Tensor&> var_mean_out_kernel(const Tensor& self, IntArrayRef dims,
                                                 double correction, bool keepdim, Tensor& var,
                                                 Tensor& mean) {
  const uint64_t mask = reduction_mask(self, dims, "var");
  check_prepared("var", self, mask, var, self.dtype());
  check_prepared("var", self, mask, mean, self.dtype());
  ReducePlan plan = plan_reduction(self, mask);
  dispatch<kFloatTypes>(self.dtype(), "var", [&](auto tag) {
    using T = decltype(tag);
    T* vo = reinterpret_cast<T*>(var.data_ptr());
    T* mo = reinterpret_cast<T*>(mean.data_ptr());
    run_reduction<T>(plan, WelfordOp(), [&](int64_t m, WelfordOp::acc_t a) {
      // As PyTorch: m2 / max(0, n - correction), so 0/0 gives NaN and x/0 gives inf.
      vo[m] = T(a.m2 / std::max(0.0, double(a.n) - correction));
      mo[m] = T(a.n == 0 ? std::numeric_limits<double>::quiet_NaN() : a.mean);
    });
  });
  return {var, mean};
}
EMBER_REGISTER_KERNEL(op::var_mean_out, CPU, var_mean_out_kernel);

template <bool All>
struct LogicalOp {
  using acc_t = bool;
  bool init() const { return All; }
  template <class V>
  void step(bool& a, V x, int64_t) const {
    if constexpr (All) a = a && bool(x);
    else a = a || bool(x);
  }
  bool combine(bool a, bool b) const { return All ? (a && b) : (a || b); }
};

template <bool All>
Tensor& all_out_kernel(const Tensor& self, IntArrayRef dims, bool keepdim, Tensor& out) {
  const char* name = All ? "all" : "any";
  const uint64_t mask = reduction_mask(self, dims, name);
  check_prepared(name, self, mask, out, self.dtype() == kByte ? kByte : kBool);
  ReducePlan plan = plan_reduction(self, mask);
  dispatch<kAllTypes>(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    char* o = static_cast<char*>(out.data_ptr());
    run_reduction<T>(plan, LogicalOp<All>(), [&](int64_t m, bool a) { o[m] = char(a); });
  });
  return out;
}
EMBER_REGISTER_KERNEL(op::all_out, CPU, all_out_kernel<true>);
EMBER_REGISTER_KERNEL(op::any_out, CPU, all_out_kernel<false>);

}  // namespace

Tensor sum(const Tensor& self, IntArrayRef dims) {
  const uint64_t mask = reduction_mask(self, dims, "sum");
  Tensor out = empty(reduced_shape(self, mask, false),
                     is_integral(self.dtype(), true) ? kLong : self.dtype());
  return sum_like<SumFor>("sum", self, mask, out);
}

}  // namespace ember::cpu
