// CPU kernels of the sort family (sort, topk, kthvalue, median, mode) and of the counting ops
// (unique, bincount, histc). See Note [Sort order].
//
// Note [Sort order]
// Every kernel orders values as PyTorch does: NaN above everything (so it sorts last ascending,
// first descending, and is "largest" for topk). Where torch orders ties by position (a stable
// sort, median, unique) so does ember. Where it leaves them to its algorithm (an unstable sort,
// topk, kthvalue, mode) ember runs the same algorithm, compared by value alone: std::sort,
// partial_sort or nth_element, torch's quickselect, so equal values come out at the positions
// torch's gives, which programs see (argsort of equal scores, top-k accuracy, beam search).
// 16-bit floats are widened to float keys, so the templates below are instantiated for 8 key
// types, not 10.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "ember/core/parallel.h"
#include "ember/core/shape.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/sort.h"

namespace ember::cpu {

namespace {

template <class K>
bool is_nan(K v) {
  if constexpr (std::is_floating_point_v<K>) return std::isnan(v);
  else return false;
}
// a < b with NaN largest.
template <class K>
bool less(K a, K b) {
  if constexpr (std::is_floating_point_v<K>) return a < b || (std::isnan(b) && !std::isnan(a));
  else return a < b;
}

template <class K>
using Item = std::pair<K, int64_t>;

// torch's radix sort (its stable order for an unstable request) takes 1-D integer inputs of at
// least its grain size, 32768 elements.
constexpr int64_t kRadixSortMinimum = 32768;

// (value, position) order, ascending or descending in value; positions always ascend.
template <class K>
struct Order {
  bool descending;
  bool operator()(const Item<K>& a, const Item<K>& b) const {
    if (less(a.first, b.first)) return !descending;
    if (less(b.first, a.first)) return descending;
    return a.second < b.second;
  }
};

// Items enter in position order, so a stable sort on values alone yields the (value, position)
// order, with half the comparisons of Order (and measured several times faster than std::sort).
// Unstable: std::sort on values alone, the order torch gives an unstable request.
template <class K>
void sort_by_value(std::vector<Item<K>>& items, bool descending, bool stable = true) {
  auto run = [&](auto by) {
    if (stable) std::stable_sort(items.begin(), items.end(), by);
    else std::sort(items.begin(), items.end(), by);
  };
  if (descending) run([](const Item<K>& a, const Item<K>& b) { return less(b.first, a.first); });
  else run([](const Item<K>& a, const Item<K>& b) { return less(a.first, b.first); });
}

// Runs f(row, out_base) for every row of a contiguous (outer, size, inner) input, with `row`
// holding its (key, position) pairs; `out_base(j)` is the flat output offset of result j of the
// row in an output whose dim has `out_size` elements.
template <class T, class F>
void for_each_row(const Tensor& x, int64_t dim, int64_t out_size, F f) {
  using K = acc_t<T>;
  Rows r = rows_of(x.sizes(), dim);
  const T* in = reinterpret_cast<const T*>(x.data_ptr());
  int64_t rows = r.outer * r.inner;
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(r.size * 8, 1));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    std::vector<Item<K>> row(size_t(r.size));
    for (int64_t m = b; m < e; ++m) {
      int64_t o = m / r.inner, i = m % r.inner;
      const T* src = in + o * r.size * r.inner + i;
      for (int64_t k = 0; k < r.size; ++k) row[size_t(k)] = {K(src[k * r.inner]), k};
      f(row, [&](int64_t j) { return (o * out_size + j) * r.inner + i; });
    }
  });
}

std::tuple<Tensor, Tensor> sort_kernel(const Tensor& self, int64_t dim, bool descending,
                                       bool stable) {
  Tensor x = contiguous(self);
  Tensor values = empty(self.sizes(), self.dtype()), indices = empty(self.sizes(), kLong);
  if (x.numel() == 0) return {values, indices};
  int64_t n = x.dim() == 0 ? 1 : x.sizes()[size_t(dim)];
  dispatch<kAllTypes>(self.dtype(), "sort", [&](auto tag) {
    using T = decltype(tag);
    T* vo = reinterpret_cast<T*>(values.data_ptr());
    int64_t* io = indices.data_ptr<int64_t>();
    // torch sorts an unstable request with std::sort (by value, NaN largest), except a long 1-D
    // integer ascending one, which its radix sort orders stably (Note [Sort order])
    bool radix = x.dim() == 1 && !descending && is_integral(self.dtype(), false) &&
                 x.numel() >= kRadixSortMinimum;
    for_each_row<T>(x, dim, n, [&](auto& row, auto out) {
      sort_by_value(row, descending, stable || radix);
      for (int64_t j = 0; j < n; ++j) {
        vo[out(j)] = T(row[size_t(j)].first);
        io[out(j)] = row[size_t(j)].second;
      }
    });
  });
  return {values, indices};
}
EMBER_REGISTER_KERNEL(op::sort, CPU, sort_kernel);

std::tuple<Tensor, Tensor> topk_kernel(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                       bool sorted) {
  Tensor x = contiguous(self);
  DimVector shape(self.sizes());
  if (!shape.empty()) shape[size_t(dim)] = k;
  else k = 1;  // a 0-d input yields itself even for k = 0, as in PyTorch
  Tensor values = empty(shape, self.dtype()), indices = empty(shape, kLong);
  if (values.numel() == 0) return {values, indices};
  dispatch<kNumericTypes>(self.dtype(), "topk_cpu", [&](auto tag) {
    using T = decltype(tag);
    T* vo = reinterpret_cast<T*>(values.data_ptr());
    int64_t* io = indices.data_ptr<int64_t>();
    for_each_row<T>(x, dim, k, [&](auto& row, auto out) {
      using K = typename std::decay_t<decltype(row)>::value_type::first_type;
      // torch's selection, step for step, so that ties pick torch's positions (Note [Sort
      // order]): a partial sort when k is small against the row, else nth_element and a sort
      // of the k - 1 in front of it.
      auto by_value = [largest](const Item<K>& a, const Item<K>& b) {
        return largest ? less(b.first, a.first) : less(a.first, b.first);
      };
      if (k * 64 <= int64_t(row.size())) {
        std::partial_sort(row.begin(), row.begin() + k, row.end(), by_value);
      } else {
        std::nth_element(row.begin(), row.begin() + (k - 1), row.end(), by_value);
        if (sorted) std::sort(row.begin(), row.begin() + (k - 1), by_value);
      }
      for (int64_t j = 0; j < k; ++j) {
        vo[out(j)] = T(row[size_t(j)].first);
        io[out(j)] = row[size_t(j)].second;
      }
    });
  });
  return {values, indices};
}
EMBER_REGISTER_KERNEL(op::topk, CPU, topk_kernel);

// One value per row, picked by `pick(row)` (which may reorder the row and returns the position
// of the winner in it), into outputs of the reduced shape (with or without the kept dim) that
// the step (ops/sort.cpp) allocated; `dim` is wrapped.
template <uint32_t Allowed, class Pick>
void select_rows(const char* name, const Tensor& self, int64_t dim, Tensor& values, Tensor& indices,
                 Pick pick) {
  const int64_t rows = self.dim() == 0
                           ? self.numel()
                           : self.numel() / std::max<int64_t>(self.sizes()[size_t(dim)], 1);
  EMBER_CHECK(dim >= 0 && dim < std::max<int64_t>(self.dim(), 1) &&
                  values.dtype() == self.dtype() && indices.dtype() == kLong &&
                  values.is_contiguous() && indices.is_contiguous() && values.numel() == rows &&
                  indices.numel() == rows,
              name, ": expected a wrapped dim and outputs of the reduced shape (the op's meta ",
              "step prepares them)");
  Tensor x = contiguous(self);
  if (values.numel() == 0) return;
  dispatch<Allowed>(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    T* vo = reinterpret_cast<T*>(values.data_ptr());
    int64_t* io = indices.data_ptr<int64_t>();
    for_each_row<T>(x, dim, 1, [&](auto& row, auto out) {
      size_t w = pick(row);
      vo[out(0)] = T(row[w].first);
      io[out(0)] = row[w].second;
    });
  });
}

// The k-th smallest (0-based) of a row, by torch's selection step for step (the classic
// median-of-three quickselect, NaN largest), so that ties report torch's position.
struct KthPick {
  int64_t k;
  template <class Row>
  size_t operator()(Row& row) const {
    auto gt = [](const auto& a, const auto& b) { return less(b.first, a.first); };
    auto swap_at = [&row](int64_t i, int64_t j) { std::swap(row[size_t(i)], row[size_t(j)]); };
    int64_t lo = 0, hi = int64_t(row.size()) - 1;
    while (hi > lo) {
      if (hi == lo + 1) {
        if (gt(row[size_t(lo)], row[size_t(hi)])) swap_at(lo, hi);
        break;
      }
      swap_at(lo + (hi - lo) / 2, lo + 1);
      if (gt(row[size_t(lo + 1)], row[size_t(hi)])) swap_at(lo + 1, hi);
      if (gt(row[size_t(lo)], row[size_t(hi)])) swap_at(lo, hi);
      if (gt(row[size_t(lo + 1)], row[size_t(lo)])) swap_at(lo + 1, lo);
      int64_t i = lo + 1, j = hi;
      auto pivot = row[size_t(lo)];
      while (true) {
        do ++i;
        while (gt(pivot, row[size_t(i)]));
        do --j;
        while (gt(row[size_t(j)], pivot));
        if (j < i) break;
        swap_at(i, j);
      }
      swap_at(lo, j);
      if (j <= k) lo = i;
      if (j >= k) hi = j - 1;
    }
    return size_t(k);
  }
};

// The lower median of a row, or its first NaN.
struct MedianPick {
  template <class Row>
  size_t operator()(Row& row) const {
    for (size_t i = 0; i < row.size(); ++i)
      if (is_nan(row[i].first)) return i;
    // torch's median breaks ties by position (its nth_element compares (value, index))
    auto mid = row.begin() + int64_t(row.size() - 1) / 2;
    using K = typename Row::value_type::first_type;
    std::nth_element(row.begin(), mid, row.end(), Order<K>{false});
    return size_t(mid - row.begin());
  }
};

// The most frequent value (the first run of the longest length) and the last position of its
// run. torch's CPU mode sorts the (value, position) pairs with std::sort and a plain `<` on the
// value: which position is reported, and where NaNs land (they break that order; each is its
// own run), is that sort's, so the same sort here reports torch's value and position.
struct ModePick {
  template <class Row>
  size_t operator()(Row& row) const {
    std::sort(row.begin(), row.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    size_t best = 0, best_count = 0, run = 0;
    for (size_t i = 0; i < row.size(); ++i) {
      ++run;
      if (i + 1 == row.size() || row[i].first != row[i + 1].first) {
        if (run > best_count) {
          best = i;
          best_count = run;
        }
        run = 0;
      }
    }
    return best;
  }
};

std::tuple<Tensor&, Tensor&> kthvalue_out_kernel(const Tensor& self, int64_t k, int64_t dim, bool,
                                                 Tensor& values, Tensor& indices) {
  const int64_t n =
      self.dim() == 0 ? 1 : (dim >= 0 && dim < self.dim() ? self.sizes()[size_t(dim)] : 0);
  EMBER_CHECK(k >= 1 && k <= n, "kthvalue(): selected number k out of range for dimension ", dim);
  select_rows<kNumericTypes>("kthvalue_cpu", self, dim, values, indices, KthPick{k - 1});
  return {values, indices};
}
EMBER_REGISTER_KERNEL(op::kthvalue_out, CPU, kthvalue_out_kernel);

std::tuple<Tensor&, Tensor&> median_dim_out_kernel(const Tensor& self, int64_t dim, bool,
                                                   Tensor& values, Tensor& indices) {
  select_rows<kNumericTypes>("median_cpu", self, dim, values, indices, MedianPick{});
  return {values, indices};
}
EMBER_REGISTER_KERNEL(op::median_dim_out, CPU, median_dim_out_kernel);

Tensor median_kernel(const Tensor& self) {
  if (self.numel() == 0) {
    // PyTorch returns NaN for floats and the lowest value for integers.
    Tensor out = empty({}, self.dtype());
    dispatch<kNumericTypes>(self.dtype(), "median_cpu", [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) *out.data_ptr<T>() = std::numeric_limits<T>::lowest();
      else *out.data_ptr<T>() = T(std::numeric_limits<float>::quiet_NaN());
    });
    return out;
  }
  Tensor flat = contiguous(self);
  flat = flat.as_strided_view({flat.numel()}, {1}, flat.storage_offset());
  Tensor values = empty({}, self.dtype()), indices = empty({}, kLong);
  select_rows<kNumericTypes>("median_cpu", flat, 0, values, indices, MedianPick{});
  return values;
}
EMBER_REGISTER_KERNEL(op::median, CPU, median_kernel);

std::tuple<Tensor&, Tensor&> mode_out_kernel(const Tensor& self, int64_t dim, bool, Tensor& values,
                                             Tensor& indices) {
  select_rows<kAllTypes>("mode", self, dim, values, indices, ModePick{});
  return {values, indices};
}
EMBER_REGISTER_KERNEL(op::mode_out, CPU, mode_out_kernel);

// unique over all elements: sort (value, position) pairs, then runs of equal values.
std::tuple<Tensor, Tensor, Tensor> unique_all(const Tensor& self, bool return_inverse,
                                              bool return_counts) {
  Tensor x = contiguous(self);
  int64_t n = x.numel();
  Tensor values, inverse = return_inverse ? empty(self.sizes(), kLong) : Tensor(), counts;
  dispatch<kAllTypes>(self.dtype(), "unique", [&](auto tag) {
    using T = decltype(tag);
    using K = acc_t<T>;
    const T* in = reinterpret_cast<const T*>(x.data_ptr());
    std::vector<Item<K>> items(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) items[size_t(i)] = {K(in[i]), i};
    sort_by_value(items, false);
    std::vector<int64_t> starts;  // first item of each run
    for (int64_t i = 0; i < n; ++i)
      if (i == 0 || items[size_t(i)].first != items[size_t(i - 1)].first) starts.push_back(i);
    int64_t groups = int64_t(starts.size());
    values = empty({groups}, self.dtype());
    T* vo = reinterpret_cast<T*>(values.data_ptr());
    for (int64_t g = 0; g < groups; ++g) vo[g] = T(items[size_t(starts[size_t(g)])].first);
    if (return_counts) {
      counts = empty({groups}, kLong);
      int64_t* co = counts.data_ptr<int64_t>();
      for (int64_t g = 0; g < groups; ++g)
        co[g] = (g + 1 < groups ? starts[size_t(g + 1)] : n) - starts[size_t(g)];
    }
    if (return_inverse) {
      int64_t* iv = inverse.data_ptr<int64_t>();
      int64_t g = -1;
      for (int64_t i = 0; i < n; ++i) {
        if (g + 1 < groups && starts[size_t(g + 1)] == i) ++g;
        iv[items[size_t(i)].second] = g;
      }
    }
  });
  return {values, inverse, counts};
}

// self with dim `from` moved to position `to`: movedim's geometry, as a view.
Tensor moved_dim(const Tensor& self, int64_t from, int64_t to) {
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  std::vector<int64_t> strides(self.strides().begin(), self.strides().end());
  int64_t size = sizes[size_t(from)], stride = strides[size_t(from)];
  sizes.erase(sizes.begin() + from);
  strides.erase(strides.begin() + from);
  sizes.insert(sizes.begin() + to, size);
  strides.insert(strides.begin() + to, stride);
  return self.as_strided_view(sizes, strides, self.storage_offset());
}

// unique slices along `dim`: rows of the input moved to (n, rest) compared lexicographically.
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim, bool return_inverse,
                                              bool return_counts) {
  int64_t n = self.sizes()[size_t(dim)];
  Tensor x = contiguous(moved_dim(self, dim, 0));
  int64_t m = n == 0 ? 0 : x.numel() / n;
  std::vector<int64_t> order(static_cast<size_t>(n)), starts;
  std::iota(order.begin(), order.end(), 0);
  dispatch<kAllTypes>(self.dtype(), "unique_dim", [&](auto tag) {
    using T = decltype(tag);
    using K = acc_t<T>;
    const T* in = reinterpret_cast<const T*>(x.data_ptr());
    auto row_less = [&](int64_t a, int64_t b) {
      for (int64_t j = 0; j < m; ++j) {
        K u = K(in[a * m + j]), v = K(in[b * m + j]);
        if (less(u, v)) return true;
        if (less(v, u)) return false;
      }
      return a < b;
    };
    auto row_equal = [&](int64_t a, int64_t b) {
      for (int64_t j = 0; j < m; ++j)
        if (K(in[a * m + j]) != K(in[b * m + j])) return false;
      return true;
    };
    std::sort(order.begin(), order.end(), row_less);
    for (int64_t i = 0; i < n; ++i)
      if (i == 0 || !row_equal(order[size_t(i)], order[size_t(i - 1)])) starts.push_back(i);
  });
  int64_t groups = int64_t(starts.size());
  Tensor first = empty({groups}, kLong);
  int64_t* fp = first.data_ptr<int64_t>();
  for (int64_t g = 0; g < groups; ++g) fp[g] = order[size_t(starts[size_t(g)])];
  DimVector pick_shape(x.sizes());
  pick_shape[0] = groups;
  Tensor picked = empty(pick_shape, x.dtype());  // the first row of each group, in order
  const size_t row_bytes = size_t(m) * x.element_size();
  for (int64_t g = 0; g < groups; ++g)
    std::memcpy(static_cast<char*>(picked.data_ptr()) + size_t(g) * row_bytes,
                static_cast<const char*>(x.data_ptr()) + size_t(fp[g]) * row_bytes, row_bytes);
  Tensor values = contiguous(moved_dim(picked, 0, dim));
  Tensor inverse, counts;
  if (return_inverse) {
    inverse = empty({n}, kLong);
    int64_t* iv = inverse.data_ptr<int64_t>();
    for (int64_t g = 0, i = 0; i < n; ++i) {
      if (g + 1 < groups && starts[size_t(g + 1)] == i) ++g;
      iv[order[size_t(i)]] = g;
    }
  }
  if (return_counts) {
    counts = empty({groups}, kLong);
    int64_t* co = counts.data_ptr<int64_t>();
    for (int64_t g = 0; g < groups; ++g)
      co[g] = (g + 1 < groups ? starts[size_t(g + 1)] : n) - starts[size_t(g)];
  }
  return {values, inverse, counts};
}

std::tuple<Tensor, Tensor, Tensor> unique_kernel(const Tensor& self, bool sorted,
                                                 bool return_inverse, bool return_counts,
                                                 std::optional<int64_t> dim) {
  if (dim) return unique_dim(self, *dim, return_inverse, return_counts);
  return unique_all(self, return_inverse, return_counts);
}
EMBER_REGISTER_KERNEL(op::unique, CPU, unique_kernel);

Tensor bincount_kernel(const Tensor& self, const std::optional<Tensor>& weights,
                       int64_t minlength) {
  Tensor x = contiguous(self);
  int64_t n = x.numel();
  Tensor out;
  dispatch<kIntTypes>(self.dtype(), "bincount_cpu", [&](auto tag) {
    using T = decltype(tag);
    const T* in = reinterpret_cast<const T*>(x.data_ptr());
    int64_t top = -1;
    for (int64_t i = 0; i < n; ++i) {
      EMBER_CHECK(int64_t(in[i]) >= 0, "bincount only supports 1-d non-negative integral inputs.");
      top = std::max<int64_t>(top, int64_t(in[i]));
    }
    int64_t bins = std::max(top + 1, minlength);
    if (!weights) {
      out = zeros({bins}, kLong);
      int64_t* o = out.data_ptr<int64_t>();
      for (int64_t i = 0; i < n; ++i) ++o[int64_t(in[i])];
      return;
    }
    // Like PyTorch: float32 weights count in float32, any other dtype in float64.
    ScalarType wt = weights->dtype() == kFloat ? kFloat : kDouble;
    Tensor w = contiguous(to_dtype(*weights, wt));
    out = zeros({bins}, wt);
    dispatch<type_bit(kFloat) | type_bit(kDouble)>(wt, "bincount_cpu", [&](auto wtag) {
      using W = decltype(wtag);
      const W* wp = w.data_ptr<W>();
      W* o = out.data_ptr<W>();
      for (int64_t i = 0; i < n; ++i) o[int64_t(in[i])] += wp[i];
    });
  });
  return out;
}
EMBER_REGISTER_KERNEL(op::bincount, CPU, bincount_kernel);

// histc counts fixed chunks into partial histograms, summed in chunk order (deterministic for
// any thread count); chunks grow when many bins would make the partials too large.
constexpr int64_t kHistChunk = 65536;
constexpr int64_t kHistPartialBudget = int64_t(1) << 22;  // bins x chunks

Tensor histc_kernel(const Tensor& self, int64_t bins, double min, double max) {
  Tensor x = contiguous(self);
  Tensor out = zeros({bins}, self.dtype());
  int64_t n = x.numel();
  dispatch<kFloatTypes>(self.dtype(), "histogram_cpu", [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    const T* in = reinterpret_cast<const T*>(x.data_ptr());
    double lo = min, hi = max;
    if (lo == hi && n > 0) {
      // The data's range; a NaN makes it NaN, which the finiteness check below rejects.
      double mn = std::numeric_limits<double>::infinity(), mx = -mn;
      bool nan = false;
      for (int64_t i = 0; i < n; ++i) {
        double v = double(A(in[i]));
        nan = nan || std::isnan(v);
        mn = std::min(mn, v);
        mx = std::max(mx, v);
      }
      lo = nan ? std::numeric_limits<double>::quiet_NaN() : mn;
      hi = nan ? lo : mx;
    }
    if (lo == hi) {
      lo -= 1;
      hi += 1;
    }
    EMBER_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi,
                "] is not finite");
    // Bin edges are in T, like PyTorch's linspace of them; positions follow its formula.
    const A left = A(T(lo)), right = A(T(hi));
    int64_t nchunks = std::min((n + kHistChunk - 1) / kHistChunk,
                               std::max<int64_t>(1, kHistPartialBudget / bins));
    int64_t chunk = nchunks ? (n + nchunks - 1) / nchunks : 0;
    std::vector<std::vector<A>> partial(size_t(nchunks), std::vector<A>(size_t(bins), A(0)));
    parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        std::vector<A>& h = partial[size_t(c)];
        for (int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
          A v = A(in[i]);
          if (!(v >= left && v <= right)) continue;
          int64_t pos = int64_t((v - left) * A(bins) / (right - left));
          if (pos == bins) --pos;
          h[size_t(pos)] += A(1);
        }
      }
    });
    T* o = reinterpret_cast<T*>(out.data_ptr());
    for (int64_t b = 0; b < bins; ++b) {
      A total = 0;
      for (const auto& h : partial) total += h[size_t(b)];
      o[b] = T(total);
    }
  });
  return out;
}
EMBER_REGISTER_KERNEL(op::histc, CPU, histc_kernel);

}  // namespace

}  // namespace ember::cpu
