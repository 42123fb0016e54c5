// CPU kernels of the joining and reordering ops: cat, flip, roll, the repeat_interleave index,
// and the take/place pair along a dim that the sort family's derivatives use.
#include <cstring>

#include "ember/core/memory_format.h"
#include "ember/core/parallel.h"
#include "ember/core/shape.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/copy.h"
#include "ember/schema/shape.h"

namespace ember::cpu {

namespace {

// dst <- src (same shape) through the CPU copy kernel: strides and dtype conversion handled there.
void copy_into(Tensor dst, const Tensor& src) { op::copy_.redispatch(DispatchKey::CPU, dst, src); }

// A narrow view without autograd (kernels never record).
Tensor narrow_view(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  DimVector sizes(t.sizes());
  sizes[size_t(dim)] = length;
  return t.as_strided_view(sizes, t.strides(),
                           t.storage_offset() + start * t.strides()[size_t(dim)]);
}

bool skipped_in_cat(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

// ember::cat validated shapes and wrapped `dim` against the first tensor that is not skipped;
// its meta step (ops/shape_ops.cpp) allocated `out` in the promoted dtype and the inputs' format.
Tensor& cat_out_kernel(TensorList tensors, int64_t dim, Tensor& out) {
  const ScalarType dtype = out.dtype();
  const Tensor* first = nullptr;
  int64_t total = 0;
  for (const Tensor& t : tensors) {
    if (skipped_in_cat(t)) continue;
    if (!first) first = &t;
    total += t.sizes()[size_t(dim)];
  }
  if (!first) return out;
  DimVector shape(first->sizes());
  shape[size_t(dim)] = total;
  if (out.numel() == 0) return out;
  bool fast = out.is_contiguous();
  for (const Tensor& t : tensors)
    fast = fast && (skipped_in_cat(t) || (t.dtype() == dtype && t.is_contiguous()));
  if (!fast) {
    int64_t offset = 0;
    for (const Tensor& t : tensors) {
      if (skipped_in_cat(t)) continue;
      int64_t n = t.sizes()[size_t(dim)];
      if (t.numel() > 0) copy_into(narrow_view(out, dim, offset, n), t);
      offset += n;
    }
    return out;
  }
  // Contiguous inputs of the output dtype: each outer row of the output is the inputs' rows
  // back to back, so whole rows go by memcpy.
  Rows r = rows_of(shape, dim);
  const int64_t es = int64_t(element_size(dtype));
  const int64_t out_row = total * r.inner * es;
  char* o = static_cast<char*>(out.data_ptr());
  int64_t grain = std::max<int64_t>(1, kGrainSize * 8 / std::max<int64_t>(out_row, 1));
  parallel_for(0, r.outer, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      char* dst = o + i * out_row;
      for (const Tensor& t : tensors) {
        if (skipped_in_cat(t)) continue;
        int64_t bytes = t.sizes()[size_t(dim)] * r.inner * es;
        if (bytes)
          std::memcpy(dst, static_cast<const char*>(t.data_ptr()) + i * bytes, size_t(bytes));
        dst += bytes;
      }
    }
  });
  return out;
}
EMBER_REGISTER_KERNEL(op::cat_out, CPU, cat_out_kernel);

// flip copies from a view that walks the flipped dims backwards (negative strides), so the copy
// kernel's strided loops do the work. `dims` are wrapped and distinct.
Tensor flip_kernel(const Tensor& self, IntArrayRef dims) {
  Tensor out = empty(self.sizes(), self.dtype());
  if (self.numel() == 0) return out;
  DimVector strides(self.strides());
  int64_t offset = self.storage_offset();
  for (int64_t d : dims) {
    offset += (self.sizes()[size_t(d)] - 1) * strides[size_t(d)];
    strides[size_t(d)] = -strides[size_t(d)];
  }
  copy_into(out, self.as_strided_view(self.sizes(), strides, offset));
  return out;
}
EMBER_REGISTER_KERNEL(op::flip, CPU, flip_kernel);

// roll along k dims moves 2^k blocks: in each dim, [0, n - s) goes to [s, n) and the rest wraps.
// `dims` are wrapped; `shifts` are normalized to [0, size).
Tensor roll_kernel(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  Tensor out = empty(self.sizes(), self.dtype());
  if (self.numel() == 0) return out;
  size_t k = dims.size();
  for (uint64_t block = 0; block < (uint64_t(1) << k); ++block) {
    Tensor src = self, dst = out;
    bool empty_block = false;
    for (size_t i = 0; i < k; ++i) {
      int64_t d = dims[i], n = self.sizes()[size_t(d)], s = shifts[i];
      bool wrapped = block >> i & 1;
      int64_t len = wrapped ? s : n - s;
      if (len == 0) empty_block = true;
      src = narrow_view(src, d, wrapped ? n - s : 0, len);
      dst = narrow_view(dst, d, wrapped ? 0 : s, len);
    }
    if (!empty_block) copy_into(dst, src);
  }
  return out;
}
EMBER_REGISTER_KERNEL(op::roll, CPU, roll_kernel);

// torch.repeat_interleave(repeats): i repeated repeats[i] times (repeats is 1-d, validated).
Tensor repeat_interleave_index_kernel(const Tensor& repeats) {
  Tensor out;
  dispatch<type_bit(kInt) | type_bit(kLong)>(
      repeats.dtype(), "repeat_interleave_cpu", [&](auto tag) {
        using T = decltype(tag);
        Tensor r = contiguous(repeats);
        const T* p = r.data_ptr<T>();
        int64_t n = r.numel(), total = 0;
        for (int64_t i = 0; i < n; ++i) {
          EMBER_CHECK(p[i] >= 0, "repeats can not be negative");
          total += int64_t(p[i]);
        }
        out = empty({total}, kLong);
        int64_t* o = out.data_ptr<int64_t>();
        for (int64_t i = 0; i < n; ++i)
          for (T j = 0; j < p[i]; ++j) *o++ = i;
      });
  return out;
}
EMBER_REGISTER_KERNEL(op::repeat_interleave, CPU, repeat_interleave_index_kernel);

// Index bounds are user-visible only through repeat_interleave; elsewhere they come from kernels.
void check_index(int64_t i, int64_t size) {
  EMBER_CHECK_INDEX(i >= 0 && i < size, "index ", i, " is out of bounds for dimension with size ",
                    size);
}

// out[o, j, i] = self[o, index[o, j, i], i]. `index` has self's sizes except in `dim`.
Tensor take_along_dim_kernel(const Tensor& self_in, int64_t dim, const Tensor& index_in) {
  Tensor self = contiguous(self_in), index = contiguous(index_in);
  Tensor out = empty(index.sizes(), self.dtype());
  Rows rs = rows_of(self.sizes(), dim), ri = rows_of(index.sizes(), dim);
  const int64_t* idx = index.data_ptr<int64_t>();
  dispatch<kAllTypes>(self.dtype(), "take_along_dim", [&](auto tag) {
    using T = decltype(tag);
    const T* x = reinterpret_cast<const T*>(self.data_ptr());
    T* o = reinterpret_cast<T*>(out.data_ptr());
    int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(ri.size * ri.inner, 1));
    parallel_for(0, ri.outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t a = b; a < e; ++a)
        for (int64_t j = 0; j < ri.size; ++j) {
          int64_t base = (a * ri.size + j) * ri.inner;
          for (int64_t i = 0; i < ri.inner; ++i) {
            int64_t k = idx[base + i];
            check_index(k, rs.size);
            o[base + i] = x[(a * rs.size + k) * rs.inner + i];
          }
        }
    });
  });
  return out;
}
EMBER_REGISTER_KERNEL(op::_take_along_dim, CPU, take_along_dim_kernel);

// out = zeros with `size` in `dim`; out[o, index[o, j, i], i] += src[o, j, i].
Tensor place_along_dim_kernel(const Tensor& src_in, int64_t dim, const Tensor& index_in,
                              int64_t size) {
  Tensor src = contiguous(src_in), index = contiguous(index_in);
  DimVector shape(src.sizes());
  if (!shape.empty()) shape[size_t(dim)] = size;
  Tensor out = zeros(shape, src.dtype());
  Rows ri = rows_of(src.sizes(), dim);
  const int64_t* idx = index.data_ptr<int64_t>();
  dispatch<kNumericTypes>(src.dtype(), "place_along_dim", [&](auto tag) {
    using T = decltype(tag);
    const T* s = reinterpret_cast<const T*>(src.data_ptr());
    T* o = reinterpret_cast<T*>(out.data_ptr());
    // Rows of different `a` write disjoint parts of out, so they may run in parallel.
    int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(ri.size * ri.inner, 1));
    parallel_for(0, ri.outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t a = b; a < e; ++a)
        for (int64_t j = 0; j < ri.size; ++j) {
          int64_t base = (a * ri.size + j) * ri.inner;
          for (int64_t i = 0; i < ri.inner; ++i) {
            int64_t k = idx[base + i];
            check_index(k, size);
            T& dst = o[(a * size + k) * ri.inner + i];
            dst = T(acc_t<T>(dst) + acc_t<T>(s[base + i]));
          }
        }
    });
  });
  return out;
}
EMBER_REGISTER_KERNEL(op::_place_along_dim, CPU, place_along_dim_kernel);

}  // namespace

}  // namespace ember::cpu
