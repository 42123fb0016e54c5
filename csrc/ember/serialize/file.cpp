// Checkpoint files: atomic saves (temp file, fsync, rename) and loads by pread or mmap.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ember/serialize/serialize.h"

namespace ember::serialize {

namespace {

std::string errno_text() { return std::strerror(errno); }

class FdSource : public Source {
 public:
  explicit FdSource(int fd) : fd_(fd) {
    struct stat st;
    EMBER_CHECK(fstat(fd, &st) == 0, "ember.load: cannot stat the file: ", errno_text());
    EMBER_CHECK(!S_ISDIR(st.st_mode), "ember.load: expected a file; got a directory");
    size_ = uint64_t(st.st_size);
  }
  uint64_t size() const override { return size_; }
  void read(uint64_t offset, void* dst, size_t nbytes) const override {
    auto* p = static_cast<char*>(dst);
    while (nbytes > 0) {
      ssize_t n = pread(fd_, p, nbytes, off_t(offset));
      if (n < 0 && errno == EINTR) continue;
      EMBER_CHECK(n > 0, "ember.load: file is truncated or unreadable while reading at byte ",
                  offset, n < 0 ? ": " + errno_text() : std::string());
      p += n;
      offset += uint64_t(n);
      nbytes -= size_t(n);
    }
  }

 private:
  int fd_;
  uint64_t size_;
};

class MemorySource : public Source {
 public:
  MemorySource(const void* data, size_t n) : data_(static_cast<const char*>(data)), size_(n) {}
  uint64_t size() const override { return size_; }
  void read(uint64_t offset, void* dst, size_t nbytes) const override {
    if (nbytes) std::memcpy(dst, data_ + offset, nbytes);
  }

 protected:
  const char* data_;
  uint64_t size_;
};

// A private (copy-on-write) mapping: writes to loaded tensors never reach the file. It is
// unmapped when the last tensor viewing it dies.
class MmapSource : public MemorySource {
 public:
  MmapSource(std::shared_ptr<void> map, size_t n)
      : MemorySource(map.get(), n), map_(std::move(map)) {}
  Tensor view(uint64_t offset, IntArrayRef sizes, ScalarType dtype) const override {
    std::vector<int64_t> strides(sizes.size());
    int64_t s = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      strides[d] = s;
      s *= sizes[d];
    }
    auto keep = map_;
    return from_blob(const_cast<char*>(data_) + offset, sizes, strides, dtype, [keep](void*) {});
  }

 private:
  std::shared_ptr<void> map_;
};

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void save_file(const Value& root, const std::string& path) {
  std::string tmpl = path + ".tmpXXXXXX";
  Fd f{mkstemp(tmpl.data())};
  EMBER_CHECK(f.fd >= 0, "ember.save: cannot create a file next to '", path, "': ", errno_text());
  try {
    fchmod(f.fd, 0644);
    write(root, [&](const void* data, size_t n) {
      auto* p = static_cast<const char*>(data);
      while (n > 0) {
        ssize_t k = ::write(f.fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        EMBER_CHECK(k > 0, "ember.save: writing '", path, "' failed: ", errno_text());
        p += k;
        n -= size_t(k);
      }
    });
    EMBER_CHECK(fsync(f.fd) == 0, "ember.save: fsync of '", path, "' failed: ", errno_text());
    EMBER_CHECK(::close(f.fd) == 0, "ember.save: closing '", path, "' failed: ", errno_text());
    f.fd = -1;
    EMBER_CHECK(std::rename(tmpl.c_str(), path.c_str()) == 0, "ember.save: cannot replace '", path,
                "': ", errno_text());
  } catch (...) {
    ::unlink(tmpl.c_str());  // the old checkpoint, if any, is untouched
    throw;
  }
}

Value load_fd(int fd, bool mmap) {
  FdSource file(fd);
  if (!mmap || file.size() == 0) return read(file);
  void* p = ::mmap(nullptr, file.size(), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  EMBER_CHECK(p != MAP_FAILED, "ember.load: mmap failed: ", errno_text());
  size_t n = file.size();
  std::shared_ptr<void> map(p, [n](void* q) { ::munmap(q, n); });
  return read(MmapSource(map, n));
}

Value load_file(const std::string& path, bool mmap) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  EMBER_CHECK(f.fd >= 0, "ember.load: cannot open '", path, "': ", errno_text());
  return load_fd(f.fd, mmap);
}

Value load_bytes(const void* data, size_t nbytes) { return read(MemorySource(data, nbytes)); }

}  // namespace ember::serialize

namespace ember {

void save(const serialize::Value& value, const std::string& path) {
  serialize::save_file(value, path);
}
void save(const std::string& path, const serialize::Value& value) {
  serialize::save_file(value, path);
}
serialize::Value load(const std::string& path) { return serialize::load_file(path); }
void load(Tensor& tensor, const std::string& path) { tensor = load(path).to_tensor(); }
void load(std::map<std::string, Tensor>& tensors, const std::string& path) {
  tensors = load(path).to_tensor_map();
}

}  // namespace ember
