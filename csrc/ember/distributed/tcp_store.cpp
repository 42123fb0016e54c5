// TCPStore: a key-value server on one process's thread, and the clients every process holds.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <list>
#include <sstream>
#include <thread>

#include "ember/core/error.h"
#include "ember/distributed/dist_error.h"
#include "ember/distributed/store.h"

namespace ember::distributed {

// Note [TCPStore protocol]
// A message is a u32 byte count and a payload; a request's payload starts with a command byte,
// then its arguments: strings as a u32 length and bytes, integers as 8 raw bytes (every peer is
// the same program on the same architecture). The server answers every request on the same
// connection in order; GET and WAIT answer only once their keys exist, so the server keeps them
// as waiters and retries them after each write. A client whose wait times out reconnects, so that
// the late answer to the abandoned request is never read as the answer to the next one.

namespace {
using namespace std::chrono;
enum Cmd : uint8_t { SET = 1, GET, ADD, CHECK, WAIT, DELETE_KEY, NUM_KEYS, COMPARE_SET };
constexpr const char* kInitKey =
    "\x01"
    "ember_tcpstore_init";
// torch's own key, "init/", which every store that waits for workers increments: num_keys
// counts it as torch's does (user keys live under "/" there, so it never meets one of theirs).
constexpr const char* kTorchInitKey =
    "\x01"
    "init/";

void put_u32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put_i64(std::string& s, int64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
void put_str(std::string& s, const std::string& v) {
  put_u32(s, uint32_t(v.size()));
  s.append(v);
}

struct Reader {
  const std::string& s;
  size_t p = 0;
  uint32_t u32() {
    uint32_t v;
    std::memcpy(&v, s.data() + p, 4);
    p += 4;
    return v;
  }
  int64_t i64() {
    int64_t v;
    std::memcpy(&v, s.data() + p, 8);
    p += 8;
    return v;
  }
  std::string str() {
    uint32_t n = u32();
    std::string v = s.substr(p, n);
    p += n;
    return v;
  }
  std::vector<std::string> strs() {
    uint32_t n = u32();
    std::vector<std::string> v;
    for (uint32_t i = 0; i < n; ++i) v.push_back(str());
    return v;
  }
};

std::string framed(const std::string& payload) {
  std::string s;
  put_u32(s, uint32_t(payload.size()));
  return s + payload;
}

bool send_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += size_t(n);
  }
  return true;
}

// Reads exactly n bytes before `deadline`; 0 on success, ETIMEDOUT or an errno (ECONNRESET for a
// closed connection) otherwise.
int recv_all(int fd, char* buf, size_t n, steady_clock::time_point deadline) {
  size_t off = 0;
  while (off < n) {
    auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
    if (left <= 0) return ETIMEDOUT;
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, int(std::min<int64_t>(left, 1 << 30)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno;
    if (r == 0) return ETIMEDOUT;
    ssize_t got = ::recv(fd, buf + off, n - off, 0);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return got == 0 ? ECONNRESET : errno;
    off += size_t(got);
  }
  return 0;
}
// Connects fd without blocking past `deadline` (an unreachable host would otherwise hold
// connect() for minutes); 0 or an errno.
int connect_before(int fd, const addrinfo* a, steady_clock::time_point deadline) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int e = 0;
  if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
    e = errno;
    if (e == EINPROGRESS) {
      auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
      pollfd p{fd, POLLOUT, 0};
      int r = ::poll(&p, 1, int(std::max<int64_t>(left, 0)));
      if (r <= 0) {
        e = r == 0 ? ETIMEDOUT : errno;
      } else {
        socklen_t len = sizeof e;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len);
      }
    }
  }
  ::fcntl(fd, F_SETFL, flags);
  return e;
}

// torch's c10d::TCPStore text, the keys as it stores them (under "/")
[[noreturn]] void wait_timeout(milliseconds timeout, const std::vector<std::string>& keys) {
  std::ostringstream os;
  os << "wait timeout after " << timeout.count() << "ms, keys: ";
  for (size_t i = 0; i < keys.size(); ++i) os << (i ? ", /" : "/") << keys[i];
  EMBER_DIST_ERROR(Store, os.str());
}
}  // namespace

// ---- the server ----

class TCPStore::Server {
 public:
  explicit Server(int port) {
    listen_fd_ = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool v6 = listen_fd_ >= 0;
    if (!v6) listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EMBER_CHECK(listen_fd_ >= 0,
                "TCPStore: cannot create the server socket: ", std::strerror(errno));
    int one = 1, zero = 0;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (v6) {
      ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // v4 too
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      a.sin6_port = htons(uint16_t(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      a.sin_port = htons(uint16_t(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    if (rc != 0 || ::listen(listen_fd_, 1024) != 0) {
      int e = errno;
      ::close(listen_fd_);
      EMBER_DIST_ERROR(Network,
                       "The server socket has failed to listen on any local network address. "
                       "port: ",
                       port, ", message: ", std::strerror(e));
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                        : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    EMBER_CHECK(::pipe2(wake_, O_CLOEXEC) == 0, "TCPStore: pipe: ", std::strerror(errno));
    thread_ = std::thread([this] { loop(); });
  }

  ~Server() {
    char c = 0;
    (void)!::write(wake_[1], &c, 1);
    thread_.join();
    for (auto& c : clients_) ::close(c.fd);
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

  int port() const { return port_; }

 private:
  struct Client {
    int fd;
    std::string in;
    // Requests waiting for keys, answered in order (a connection has at most one in flight).
    std::list<std::string> pending;
  };

  void loop() {
    for (;;) {
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      for (auto& c : clients_) fds.push_back({c.fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[1].revents) return;
      if (fds[0].revents & POLLIN) {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          clients_.push_back({fd, {}, {}});
        }
      }
      size_t i = 2;
      bool wrote = false;
      for (auto it = clients_.begin(); it != clients_.end(); ++i) {
        if (i >= fds.size() || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
          ++it;
          continue;
        }
        char buf[65536];
        ssize_t n = ::recv(it->fd, buf, sizeof buf, 0);
        if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN))) {
          ::close(it->fd);
          it = clients_.erase(it);
          continue;
        }
        if (n > 0) it->in.append(buf, size_t(n));
        while (it->in.size() >= 4) {
          uint32_t len;
          std::memcpy(&len, it->in.data(), 4);
          if (it->in.size() < 4 + size_t(len)) break;
          std::string msg = it->in.substr(4, len);
          it->in.erase(0, 4 + size_t(len));
          if (!it->pending.empty()) it->pending.push_back(std::move(msg));
          else wrote |= handle(*it, msg);
        }
        ++it;
      }
      // A write may release waiters of any connection.
      while (wrote) {
        wrote = false;
        for (auto& c : clients_) {
          while (!c.pending.empty()) {
            std::string msg = c.pending.front();
            c.pending.pop_front();
            size_t before = c.pending.size();
            wrote |= handle(c, msg);
            if (c.pending.size() > before) {  // still waiting: put it back at the front
              c.pending.splice(c.pending.begin(), c.pending, std::prev(c.pending.end()));
              break;
            }
          }
        }
      }
    }
  }

  bool has(const std::vector<std::string>& keys) const {
    for (auto& k : keys)
      if (!data_.count(k)) return false;
    return true;
  }

  // Answers one request; a GET/WAIT whose keys are missing goes (back) on c.pending. Returns
  // whether the store changed.
  bool handle(Client& c, const std::string& msg) {
    Reader r{msg, 1};
    std::string out;
    bool changed = false;
    switch (Cmd(msg[0])) {
      case SET: {
        std::string k = r.str();
        data_[k] = r.str();
        return true;  // no answer: a set needs no round trip
      }
      case GET: {
        std::string k = r.str();
        auto it = data_.find(k);
        if (it == data_.end()) {
          c.pending.push_back(msg);
          return false;
        }
        put_str(out, it->second);
        break;
      }
      case ADD: {
        std::string k = r.str();
        int64_t d = r.i64();
        int64_t v = 0;
        auto it = data_.find(k);
        if (it != data_.end()) v = std::strtoll(it->second.c_str(), nullptr, 10);
        v += d;
        data_[k] = std::to_string(v);
        put_i64(out, v);
        changed = true;
        break;
      }
      case CHECK:
        out.push_back(has(r.strs()) ? 1 : 0);
        break;
      case WAIT:
        if (!has(r.strs())) {
          c.pending.push_back(msg);
          return false;
        }
        out.push_back(1);
        break;
      case DELETE_KEY:
        out.push_back(data_.erase(r.str()) ? 1 : 0);
        break;
      case NUM_KEYS: {
        int64_t n = 0;
        for (auto& kv : data_)
          n += kv.first.find('\x01') == std::string::npos;  // (ember's own keys)
        n += data_.count(kTorchInitKey);
        put_i64(out, n);
        break;
      }
      case COMPARE_SET: {
        std::string k = r.str(), expected = r.str(), desired = r.str();
        auto it = data_.find(k);
        if (it == data_.end()) {
          if (expected.empty()) {
            data_[k] = desired;
            changed = true;
          }
          put_str(out, expected.empty() ? desired : expected);
        } else {
          if (it->second == expected) {
            it->second = desired;
            changed = true;
          }
          put_str(out, it->second);
        }
        break;
      }
      default:
        return false;
    }
    send_all(c.fd, framed(out));
    return changed;
  }

  int listen_fd_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::list<Client> clients_;
  std::map<std::string, std::string> data_;
  std::thread thread_;
};

// ---- the client ----

TCPStore::TCPStore(std::string host, const Options& opts)
    : Store(opts.timeout), host_(std::move(host)), port_(opts.port) {
  if (opts.is_server) {
    server_ = std::make_unique<Server>(opts.port);
    port_ = server_->port();
  }
  connect_client();
  add(kInitKey, 1);
  if (opts.wait_for_workers && opts.num_workers > 0) add(kTorchInitKey, 1);
  if (opts.is_server && opts.wait_for_workers && opts.num_workers > 0) {
    auto deadline = steady_clock::now() + timeout_;
    while (add(kInitKey, 0) < opts.num_workers) {
      if (steady_clock::now() >= deadline)
        EMBER_DIST_ERROR(Store, "Timed out after ", timeout_.count(), "ms waiting for clients. ",
                         add(kInitKey, 0), "/", opts.num_workers, " clients joined (TCPStore port ",
                         port_, ").");
      std::this_thread::sleep_for(milliseconds(5));
    }
  }
}

TCPStore::~TCPStore() {
  if (fd_ >= 0) ::close(fd_);
}

void TCPStore::connect_client() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  auto deadline = steady_clock::now() + timeout_;
  std::string last = "no address";
  for (auto pause = milliseconds(1);; pause = std::min(pause * 2, milliseconds(200))) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int g = ::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &res);
    if (g != 0) {
      last = ::gai_strerror(g);
    } else {
      for (addrinfo* a = res; a && fd_ < 0; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        int e = connect_before(fd, a, deadline);
        if (e == 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          fd_ = fd;
        } else {
          last = std::strerror(e);
          ::close(fd);
        }
      }
      ::freeaddrinfo(res);
    }
    if (fd_ >= 0) return;
    if (steady_clock::now() + pause >= deadline)
      EMBER_DIST_ERROR(Network, "The client socket has timed out after ", timeout_.count(),
                       "ms while trying to connect to (", host_, ", ", port_, "). (", last, ")");
    std::this_thread::sleep_for(pause);
  }
}

std::string TCPStore::request(const std::string& msg, milliseconds timeout, const char* what,
                              const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> g(mutex_);
  if (!send_all(fd_, framed(msg)))
    EMBER_DIST_ERROR(Network, std::strerror(errno), " (TCPStore.", what, " to (", host_, ", ",
                     port_, ")). Did the remote server shutdown or crash?");
  if (Cmd(msg[0]) == SET) return {};
  auto deadline = steady_clock::now() + timeout;
  uint32_t len;
  int e = recv_all(fd_, reinterpret_cast<char*>(&len), 4, deadline);
  std::string out;
  if (e == 0) {
    out.resize(len);
    e = recv_all(fd_, out.data(), len, deadline);
  }
  if (e == ETIMEDOUT) {
    connect_client();  // drop the answer still owed to this request (Note [TCPStore protocol])
    Cmd cmd = Cmd(msg[0]);
    if (cmd != GET && cmd != WAIT)  // answered at once by a live server
      EMBER_DIST_ERROR(Network, "The TCPStore server at (", host_, ", ", port_, ") did not answer ",
                       what, " within ", timeout.count(), "ms");
    wait_timeout(timeout, keys);
  }
  if (e != 0)
    EMBER_DIST_ERROR(Network, "Failed to recv, got 0 bytes. Connection was likely closed. Did the ",
                     "remote server shutdown or crash? (TCPStore.", what, " to (", host_, ", ",
                     port_, "): ", std::strerror(e), ")");
  return out;
}

void TCPStore::set(const std::string& key, const std::string& value) {
  std::string m(1, char(SET));
  put_str(m, key);
  put_str(m, value);
  request(m, timeout_, "set", {key});
}

std::string TCPStore::get(const std::string& key) {
  std::string m(1, char(GET));
  put_str(m, key);
  std::string out = request(m, timeout_, "get", {key});
  Reader r{out};
  return r.str();
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  std::string m(1, char(ADD));
  put_str(m, key);
  put_i64(m, delta);
  std::string out = request(m, timeout_, "add", {key});
  Reader r{out};
  return r.i64();
}

std::string TCPStore::compare_set(const std::string& key, const std::string& expected,
                                  const std::string& desired) {
  std::string m(1, char(COMPARE_SET));
  put_str(m, key);
  put_str(m, expected);
  put_str(m, desired);
  std::string out = request(m, timeout_, "compare_set", {key});
  Reader r{out};
  return r.str();
}

namespace {
std::string keys_msg(Cmd cmd, const std::vector<std::string>& keys) {
  std::string m(1, char(cmd));
  put_u32(m, uint32_t(keys.size()));
  for (auto& k : keys) put_str(m, k);
  return m;
}
}  // namespace

void TCPStore::wait(const std::vector<std::string>& keys, milliseconds timeout) {
  request(keys_msg(WAIT, keys), timeout, "wait", keys);
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  return request(keys_msg(CHECK, keys), timeout_, "check", keys)[0] != 0;
}

bool TCPStore::delete_key(const std::string& key) {
  std::string m(1, char(DELETE_KEY));
  put_str(m, key);
  return request(m, timeout_, "delete_key", {key})[0] != 0;
}

int64_t TCPStore::num_keys() {
  std::string out = request(std::string(1, char(NUM_KEYS)), timeout_, "num_keys", {});
  Reader r{out};
  return r.i64();
}

}  // namespace ember::distributed
