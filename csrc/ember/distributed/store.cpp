// HashStore, FileStore and PrefixStore (Note [Stores] in store.h).
#include "ember/distributed/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "ember/core/error.h"
#include "ember/distributed/dist_error.h"

namespace ember::distributed {

namespace {
int64_t add_to(std::map<std::string, std::string>& data, const std::string& key, int64_t delta) {
  auto it = data.find(key);
  int64_t v = 0;
  if (it != data.end()) {
    try {
      v = std::stoll(it->second);
    } catch (const std::exception&) {
      EMBER_ERROR(ErrorKind::Runtime, "Store.add: expected the value of key '", key,
                  "' to be an integer; got '", it->second, "'");
    }
  }
  v += delta;
  data[key] = std::to_string(v);
  return v;
}

std::string compare_set_in(std::map<std::string, std::string>& data, const std::string& key,
                           const std::string& expected, const std::string& desired) {
  auto it = data.find(key);
  if (it == data.end()) {
    if (expected.empty()) {
      data[key] = desired;
      return desired;
    }
    return expected;  // torch returns expected_value when the key is missing
  }
  if (it->second == expected) it->second = desired;
  return it->second;
}

bool all_in(const std::map<std::string, std::string>& data, const std::vector<std::string>& keys) {
  for (auto& k : keys)
    if (!data.count(k)) return false;
  return true;
}
}  // namespace

// ---- HashStore ----

void HashStore::set(const std::string& key, const std::string& value) {
  {
    std::lock_guard<std::mutex> g(mutex_);
    data_[key] = value;
  }
  cv_.notify_all();
}

std::string HashStore::get(const std::string& key) {
  wait({key}, timeout_);
  std::lock_guard<std::mutex> g(mutex_);
  return data_.at(key);
}

int64_t HashStore::add(const std::string& key, int64_t delta) {
  int64_t v;
  {
    std::lock_guard<std::mutex> g(mutex_);
    v = add_to(data_, key, delta);
  }
  cv_.notify_all();
  return v;
}

std::string HashStore::compare_set(const std::string& key, const std::string& expected,
                                   const std::string& desired) {
  std::string v;
  {
    std::lock_guard<std::mutex> g(mutex_);
    v = compare_set_in(data_, key, expected, desired);
  }
  cv_.notify_all();
  return v;
}

void HashStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> g(mutex_);
  // torch's c10d::HashStore text
  if (!cv_.wait_for(g, timeout, [&] { return all_in(data_, keys); }))
    EMBER_DIST_ERROR(Store, "Wait timeout");
}

bool HashStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> g(mutex_);
  return all_in(data_, keys);
}

bool HashStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> g(mutex_);
  return data_.erase(key) > 0;
}

int64_t HashStore::num_keys() {
  // keys holding \x01 are ember's own (a queue's counters and items, under a PrefixStore's prefix
  // too), not counted, as torch keeps its queues apart from the keys
  std::lock_guard<std::mutex> g(mutex_);
  int64_t n = 0;
  for (auto& kv : data_) n += kv.first.find('\x01') == std::string::npos;
  return n;
}

// ---- FileStore ----
// Record: u32 key length, key, u8 (1 set / 0 erased), u32 value length, value.

namespace {
constexpr const char* kUsersKey =
    "\x01"
    "ember_filestore_users";

void write_all(int fd, const std::string& s, const std::string& path) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    EMBER_CHECK(n > 0, "FileStore: cannot write ", path, ": ", std::strerror(errno));
    off += size_t(n);
  }
}
}  // namespace

FileStore::FileStore(std::string path, int num_workers, std::chrono::milliseconds timeout)
    : Store(timeout), path_(std::move(path)), num_workers_(num_workers) {
  add(kUsersKey, 1);
}

FileStore::~FileStore() {
  try {
    int64_t left = add(kUsersKey, -1);
    if (num_workers_ >= 0 && left <= 0) ::unlink(path_.c_str());
  } catch (...) {}
}

template <class F>
auto FileStore::locked(F&& f) {
  std::lock_guard<std::mutex> g(mutex_);
  int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  EMBER_CHECK(fd >= 0, "FileStore: cannot open ", path_, ": ", std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() {
      ::flock(fd, LOCK_UN);
      ::close(fd);
    }
  } closer{fd};
  while (::flock(fd, LOCK_EX) != 0) {
    EMBER_CHECK(errno == EINTR, "FileStore: cannot lock ", path_, ": ", std::strerror(errno));
  }
  auto data = load(fd);
  return f(fd, data);
}

std::map<std::string, std::string> FileStore::load(int fd) {
  std::string buf;
  char chunk[65536];
  ::lseek(fd, 0, SEEK_SET);
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    EMBER_CHECK(n >= 0, "FileStore: cannot read ", path_, ": ", std::strerror(errno));
    if (n == 0) break;
    buf.append(chunk, size_t(n));
  }
  std::map<std::string, std::string> data;
  size_t p = 0;
  auto u32 = [&](uint32_t& v) {
    if (p + 4 > buf.size()) return false;
    std::memcpy(&v, buf.data() + p, 4);
    p += 4;
    return true;
  };
  while (p < buf.size()) {
    uint32_t kl, vl;
    if (!u32(kl) || p + kl + 1 > buf.size()) break;
    std::string key = buf.substr(p, kl);
    p += kl;
    bool is_set = buf[p++] != 0;
    if (!u32(vl) || p + vl > buf.size()) break;
    if (is_set) data[key] = buf.substr(p, vl);
    else data.erase(key);
    p += vl;
  }
  return data;
}

void FileStore::append(int fd, const std::string& key, const std::string* value) {
  std::string rec;
  uint32_t kl = uint32_t(key.size()), vl = value ? uint32_t(value->size()) : 0;
  rec.append(reinterpret_cast<const char*>(&kl), 4).append(key);
  rec.push_back(value ? 1 : 0);
  rec.append(reinterpret_cast<const char*>(&vl), 4);
  if (value) rec.append(*value);
  ::lseek(fd, 0, SEEK_END);
  write_all(fd, rec, path_);
}

void FileStore::set(const std::string& key, const std::string& value) {
  locked([&](int fd, auto&) {
    append(fd, key, &value);
    return 0;
  });
}

std::string FileStore::get(const std::string& key) {
  // torch's c10d::FileStore raises these as plain RuntimeErrors, not DistStoreErrors
  if (!poll_until({key}, timeout_))
    EMBER_ERROR(ErrorKind::Runtime, "Timeout waiting for key: ", key, " after ", timeout_.count(),
                " ms");
  return locked([&](int, auto& data) { return data.at(key); });
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  return locked([&](int fd, auto& data) {
    int64_t v = add_to(data, key, delta);
    append(fd, key, &data[key]);
    return v;
  });
}

std::string FileStore::compare_set(const std::string& key, const std::string& expected,
                                   const std::string& desired) {
  return locked([&](int fd, auto& data) {
    bool had = data.count(key) > 0;
    std::string before = had ? data[key] : std::string();
    std::string v = compare_set_in(data, key, expected, desired);
    if (data.count(key) && (!had || data[key] != before)) append(fd, key, &data[key]);
    return v;
  });
}

bool FileStore::poll_until(const std::vector<std::string>& keys,
                           std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (auto pause = std::chrono::milliseconds(1);;
       pause = std::min(pause * 2, decltype(pause)(50))) {
    if (check(keys)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
  }
}

void FileStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  if (!poll_until(keys, timeout)) EMBER_ERROR(ErrorKind::Runtime, "Wait timeout");
}

bool FileStore::check(const std::vector<std::string>& keys) {
  return locked([&](int, auto& data) { return all_in(data, keys); });
}

bool FileStore::delete_key(const std::string& key) {
  return locked([&](int fd, auto& data) {
    if (!data.count(key)) return false;
    append(fd, key, nullptr);
    return true;
  });
}

int64_t FileStore::num_keys() {
  // the users' count is a key, as torch's "cleanup/" count of the stores on the file is one
  return locked([&](int, auto& data) { return int64_t(data.size()); });
}

// ---- PrefixStore ----

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> store)
    : Store(store->timeout()), prefix_(std::move(prefix)), store_(std::move(store)) {}

std::vector<std::string> PrefixStore::ks(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (auto& key : keys) out.push_back(k(key));
  return out;
}

void PrefixStore::set(const std::string& key, const std::string& value) {
  store_->set(k(key), value);
}
std::string PrefixStore::get(const std::string& key) {
  // with this store's timeout (set_timeout on a PrefixStore bounds its gets, as torch's)
  store_->wait({k(key)}, timeout_);
  return store_->get(k(key));
}
int64_t PrefixStore::add(const std::string& key, int64_t delta) {
  return store_->add(k(key), delta);
}
std::string PrefixStore::compare_set(const std::string& key, const std::string& expected,
                                     const std::string& desired) {
  return store_->compare_set(k(key), expected, desired);
}
void PrefixStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  store_->wait(ks(keys), timeout);
}
bool PrefixStore::check(const std::vector<std::string>& keys) { return store_->check(ks(keys)); }
bool PrefixStore::delete_key(const std::string& key) { return store_->delete_key(k(key)); }
int64_t PrefixStore::num_keys() { return store_->num_keys(); }

}  // namespace ember::distributed
