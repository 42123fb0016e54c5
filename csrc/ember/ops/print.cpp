// operator<< for tensors and dtypes, in libtorch's layout: the values (one per line for 1-d, a
// matrix per trailing 2-d slice under a "(i,j,.,.) =" header), then "[ CPUFloatType{3,4} ]".
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "ember/ops/ops.h"

namespace ember {
namespace {

// One format for every element, chosen from all of them (as libtorch does): integers when each
// value is integral, else fixed with 4 decimals, or scientific when magnitudes are extreme.
struct Format {
  bool integral = true, scientific = false;
  int width = 1;
  std::string str(double v) const {
    std::ostringstream s;
    if (integral && std::isfinite(v)) s << int64_t(v);
    else if (scientific) s << std::scientific << std::setprecision(4) << v;
    else s << std::fixed << std::setprecision(4) << v;
    return s.str();
  }
};

Format choose_format(const double* v, int64_t n, bool integral_dtype) {
  Format f;
  double lo = INFINITY, hi = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) continue;
    if (v[i] != std::nearbyint(v[i])) f.integral = false;
    double a = std::fabs(v[i]);
    hi = std::max(hi, a);
    if (a > 0) lo = std::min(lo, a);
  }
  f.integral = f.integral || integral_dtype;
  f.scientific = !f.integral && (hi >= 1e8 || lo < 1e-4);
  for (int64_t i = 0; i < n; ++i) f.width = std::max(f.width, int(f.str(v[i]).size()));
  return f;
}

void print_matrix(std::ostream& os, const double* v, int64_t rows, int64_t cols, const Format& f) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c)
      os << (c ? " " : "") << std::setw(f.width + 1) << f.str(v[r * cols + c]);
    os << '\n';
  }
}

}  // namespace

std::ostream& operator<<(std::ostream& os, ScalarType t) {
  switch (t) {
#define EMBER_DTYPE_CASE(cpp, name, py) \
  case ScalarType::name:                \
    return os << #name;
    EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_DTYPE_CASE)
#undef EMBER_DTYPE_CASE
    default:
      return os << "Undefined";
  }
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  Tensor values = contiguous(to_dtype(t.detach(), kDouble));
  const double* v = values.data_ptr<double>();
  Format f = choose_format(v, t.numel(), is_integral(t.dtype(), true));
  if (t.dim() == 0) {
    os << f.str(v[0]) << '\n';
  } else if (t.numel() > 0 && t.dim() == 1) {
    print_matrix(os, v, t.size(0), 1, f);
  } else if (t.numel() > 0) {
    int64_t rows = t.size(-2), cols = t.size(-1), per = rows * cols;
    for (int64_t m = 0; m < t.numel() / per; ++m) {
      if (t.dim() > 2) {
        os << '(';
        for (int64_t d = 0, rest = m; d < t.dim() - 2; ++d) {
          int64_t inner = 1;
          for (int64_t e = d + 1; e < t.dim() - 2; ++e) inner *= t.size(e);
          os << rest / inner + 1 << ',';
          rest %= inner;
        }
        os << ".,.) = \n";
      }
      print_matrix(os, v + m * per, rows, cols, f);
      if (t.dim() > 2 && m + 1 < t.numel() / per) os << '\n';
    }
  }
  os << "[ " << (t.device().is_cpu() ? "CPU" : "Meta") << t.dtype() << "Type{";
  for (int64_t d = 0; d < t.dim(); ++d) os << (d ? "," : "") << t.size(d);
  return os << "} ]";
}

}  // namespace ember
