#pragma once
// Checkpoints: ember::save / ember::load (libtorch's torch::save / torch::load) over a documented,
// data-only format (docs/FORMAT.md): loading never runs code and validates every byte it trusts.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "ember/serialize/value.h"

namespace ember {

namespace serialize {

/// Receives the checkpoint bytes in order (a file, a Python file object, a buffer).
using Sink = std::function<void(const void* data, size_t nbytes)>;

/// Random-access bytes a checkpoint is read from.
class Source {
 public:
  virtual ~Source() = default;
  virtual uint64_t size() const = 0;
  /// Copies [offset, offset + nbytes) into `dst`; the reader has checked the range.
  virtual void read(uint64_t offset, void* dst, size_t nbytes) const = 0;
  /// A zero-copy tensor over [offset, ...) when the source is memory-mapped, else undefined.
  virtual Tensor view(uint64_t offset, IntArrayRef sizes, ScalarType dtype) const { return {}; }
};

/// Writes `root` in ember's checkpoint format.
void write(const Value& root, const Sink& sink);
/// Reads a checkpoint of any supported format (ember's; others raise a clear error).
Value read(const Source& source);

/// Saves to `path` atomically: a temporary file in the same directory, fsync, then rename.
void save_file(const Value& root, const std::string& path);
/// Loads from an open file descriptor; `mmap` makes tensors views of a private file mapping.
Value load_fd(int fd, bool mmap = false);
/// Loads from a path (see load_fd).
Value load_file(const std::string& path, bool mmap = false);
/// Loads from bytes in memory; tensors are fresh copies.
Value load_bytes(const void* data, size_t nbytes);

}  // namespace serialize

/// Saves a checkpoint tree (a tensor, a map of tensors, or any Value) to `path`.
void save(const serialize::Value& value, const std::string& path);
/// The same with the path first.
void save(const std::string& path, const serialize::Value& value);
/// Loads a checkpoint tree from `path`.
serialize::Value load(const std::string& path);
/// Loads a checkpoint holding one tensor into `tensor`.
void load(Tensor& tensor, const std::string& path);
/// Loads a checkpoint holding a dict of tensors into `tensors`.
void load(std::map<std::string, Tensor>& tensors, const std::string& path);

}  // namespace ember
