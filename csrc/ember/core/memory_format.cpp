#include "ember/core/memory_format.h"

#include <numeric>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/shape.h"

namespace ember {

namespace {

// Dims fastest first in each channels-last format.
constexpr int64_t kOrder2d[] = {1, 3, 2, 0};
constexpr int64_t kOrder3d[] = {1, 4, 3, 2, 0};

IntArrayRef order_of(MemoryFormat f) {
  if (f == MemoryFormat::ChannelsLast) return {kOrder2d, 4};
  return {kOrder3d, 5};
}

// Whether the strides order the dims as format `f` does (PyTorch's reading of a layout from its
// strides, for any tensor): each dim in order must step at least as far as the previous dim's
// extent. Ties that size-1 dims allow go to NCHW: a zero channel stride, or a batch dim whose
// stride equals the channels' (an N111 tensor), is not channels-last.
bool ordered_like(IntArrayRef sizes, IntArrayRef strides, MemoryFormat f) {
  if (strides[1] == 0) return false;
  int64_t floor = 0;
  for (int64_t d : order_of(f)) {
    if (sizes[size_t(d)] == 0 || strides[size_t(d)] < floor) return false;
    if (d == 0 && floor == strides[1]) return false;
    floor = strides[size_t(d)];
    if (sizes[size_t(d)] > 1) floor *= sizes[size_t(d)];
  }
  return true;
}

}  // namespace

const char* memory_format_name(MemoryFormat f) {
  switch (f) {
    case MemoryFormat::Contiguous:
      return "contiguous_format";
    case MemoryFormat::ChannelsLast:
      return "channels_last";
    case MemoryFormat::ChannelsLast3d:
      return "channels_last_3d";
    case MemoryFormat::Preserve:
      return "preserve_format";
  }
  return "?";
}

DimVector strides_for(IntArrayRef sizes, MemoryFormat f) {
  switch (f) {
    case MemoryFormat::Contiguous:
      return contiguous_strides(sizes);
    case MemoryFormat::ChannelsLast:
    case MemoryFormat::ChannelsLast3d: {
      const size_t rank = f == MemoryFormat::ChannelsLast ? 4 : 5;
      EMBER_CHECK(sizes.size() == rank, "required rank ", rank, " tensor to use ",
                  memory_format_name(f), " format");
      // As PyTorch: the sizes multiply as they are, so a zero-size dim zeroes the slower strides.
      DimVector strides(rank);
      int64_t step = 1;
      for (int64_t d : order_of(f)) {
        strides[size_t(d)] = step;
        EMBER_CHECK(!__builtin_mul_overflow(step, sizes[size_t(d)], &step),
                    "Stride calculation overflowed with sizes=", sizes);
      }
      return strides;
    }
    case MemoryFormat::Preserve:
      break;
  }
  EMBER_CHECK(false, "unsupported memory format Preserve");
  return {};
}

bool is_contiguous_as(IntArrayRef sizes, IntArrayRef strides, MemoryFormat f) {
  if (f == MemoryFormat::Contiguous || f == MemoryFormat::Preserve) {
    if (numel_of(sizes) == 0) return true;
    int64_t expected = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      if (sizes[d] == 1) continue;
      if (strides[d] != expected) return false;
      expected *= sizes[d];
    }
    return true;
  }
  if (sizes.size() != (f == MemoryFormat::ChannelsLast ? 4u : 5u)) return false;
  int64_t expected = 1;
  for (int64_t d : order_of(f)) {
    if (sizes[size_t(d)] == 1) continue;
    if (strides[size_t(d)] != expected) return false;
    expected *= sizes[size_t(d)];
  }
  return true;
}

bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  if (is_contiguous_as(sizes, strides, MemoryFormat::Contiguous)) return true;
  // Dims of size >= 2 by stride, smallest first; each must step over exactly the ones before.
  std::vector<size_t> dims;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] >= 2) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (size_t d : dims) {
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides) {
  if (sizes.size() == 4 && ordered_like(sizes, strides, MemoryFormat::ChannelsLast))
    return MemoryFormat::ChannelsLast;
  if (sizes.size() == 5 && ordered_like(sizes, strides, MemoryFormat::ChannelsLast3d))
    return MemoryFormat::ChannelsLast3d;
  return MemoryFormat::Contiguous;
}

DimVector dense_strides_like(IntArrayRef sizes, IntArrayRef strides) {
  const size_t n = sizes.size();
  DimVector out(n);
  if (n == 0) return out;
  // Dims fastest first: an insertion sort from the innermost dim, by stride, where a zero stride
  // compares as a tie and equal strides put the smaller dim first (as TensorIter orders them).
  std::vector<size_t> perm(n);
  std::iota(perm.rbegin(), perm.rend(), size_t(0));
  auto order = [&](size_t a, size_t b) {  // > 0: b before a; < 0: a before b; 0: no opinion
    int64_t sa = strides[a], sb = strides[b];
    if (sa == 0 || sb == 0) return 0;
    if (sa != sb) return sa < sb ? -1 : 1;
    return sizes[a] > sizes[b] ? 1 : 0;
  };
  for (size_t i = 1; i < n; ++i) {
    size_t moving = i;
    for (size_t j = i; j-- > 0;) {
      int c = order(perm[j], perm[moving]);
      if (c > 0) {
        std::swap(perm[j], perm[moving]);
        moving = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  int64_t step = 1;
  for (size_t d : perm) {
    out[d] = step;
    if (sizes[d] > 1) step *= sizes[d];
  }
  return out;
}

DimVector preserve_strides(IntArrayRef sizes, IntArrayRef strides) {
  if (is_non_overlapping_and_dense(sizes, strides)) return DimVector(strides);
  return dense_strides_like(sizes, strides);
}

DimVector strides_like(IntArrayRef sizes, IntArrayRef strides, MemoryFormat f) {
  return f == MemoryFormat::Preserve ? preserve_strides(sizes, strides) : strides_for(sizes, f);
}

}  // namespace ember
