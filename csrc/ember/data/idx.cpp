#include "ember/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "ember/ops/ops.h"

namespace ember::data {

namespace {

// Decompressed bytes, read in chunks so a lying header cannot make us allocate more than the
// stream holds. gzread passes uncompressed files through unchanged.
std::vector<uint8_t> read_all(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EMBER_CHECK(f, "read_idx: cannot open '", path, "'");
  std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(f, gzclose);
  std::vector<uint8_t> out;
  constexpr size_t kChunk = 1 << 20;
  for (;;) {
    size_t have = out.size();
    out.resize(have + kChunk);
    int n = gzread(f, out.data() + have, unsigned(kChunk));
    if (n < 0) {
      int err = 0;
      EMBER_ERROR(ErrorKind::Runtime, "read_idx: '", path, "' is corrupt: ", gzerror(f, &err));
    }
    out.resize(have + size_t(n));
    if (n == 0) break;
  }
  return out;
}

ScalarType idx_dtype(uint8_t code, const std::string& path) {
  switch (code) {
    case 0x08:
      return kByte;
    case 0x09:
      return kChar;
    case 0x0B:
      return kShort;
    case 0x0C:
      return kInt;
    case 0x0D:
      return kFloat;
    case 0x0E:
      return kDouble;
  }
  EMBER_ERROR(ErrorKind::Runtime, "read_idx: '", path, "' has unknown element type 0x", std::hex,
              int(code));
}

uint32_t be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

}  // namespace

Tensor read_idx(const std::string& path) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(read_all(path));
  const uint8_t* p = bytes->data();
  size_t n = bytes->size();
  EMBER_CHECK(n >= 4 && p[0] == 0 && p[1] == 0, "read_idx: '", path,
              "' is not an IDX file (bad magic number)");
  ScalarType dtype = idx_dtype(p[2], path);
  size_t ndim = p[3];
  EMBER_CHECK(ndim >= 1 && n >= 4 + 4 * ndim, "read_idx: '", path, "' is truncated in its header");
  std::vector<int64_t> sizes(ndim);
  uint64_t numel = 1;
  for (size_t d = 0; d < ndim; ++d) {
    sizes[d] = be32(p + 4 + 4 * d);
    EMBER_CHECK(!__builtin_mul_overflow(numel, uint64_t(sizes[d]), &numel), "read_idx: '", path,
                "' has impossible dims");
  }
  size_t start = 4 + 4 * ndim, esize = element_size(dtype);
  EMBER_CHECK(numel <= (n - start) / esize && (n - start) == numel * esize, "read_idx: '", path,
              "' holds ", n - start, " data bytes but its dims need ", numel * esize,
              " (truncated or corrupt)");
  uint8_t* data = bytes->data() + start;
  for (size_t k = 0; esize > 1 && k < numel; ++k)
    std::reverse(data + k * esize, data + (k + 1) * esize);
  std::vector<int64_t> strides(ndim);
  int64_t s = 1;
  for (size_t d = ndim; d-- > 0;) {
    strides[d] = s;
    s *= sizes[d];
  }
  // The tensor keeps the decoded buffer alive; IDX data is big-endian, swapped in place above.
  if (esize == 1) return from_blob(data, sizes, strides, dtype, [bytes](void*) {});
  return clone(from_blob(data, sizes, strides, dtype, [bytes](void*) {}));
}

std::string find_idx_file(const std::string& root, const std::string& name) {
  namespace fs = std::filesystem;
  for (const char* ext : {"", ".gz"}) {
    fs::path p = fs::path(root) / (name + ext);
    if (fs::is_regular_file(p)) return p.string();
  }
  EMBER_ERROR(
      ErrorKind::Runtime, "FashionMNIST: '", (fs::path(root) / name).string(), "(.gz)' not found; ",
      "install the Debian package dataset-fashion-mnist (apt-get install dataset-fashion-mnist) "
      "or pass the directory holding the IDX files as root");
}

FashionMNIST::FashionMNIST(const std::string& root, bool train) {
  std::string split = train ? "train" : "t10k";
  Tensor raw = read_idx(find_idx_file(root, split + "-images-idx3-ubyte"));
  Tensor lab = read_idx(find_idx_file(root, split + "-labels-idx1-ubyte"));
  EMBER_CHECK(raw.dim() == 3 && raw.size(1) == 28 && raw.size(2) == 28 && raw.dtype() == kByte,
              "FashionMNIST: expected uint8 images of shape (N, 28, 28); got ", raw.dim(), "-d");
  EMBER_CHECK(lab.dim() == 1 && lab.size(0) == raw.size(0) && lab.dtype() == kByte,
              "FashionMNIST: expected one uint8 label per image");
  images = unsqueeze(div(to_dtype(raw, kFloat), scalar_tensor(Scalar(255.0), kFloat)), 1);
  labels = to_dtype(lab, kLong);
}

}  // namespace ember::data
