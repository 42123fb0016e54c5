#pragma once
// Key-value stores for rendezvous (torch's c10d stores): ranks publish their addresses and
// counters here before a process group connects. Note [Stores].
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ember::distributed {

// Note [Stores]
// Every store has torch's operations: set/get/add/wait/check/delete_key/num_keys/compare_set.
// get and wait block until the keys exist or the store's timeout passes, then raise
// RuntimeError naming the keys and the timeout. Values are bytes (std::string here);
// add keeps its counter as the decimal text of the number, as torch's stores do, so
// get(counter) reads "3".

/// The default timeout of a store's get/wait (torch's 300 s).
inline constexpr std::chrono::milliseconds kDefaultStoreTimeout{300000};

/// A rendezvous key-value store (c10d::Store).
class Store {
 public:
  explicit Store(std::chrono::milliseconds timeout = kDefaultStoreTimeout) : timeout_(timeout) {}
  virtual ~Store() = default;
  /// Stores value under key, replacing any previous value.
  virtual void set(const std::string& key, const std::string& value) = 0;
  /// The value of key, waiting up to the timeout for it to be set.
  virtual std::string get(const std::string& key) = 0;
  /// Adds delta to the integer under key (0 when missing) and returns the new value.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  /// Sets key to desired when its value is expected (or when missing and expected is empty);
  /// returns the value after the call.
  virtual std::string compare_set(const std::string& key, const std::string& expected,
                                  const std::string& desired) = 0;
  /// Waits until every key is set; raises RuntimeError after `timeout`.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  /// Waits with the store's own timeout.
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  /// Whether every key is set, without waiting.
  virtual bool check(const std::vector<std::string>& keys) = 0;
  /// Removes key; false when it was not set.
  virtual bool delete_key(const std::string& key) = 0;
  /// How many keys are set.
  virtual int64_t num_keys() = 0;

  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }

 protected:
  std::chrono::milliseconds timeout_;
};

/// A store in this process's memory, shared by the threads that hold it (c10d::HashStore).
class HashStore : public Store {
 public:
  using Store::Store;
  using Store::wait;
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  std::string compare_set(const std::string& key, const std::string& expected,
                          const std::string& desired) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::string> data_;
};

/// A store in a file that processes sharing a file system open together (c10d::FileStore):
/// an append-only log of records under an exclusive flock. The last of num_workers users to
/// close it removes the file (when num_workers is -1, nobody does).
class FileStore : public Store {
 public:
  FileStore(std::string path, int num_workers = -1,
            std::chrono::milliseconds timeout = kDefaultStoreTimeout);
  ~FileStore() override;
  using Store::wait;
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  std::string compare_set(const std::string& key, const std::string& expected,
                          const std::string& desired) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  const std::string& path() const { return path_; }

 private:
  struct Locked;
  // Reads the log into a map under the lock; `append` adds one record (key, value or erased).
  std::map<std::string, std::string> load(int fd);
  void append(int fd, const std::string& key, const std::string* value);
  template <class F>
  auto locked(F&& f);
  // Whether keys all exist before timeout (polls the file).
  bool poll_until(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  std::string path_;
  int num_workers_;
  std::mutex mutex_;
};

/// Every key of `store` seen under "<prefix>/" (c10d::PrefixStore).
class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> store);
  using Store::wait;
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  std::string compare_set(const std::string& key, const std::string& expected,
                          const std::string& desired) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  const std::shared_ptr<Store>& underlying_store() const { return store_; }

 private:
  std::string k(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> ks(const std::vector<std::string>& keys) const;
  std::string prefix_;
  std::shared_ptr<Store> store_;
};

/// The store of a TCP server that one process hosts and every process connects to
/// (c10d::TCPStore). Note [TCPStore protocol] in tcp_store.cpp.
class TCPStore : public Store {
 public:
  struct Options {
    int port = 29500;
    bool is_server = false;
    /// With a server: wait in the constructor until this many clients connected (-1: don't).
    int num_workers = -1;
    bool wait_for_workers = true;
    std::chrono::milliseconds timeout = kDefaultStoreTimeout;
  };
  TCPStore(std::string host, const Options& opts);
  ~TCPStore() override;
  using Store::wait;
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  std::string compare_set(const std::string& key, const std::string& expected,
                          const std::string& desired) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  /// The port the server listens on (the bound one when Options::port was 0).
  int port() const { return port_; }
  const std::string& host() const { return host_; }

 private:
  class Server;
  std::string request(const std::string& msg, std::chrono::milliseconds timeout, const char* what,
                      const std::vector<std::string>& keys);
  void connect_client();
  std::string host_;
  int port_;
  int fd_ = -1;
  std::unique_ptr<Server> server_;
  std::mutex mutex_;
};

}  // namespace ember::distributed
