#pragma once
// Memory formats: the dim orders a dense tensor may be laid out in, and the stride rules that
// name them. See Note [Memory formats].
//
// Note [Memory formats]
// A tensor's layout is its strides; a memory format is only a name for one family of them.
// Contiguous is row-major (N, C, H, W); ChannelsLast orders a 4-d tensor's dims (C, W, H, N)
// fastest first (NHWC in memory), ChannelsLast3d a 5-d tensor's (C, W, H, D, N). Preserve asks
// an op to keep its input's layout. As in PyTorch:
// - `is_contiguous_as(ChannelsLast)` checks the NHWC strides, skipping size-1 dims (which may
//   have any stride), so a (N, 1, H, W) or (N, C, 1, 1) tensor can be both contiguous and
//   channels-last contiguous; an empty tensor is checked like any other.
// - `suggest_memory_format` reads the format back from strides of any tensor (not only a dense
//   one), with PyTorch's tie-breaks for ambiguous size-1 dims: NCHW wins a tie.
// - preserve_format keeps the exact strides of a dense, non-overlapping input and otherwise
//   packs the input's dim order densely (`preserve_strides`); a size-1 dim's stride is kept only
//   in the first case.
#include <cstdint>
#include <optional>

#include "ember/core/array_ref.h"

namespace ember {

enum class MemoryFormat : int8_t {
  Contiguous = 0,
  ChannelsLast = 1,
  ChannelsLast3d = 2,
  Preserve = 3
};

/// PyTorch's name of a format ("contiguous_format", "channels_last", ...).
const char* memory_format_name(MemoryFormat f);

/// The strides of a fresh tensor of `sizes` in format `f` (not Preserve); ChannelsLast needs 4
/// dims and ChannelsLast3d 5, else RuntimeError with PyTorch's wording.
DimVector strides_for(IntArrayRef sizes, MemoryFormat f);

/// Whether (sizes, strides) is laid out densely in format `f` (Preserve: as Contiguous).
bool is_contiguous_as(IntArrayRef sizes, IntArrayRef strides, MemoryFormat f);

/// Whether the elements tile one block of memory exactly, in some dim order.
bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides);

/// The format whose dim order these strides follow (Contiguous when neither channels-last one).
MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides);

/// Dense strides that keep the dim order of (sizes, strides), as PyTorch infers them for a copy
/// of a strided tensor with gaps or overlaps (zero strides keep their dims in place).
DimVector dense_strides_like(IntArrayRef sizes, IntArrayRef strides);

/// The strides that preserve_format gives a copy of (sizes, strides): the same strides for a
/// dense non-overlapping layout, else `dense_strides_like`.
DimVector preserve_strides(IntArrayRef sizes, IntArrayRef strides);

/// Strides for format `f` of a copy of (sizes, strides): `preserve_strides` for Preserve.
DimVector strides_like(IntArrayRef sizes, IntArrayRef strides, MemoryFormat f);

}  // namespace ember
