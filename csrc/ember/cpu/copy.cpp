// Copy with broadcasting and dtype conversion, and fill: the kernels behind to(), clone(), copy_.
// Compiled for the vectorizer: see Note [Vectorized elementwise] in cpu/loops.h.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno", "fp-contract=off")
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/loops.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/ops.h"

namespace ember::cpu {

void unsupported_dtype(const char* op, ScalarType t) {
  EMBER_ERROR(ErrorKind::NotImplemented, "\"", op, "\" not implemented for '", scalar_type_name(t), "'");
}

namespace {

Tensor& copy_kernel(Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return dst;
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() &&
      dst.sizes().equals(src.sizes())) {
    if (dst.data_ptr() != src.data_ptr()) {
      char* d = static_cast<char*>(dst.data_ptr());
      const char* s = static_cast<const char*>(src.data_ptr());
      parallel_for(0, int64_t(dst.nbytes()), kGrainSize * 8, [&](int64_t b, int64_t e) {
        std::memcpy(d + b, s + b, size_t(e - b));
      });
    }
    return dst;
  }
  TensorIter it({&dst, &src});
  dispatch<kAllTypes>(dst.dtype(), "copy_", [&](auto d) {
    using D = decltype(d);
    dispatch<kAllTypes>(src.dtype(), "copy_", [&](auto s) {
      using S = decltype(s);
      if constexpr (std::is_same_v<D, bool>)
        unary_loop<D, S>(it, [](auto v) { return v != decltype(v)(0); });
      else
        unary_loop<D, S>(it, [](auto v) { return v; });
    });
  });
  return dst;
}

Tensor& fill_kernel(Tensor& self, const Scalar& value) {
  dispatch<kAllTypes>(self.dtype(), "fill_", [&](auto tag) {
    using T = decltype(tag);
    const T v = value.to<T>();
    TensorIter it({&self});
    it.for_each([&](char** p, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(p[0]);
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
      }
    });
  });
  return self;
}

}  // namespace

EMBER_REGISTER_KERNEL("copy_", CPU, copy_kernel);
EMBER_REGISTER_KERNEL("fill_", CPU, fill_kernel);

}  // namespace ember::cpu
