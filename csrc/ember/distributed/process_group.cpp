// ProcessGroupGloo and Work (Note [Process groups] in process_group.h).
#include "ember/distributed/process_group.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>
#include <unistd.h>

#include <cstring>
#include <sstream>
#include <type_traits>

#include "ember/core/dispatch_dtype.h"
#include "ember/core/error.h"

namespace ember::distributed {

using std::chrono::milliseconds;

const char* reduce_op_name(ReduceOp op) {
  static const char* names[] = {"SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"};
  return names[int(op)];
}

// ---- Work ----

bool Work::is_completed() {
  std::lock_guard<std::mutex> g(mutex_);
  return done_;
}

bool Work::is_success() {
  std::lock_guard<std::mutex> g(mutex_);
  return done_ && !error_;
}

std::exception_ptr Work::exception() {
  std::lock_guard<std::mutex> g(mutex_);
  return error_;
}

bool Work::wait(milliseconds timeout) {
  std::unique_lock<std::mutex> g(mutex_);
  if (timeout.count() > 0) {
    if (!cv_.wait_for(g, timeout, [&] { return done_; }))
      EMBER_ERROR(ErrorKind::Runtime, op, ": Work.wait timed out after ", timeout.count(), "ms");
  } else {
    cv_.wait(g, [&] { return done_; });
  }
  if (error_) std::rethrow_exception(error_);
  return true;
}

void Work::add_callback(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> g(mutex_);
    if (!done_) {
      callbacks_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

std::vector<Tensor> Work::result() {
  wait();
  return outputs;
}

void Work::finish(std::exception_ptr error) {
  std::vector<std::function<void()>> cbs;
  {
    std::lock_guard<std::mutex> g(mutex_);
    done_ = true;
    error_ = error;
    cbs.swap(callbacks_);
  }
  cv_.notify_all();
  for (auto& cb : cbs) cb();
}

namespace {

constexpr uint8_t kHeaderSlotPrefix = 0x70;
constexpr uint8_t kP2PSlotPrefix = 0x71;
constexpr uint8_t kMonitorSlotPrefix = 0x72;

// Gloo's errors (a closed connection, a timeout) become RuntimeErrors that name the op.
std::exception_ptr as_error(const char* op) {
  try {
    throw;
  } catch (const Error&) {
    return std::current_exception();
  } catch (const std::exception& e) {
    try {
      EMBER_ERROR(ErrorKind::Runtime, op, ": ", e.what());
    } catch (...) {
      return std::current_exception();
    }
  }
  return std::current_exception();
}

void check_tensor(const char* op, const Tensor& t) {
  EMBER_CHECK(t.defined(), op, ": expected a tensor; got None");
  EMBER_CHECK(t.device().is_cpu(), op, ": expected a CPU tensor; got one on ", t.device().str());
  EMBER_CHECK(t.is_contiguous(), op, ": Tensors must be contiguous");
}

void check_like(const char* op, const Tensor& t, const Tensor& ref, int64_t numel,
                const char* what) {
  check_tensor(op, t);
  EMBER_CHECK(t.dtype() == ref.dtype(), op, ": expected ", what, " of dtype ",
              dtype_name(ref.dtype()), "; got ", dtype_name(t.dtype()));
  EMBER_CHECK(t.numel() == numel, op, ": expected ", what, " of ", numel, " elements; got ",
              t.numel(), " (shape ", t.sizes(), ")");
}

template <class T>
using Acc = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <class T, class F>
void zip(void* c, const void* a, const void* b, size_t n, F f) {
  auto* C = static_cast<T*>(c);
  auto* A = static_cast<const T*>(a);
  auto* B = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) C[i] = T(f(Acc<T>(A[i]), Acc<T>(B[i])));
}

using ReduceFn = std::function<void(void*, const void*, const void*, size_t)>;

// The elementwise reduction Gloo applies; raises for a bitwise op on floats (before any tag is
// taken, so that the ranks stay in step).
ReduceFn reduce_function(ReduceOp op, ScalarType dt, const char* name) {
  bool integral = dt == kBool || (type_bit(dt) & kIntTypes);
  EMBER_CHECK(integral || (op != ReduceOp::BAND && op != ReduceOp::BOR && op != ReduceOp::BXOR),
              name, ": ReduceOp.", reduce_op_name(op), " expected an integer or bool tensor; got ",
              dtype_name(dt));
  EMBER_CHECK(!(op == ReduceOp::AVG && dt == kBool), name,
              ": ReduceOp.AVG expected a numeric tensor; got bool");
  ReduceFn fn;
  dispatch<kAllTypes>(dt, name, [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::AVG:
        fn = [](void* c, const void* a, const void* b, size_t n) {
          zip<T>(c, a, b, n, [](auto x, auto y) { return x + y; });
        };
        break;
      case ReduceOp::PRODUCT:
        fn = [](void* c, const void* a, const void* b, size_t n) {
          zip<T>(c, a, b, n, [](auto x, auto y) { return x * y; });
        };
        break;
      case ReduceOp::MIN:
        fn = [](void* c, const void* a, const void* b, size_t n) {
          zip<T>(c, a, b, n, [](auto x, auto y) { return y < x ? y : x; });
        };
        break;
      case ReduceOp::MAX:
        fn = [](void* c, const void* a, const void* b, size_t n) {
          zip<T>(c, a, b, n, [](auto x, auto y) { return x < y ? y : x; });
        };
        break;
      default:
        if constexpr (std::is_integral_v<T>) {
          if (op == ReduceOp::BAND)
            fn = [](void* c, const void* a, const void* b, size_t n) {
              zip<T>(c, a, b, n, [](auto x, auto y) { return x & y; });
            };
          else if (op == ReduceOp::BOR)
            fn = [](void* c, const void* a, const void* b, size_t n) {
              zip<T>(c, a, b, n, [](auto x, auto y) { return x | y; });
            };
          else
            fn = [](void* c, const void* a, const void* b, size_t n) {
              zip<T>(c, a, b, n, [](auto x, auto y) { return x ^ y; });
            };
        }
    }
  });
  return fn;
}

// AVG: the sum divided by the group size (integers truncate, as integer division does).
void divide(const Tensor& t, int size) {
  dispatch<kNumericTypes>(t.dtype(), "all_reduce", [&](auto tag) {
    using T = decltype(tag);
    auto* p = static_cast<T*>(t.data_ptr());
    for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = T(Acc<T>(p[i]) / Acc<T>(size));
  });
}

// Gloo's typed setters for a tensor's buffer.
template <class Opts>
void set_output(Opts& o, const Tensor& t) {
  dispatch<kAllTypes>(t.dtype(), "distributed", [&](auto tag) {
    using T = decltype(tag);
    o.template setOutput<T>(static_cast<T*>(t.data_ptr()), size_t(t.numel()));
  });
}
template <class Opts>
void set_input(Opts& o, const Tensor& t) {
  dispatch<kAllTypes>(t.dtype(), "distributed", [&](auto tag) {
    using T = decltype(tag);
    o.template setInput<T>(static_cast<T*>(t.data_ptr()), size_t(t.numel()));
  });
}
uint8_t* bytes(const Tensor& t) { return static_cast<uint8_t*>(t.data_ptr()); }

// Gloo's rendezvous reads and writes ember's store.
class GlooStore : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(std::shared_ptr<distributed::Store> s) : s_(std::move(s)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    s_->set(key, std::string(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    std::string v = s_->get(key);
    return {v.begin(), v.end()};
  }
  void wait(const std::vector<std::string>& keys) override { s_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const milliseconds& timeout) override {
    s_->wait(keys, timeout);
  }

 private:
  std::shared_ptr<distributed::Store> s_;
};

// A send or recv: Gloo posts it at once; waiting asks Gloo whether it completed.
class P2PWork : public RecvWork {
 public:
  bool wait(milliseconds timeout) override {
    {
      std::lock_guard<std::mutex> g(p2p_mutex_);
      if (!posted_done_) {
        posted_done_ = true;
        std::exception_ptr err;
        try {
          int r = -1;
          auto t = timeout.count() > 0 ? timeout : group_timeout;
          bool ok = is_send ? buf->waitSend(&r, t) : buf->waitRecv(&r, t);
          if (!ok) EMBER_ERROR(ErrorKind::Runtime, op, ": aborted");
          set_source(r);
        } catch (...) {
          err = as_error(op.c_str());
        }
        finish(err);
      }
    }
    return Work::wait(milliseconds(0));
  }
  void set_source(int r) {
    if (!is_send) source_rank_ = r;
  }
  std::unique_ptr<gloo::transport::UnboundBuffer> buf;
  bool is_send = false;
  milliseconds group_timeout{0};

 private:
  std::mutex p2p_mutex_;
  bool posted_done_ = false;
};

// Header fields (Note [Process groups]): op, dtype, root, reduce op, ndim (-1: shape not
// compared), numel, then up to kDims sizes.
constexpr int kDims = 6;
constexpr int kHeader = 6 + kDims;
enum OpCode : int64_t {
  kAllreduce = 1,
  kReduce,
  kBroadcast,
  kAllgather,
  kGather,
  kScatter,
  kReduceScatter,
  kAlltoall,
  kBarrier
};
const char* op_code_name(int64_t c) {
  static const char* names[] = {"?",          "all_reduce", "reduce",  "broadcast",
                                "all_gather", "gather",     "scatter", "reduce_scatter",
                                "all_to_all", "barrier"};
  return c >= 0 && c <= 9 ? names[c] : "?";
}

std::vector<int64_t> header(OpCode op, const Tensor* t, int root = -1, int reduce_op = -1,
                            bool shape = true) {
  std::vector<int64_t> h(kHeader, 0);
  h[0] = op;
  h[1] = t ? int64_t(t->dtype()) : -1;
  h[2] = root;
  h[3] = reduce_op;
  h[4] = t && shape ? int64_t(t->dim()) : -1;
  h[5] = t && shape ? t->numel() : -1;
  if (t && shape)
    for (int64_t d = 0; d < std::min<int64_t>(t->dim(), kDims); ++d) h[6 + d] = t->size(d);
  return h;
}

std::string describe(const int64_t* h) {
  std::ostringstream os;
  os << op_code_name(h[0]);
  if (h[1] >= 0) os << " of a " << dtype_name(ScalarType(h[1])) << " tensor";
  if (h[4] >= 0) {
    os << " of shape [";
    for (int64_t d = 0; d < h[4]; ++d)
      os << (d ? ", " : "") << (d < kDims ? std::to_string(h[6 + d]) : "...");
    os << "]";
  }
  if (h[2] >= 0) os << " with root " << h[2];
  if (h[3] >= 0) os << " with ReduceOp." << reduce_op_name(ReduceOp(h[3]));
  return os.str();
}

std::string default_hostname() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "127.0.0.1";
  return buf;
}

}  // namespace

// ---- the group ----

struct ProcessGroupGloo::Task {
  std::shared_ptr<Work> work;
  std::function<void()> fn;
};

ProcessGroupGloo::ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size,
                                   Options options)
    : store_(std::move(store)), rank_(rank), size_(size), options_(std::move(options)) {
  EMBER_CHECK_VALUE(size > 0 && rank >= 0 && rank < size,
                    "ProcessGroupGloo: expected 0 <= rank < world_size; got rank ", rank,
                    " and world_size ", size);
  gloo::transport::tcp::attr attr;
  if (!options_.iface.empty()) attr.iface = options_.iface;
  else attr.hostname = options_.hostname.empty() ? default_hostname() : options_.hostname;
  try {
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
    ctx->setTimeout(options_.timeout);
    GlooStore gstore(store_);
    ctx->connectFullMesh(gstore, device);
    context_ = ctx;
    // No rank returns before every rank's pairs are up: one that connected first and left at
    // once (init, then destroy and exit) closed the pairs a slower peer was still completing
    // ("Connection closed by peer"). The last rank to arrive opens the barrier.
    if (store_->add("connected", 1) == size) store_->set("connected/all", "1");
    store_->wait({"connected/all"}, options_.timeout);
  } catch (const std::exception& e) {
    EMBER_ERROR(ErrorKind::Runtime, "ProcessGroupGloo: rank ", rank, " of ", size,
                " could not connect to its peers within ", options_.timeout.count(),
                "ms: ", e.what());
  }
  // Note [Eager collectives]: room for a header and eager_limit_ bytes from every rank.
  eager_limit_ = size <= 8 ? (256 << 10) : (32 << 10);
  eager_send_.resize(size_t(kHeader) * 8 + eager_limit_);
  eager_recv_.resize(size_t(size) * (size_t(kHeader) * 8 + eager_limit_));
  thread_ = std::thread([this] { worker(); });
}

ProcessGroupGloo::~ProcessGroupGloo() {
  {
    std::lock_guard<std::mutex> g(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& t : queue_) {
    try {
      EMBER_ERROR(ErrorKind::Runtime, t->work->op, ": the process group was destroyed");
    } catch (...) {
      t->work->finish(std::current_exception());
    }
  }
}

void ProcessGroupGloo::worker() {
  std::unique_lock<std::mutex> lk(mutex_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || (!queue_.empty() && !busy_); });
    if (stop_) return;
    auto task = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lk.unlock();
    std::exception_ptr err;
    try {
      task->fn();
    } catch (...) {
      err = as_error(task->work->op.c_str());
    }
    task->work->finish(err);
    lk.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

std::shared_ptr<Work> ProcessGroupGloo::run(const char* op, const CollectiveOptions& opts,
                                            std::vector<Tensor> outputs,
                                            std::function<void(uint32_t)> fn) {
  auto work = std::make_shared<Work>();
  work->op = op;
  work->outputs = std::move(outputs);
  std::unique_lock<std::mutex> lk(mutex_);
  uint32_t tag = next_tag_++;
  if (!opts.async_op && queue_.empty() && !busy_) {
    busy_ = true;  // runs here, on the caller's thread
    lk.unlock();
    std::exception_ptr err;
    try {
      fn(tag);
    } catch (...) {
      err = as_error(op);
    }
    lk.lock();
    busy_ = false;
    lk.unlock();
    cv_.notify_all();
    work->finish(err);
    return work;
  }
  queue_.push_back(std::make_unique<Task>(Task{work, [fn = std::move(fn), tag] { fn(tag); }}));
  lk.unlock();
  cv_.notify_all();
  return work;
}

// Note [Eager collectives]
// A small all_reduce, reduce, broadcast or all_gather (up to eager_limit_ bytes per rank) needs no
// Gloo algorithm: its data rides in the header message every rank already sends to every other,
// and each rank combines what it received. One message latency instead of a ring's 2 (n - 1),
// and the headers are compared before any received byte is used. Every rank reduces in rank
// order, so all of them get the same bits. Receive buffers have room for a header and
// eager_limit_ bytes from each peer whatever the collective, so a peer that sends more (its
// tensor is bigger) still lands in the buffer and is caught by the header comparison.

const char* ProcessGroupGloo::payload_of(int r) const {
  size_t slot = size_t(kHeader) * 8 + eager_limit_;
  if (r == rank_) return eager_send_.data() + kHeader * 8;
  return eager_recv_.data() + size_t(r) * slot + kHeader * 8;
}

bool ProcessGroupGloo::check_header(uint32_t tag, const char* op, const std::vector<int64_t>& mine,
                                    milliseconds timeout, const void* payload, size_t nbytes) {
  if ((!options_.check_collectives && nbytes == 0) || size_ == 1) return false;
  EMBER_ASSERT(nbytes <= eager_limit_);
  const size_t hb = size_t(kHeader) * 8, slot_bytes = hb + eager_limit_;
  std::memcpy(eager_send_.data(), mine.data(), hb);
  if (nbytes) std::memcpy(eager_send_.data() + hb, payload, nbytes);
  auto slot = gloo::Slot::build(kHeaderSlotPrefix, tag);
  auto sbuf = context_->createUnboundBuffer(eager_send_.data(), hb + nbytes);
  auto rbuf = context_->createUnboundBuffer(eager_recv_.data(), eager_recv_.size());
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    rbuf->recv(r, slot, size_t(r) * slot_bytes, slot_bytes);
    sbuf->send(r, slot);
  }
  for (int r = 0; r < size_ - 1; ++r) rbuf->waitRecv(timeout);
  for (int r = 0; r < size_ - 1; ++r) sbuf->waitSend(timeout);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    int64_t h[kHeader];
    std::memcpy(h, eager_recv_.data() + size_t(r) * slot_bytes, hb);
    bool same = h[0] == mine[0] && h[1] == mine[1] && h[2] == mine[2] && h[3] == mine[3];
    if (same && h[4] >= 0 && mine[4] >= 0) same = std::equal(h + 4, h + kHeader, mine.begin() + 4);
    if (!same)
      EMBER_ERROR(ErrorKind::Runtime, op, ": the ranks disagree on collective #", tag, ": rank ",
                  rank_, " called ", describe(mine.data()), ", rank ", r, " called ", describe(h),
                  " (every rank must call the same collectives in the same order, with the "
                  "same shapes and dtypes)");
  }
  return true;
}

std::shared_ptr<Work> ProcessGroupGloo::allreduce(Tensor t, const AllreduceOptions& o) {
  check_tensor("all_reduce", t);
  auto fn = reduce_function(o.reduce_op, t.dtype(), "all_reduce");
  auto timeout = timeout_of(o);
  return run("all_reduce", o, {t}, [=, this](uint32_t tag) {
    size_t nb = t.nbytes();
    bool small = eager(nb);
    check_header(tag, "all_reduce", header(kAllreduce, &t, -1, int(o.reduce_op)), timeout,
                 t.data_ptr(), small ? nb : 0);
    if (t.numel() == 0) return;
    if (small) {  // every rank's data arrived with its header: reduce in rank order
      size_t n = size_t(t.numel());
      fn(t.data_ptr(), payload_of(0), payload_of(1), n);
      for (int r = 2; r < size_; ++r) fn(t.data_ptr(), t.data_ptr(), payload_of(r), n);
    } else if (size_ > 1) {
      gloo::AllreduceOptions g(context_);
      set_output(g, t);
      g.setReduceFunction(fn);
      g.setTag(tag);
      g.setTimeout(timeout);
      gloo::allreduce(g);
    }
    if (o.reduce_op == ReduceOp::AVG) divide(t, size_);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::reduce(Tensor t, const ReduceOptions& o) {
  check_tensor("reduce", t);
  EMBER_CHECK_VALUE(o.root_rank >= 0 && o.root_rank < size_, "reduce: expected 0 <= dst < ", size_,
                    "; got ", o.root_rank);
  auto fn = reduce_function(o.reduce_op, t.dtype(), "reduce");
  auto timeout = timeout_of(o);
  return run("reduce", o, {t}, [=, this](uint32_t tag) {
    size_t nb = t.nbytes();
    bool small = eager(nb);
    check_header(tag, "reduce", header(kReduce, &t, o.root_rank, int(o.reduce_op)), timeout,
                 t.data_ptr(), small ? nb : 0);
    if (t.numel() == 0) return;
    if (small) {
      if (rank_ == o.root_rank) {
        size_t n = size_t(t.numel());
        fn(t.data_ptr(), payload_of(0), payload_of(1), n);
        for (int r = 2; r < size_; ++r) fn(t.data_ptr(), t.data_ptr(), payload_of(r), n);
      }
    } else if (size_ > 1) {
      gloo::ReduceOptions g(context_);
      set_output(g, t);
      g.setRoot(o.root_rank);
      g.setReduceFunction(fn);
      g.setTag(tag);
      g.setTimeout(timeout);
      gloo::reduce(g);
    }
    if (o.reduce_op == ReduceOp::AVG && rank_ == o.root_rank) divide(t, size_);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::broadcast(Tensor t, const BroadcastOptions& o) {
  check_tensor("broadcast", t);
  EMBER_CHECK_VALUE(o.root_rank >= 0 && o.root_rank < size_, "broadcast: expected 0 <= src < ",
                    size_, "; got ", o.root_rank);
  auto timeout = timeout_of(o);
  return run("broadcast", o, {t}, [=, this](uint32_t tag) {
    size_t nb = t.nbytes();
    bool small = eager(nb);
    bool root = rank_ == o.root_rank;
    check_header(tag, "broadcast", header(kBroadcast, &t, o.root_rank), timeout, t.data_ptr(),
                 small && root ? nb : 0);
    if (t.numel() == 0 || size_ == 1) return;
    if (small) {
      if (!root) std::memcpy(t.data_ptr(), payload_of(o.root_rank), nb);
      return;
    }
    gloo::BroadcastOptions g(context_);
    if (rank_ == o.root_rank) set_input(g, t);
    set_output(g, t);
    g.setRoot(o.root_rank);
    g.setTag(tag);
    g.setTimeout(timeout);
    gloo::broadcast(g);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::allgather_into_tensor(Tensor output, Tensor input,
                                                              const AllgatherOptions& o) {
  check_tensor("all_gather_into_tensor", input);
  check_like("all_gather_into_tensor", output, input, input.numel() * size_, "an output");
  auto timeout = timeout_of(o);
  return run("all_gather_into_tensor", o, {output}, [=, this](uint32_t tag) {
    size_t nb = input.nbytes();
    bool small = eager(nb);
    check_header(tag, "all_gather_into_tensor", header(kAllgather, &input), timeout,
                 input.data_ptr(), small ? nb : 0);
    if (nb == 0) return;
    if (small) {
      for (int r = 0; r < size_; ++r)
        std::memcpy(bytes(output) + size_t(r) * nb, payload_of(r), nb);
      return;
    }
    if (size_ == 1) {
      std::memcpy(bytes(output), bytes(input), nb);
      return;
    }
    gloo::AllgatherOptions g(context_);
    g.setInput<uint8_t>(bytes(input), nb);
    g.setOutput<uint8_t>(bytes(output), nb * size_t(size_));
    g.setTag(tag);
    g.setTimeout(timeout);
    gloo::allgather(g);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::allgather(std::vector<Tensor> outputs, Tensor input,
                                                  const AllgatherOptions& o) {
  check_tensor("all_gather", input);
  EMBER_CHECK_VALUE(int(outputs.size()) == size_, "all_gather: expected a list of ", size_,
                    " output tensors (the world size); got ", outputs.size());
  for (auto& t : outputs) check_like("all_gather", t, input, input.numel(), "every output");
  Tensor flat = empty({input.numel() * size_}, input.dtype());
  auto work = allgather_into_tensor(flat, input, o);
  // Copies the gathered rows out once the gather finished (on the thread that finished it).
  auto copy_out = [flat, outputs, nb = input.nbytes()] {
    for (size_t r = 0; r < outputs.size(); ++r)
      if (nb) std::memcpy(bytes(outputs[r]), bytes(flat) + r * nb, nb);
  };
  auto result = std::make_shared<Work>();
  result->op = "all_gather";
  result->outputs = outputs;
  work->add_callback([work, result, copy_out] {
    auto err = work->exception();
    if (!err) copy_out();
    result->finish(err);
  });
  return result;
}

std::shared_ptr<Work> ProcessGroupGloo::gather(std::vector<Tensor> outputs, Tensor input,
                                               const GatherOptions& o) {
  check_tensor("gather", input);
  EMBER_CHECK_VALUE(o.root_rank >= 0 && o.root_rank < size_, "gather: expected 0 <= dst < ", size_,
                    "; got ", o.root_rank);
  if (rank_ == o.root_rank) {
    EMBER_CHECK_VALUE(int(outputs.size()) == size_, "gather: expected a gather_list of ", size_,
                      " tensors on the destination rank; got ", outputs.size());
    for (auto& t : outputs) check_like("gather", t, input, input.numel(), "every output");
  } else {
    EMBER_CHECK_VALUE(outputs.empty(),
                      "gather: Argument ``gather_list`` must NOT be specified on non-destination "
                      "ranks.");
  }
  auto timeout = timeout_of(o);
  return run("gather", o, outputs, [=, this](uint32_t tag) {
    check_header(tag, "gather", header(kGather, &input, o.root_rank), timeout);
    size_t nb = input.nbytes();
    if (nb == 0) return;
    Tensor flat;
    gloo::GatherOptions g(context_);
    g.setInput<uint8_t>(bytes(input), nb);
    if (rank_ == o.root_rank) {
      flat = empty({int64_t(nb) * size_}, kByte);
      g.setOutput<uint8_t>(bytes(flat), nb * size_t(size_));
    }
    g.setRoot(o.root_rank);
    g.setTag(tag);
    g.setTimeout(timeout);
    gloo::gather(g);
    if (rank_ == o.root_rank)
      for (size_t r = 0; r < outputs.size(); ++r)
        std::memcpy(bytes(outputs[r]), bytes(flat) + r * nb, nb);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::scatter(Tensor output, std::vector<Tensor> inputs,
                                                const ScatterOptions& o) {
  check_tensor("scatter", output);
  EMBER_CHECK_VALUE(o.root_rank >= 0 && o.root_rank < size_, "scatter: expected 0 <= src < ", size_,
                    "; got ", o.root_rank);
  if (rank_ == o.root_rank) {
    EMBER_CHECK_VALUE(int(inputs.size()) == size_, "scatter: expected a scatter_list of ", size_,
                      " tensors on the source rank; got ", inputs.size());
    for (auto& t : inputs) check_like("scatter", t, output, output.numel(), "every input");
  } else {
    EMBER_CHECK_VALUE(inputs.empty(),
                      "scatter: Argument ``scatter_list`` must NOT be specified on non-source "
                      "ranks.");
  }
  auto timeout = timeout_of(o);
  return run("scatter", o, {output}, [=, this](uint32_t tag) {
    check_header(tag, "scatter", header(kScatter, &output, o.root_rank), timeout);
    size_t nb = output.nbytes();
    if (nb == 0) return;
    gloo::ScatterOptions g(context_);
    if (rank_ == o.root_rank) {
      std::vector<uint8_t*> ptrs;
      for (auto& t : inputs) ptrs.push_back(bytes(t));
      g.setInputs<uint8_t>(ptrs, nb);
    }
    g.setOutput<uint8_t>(bytes(output), nb);
    g.setRoot(o.root_rank);
    g.setTag(tag);
    g.setTimeout(timeout);
    gloo::scatter(g);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::reduce_scatter_tensor(Tensor output, Tensor input,
                                                              const ReduceScatterOptions& o) {
  check_tensor("reduce_scatter_tensor", output);
  check_like("reduce_scatter_tensor", input, output, output.numel() * size_, "an input");
  auto fn = reduce_function(o.reduce_op, output.dtype(), "reduce_scatter_tensor");
  auto timeout = timeout_of(o);
  return run("reduce_scatter_tensor", o, {output}, [=, this](uint32_t tag) {
    check_header(tag, "reduce_scatter_tensor", header(kReduceScatter, &input, -1, int(o.reduce_op)),
                 timeout);
    size_t nb = output.nbytes();
    if (nb == 0) return;
    if (size_ == 1) {
      std::memcpy(bytes(output), bytes(input), nb);
    } else {
      // Each rank receives every rank's copy of its own chunk and reduces only those: (n-1)/n of
      // the input crosses the wire, half of what an all-reduce of the whole input would move.
      Tensor chunks = empty({input.numel()}, input.dtype());
      gloo::AlltoallOptions g(context_);
      g.setInput<uint8_t>(bytes(input), input.nbytes());
      g.setOutput<uint8_t>(bytes(chunks), chunks.nbytes());
      g.setTag(tag);
      g.setTimeout(timeout);
      gloo::alltoall(g);
      std::memcpy(bytes(output), bytes(chunks), nb);
      for (int r = 1; r < size_; ++r)
        fn(bytes(output), bytes(output), bytes(chunks) + size_t(r) * nb, size_t(output.numel()));
    }
    if (o.reduce_op == ReduceOp::AVG) divide(output, size_);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::reduce_scatter(Tensor output, std::vector<Tensor> inputs,
                                                       const ReduceScatterOptions& o) {
  check_tensor("reduce_scatter", output);
  EMBER_CHECK_VALUE(int(inputs.size()) == size_, "reduce_scatter: expected a list of ", size_,
                    " input tensors (the world size); got ", inputs.size());
  for (auto& t : inputs) check_like("reduce_scatter", t, output, output.numel(), "every input");
  Tensor flat = empty({output.numel() * size_}, output.dtype());
  size_t nb = output.nbytes();
  for (size_t r = 0; r < inputs.size(); ++r)
    if (nb) std::memcpy(bytes(flat) + r * nb, bytes(inputs[r]), nb);
  auto work = reduce_scatter_tensor(output, flat, o);
  work->op = "reduce_scatter";
  return work;
}

std::shared_ptr<Work> ProcessGroupGloo::alltoall_base(Tensor output, Tensor input,
                                                      std::vector<int64_t> out_splits,
                                                      std::vector<int64_t> in_splits,
                                                      const AllToAllOptions& o) {
  check_tensor("all_to_all_single", input);
  check_tensor("all_to_all_single", output);
  EMBER_CHECK(output.dtype() == input.dtype(), "all_to_all_single: expected the output's dtype ",
              dtype_name(input.dtype()), "; got ", dtype_name(output.dtype()));
  auto row_bytes = [](const Tensor& t) {
    return t.dim() == 0 || t.size(0) == 0 ? int64_t(t.element_size())
                                          : int64_t(t.nbytes()) / t.size(0);
  };
  bool even = out_splits.empty() && in_splits.empty();
  auto counts = [&](const Tensor& t, const std::vector<int64_t>& splits, const char* what) {
    std::vector<int64_t> c;
    if (splits.empty()) {
      EMBER_CHECK_VALUE(t.numel() % size_ == 0, "all_to_all_single: expected the ", what,
                        "'s elements to split evenly over ", size_, " ranks; got ", t.numel());
      c.assign(size_t(size_), int64_t(t.nbytes()) / size_);
      return c;
    }
    EMBER_CHECK_VALUE(int(splits.size()) == size_, "all_to_all_single: expected ", size_, " ", what,
                      " split sizes; got ", splits.size());
    int64_t total = 0;
    for (auto s : splits) total += s;
    EMBER_CHECK_VALUE(t.dim() > 0 && total == t.size(0), "all_to_all_single: the ", what,
                      " split sizes sum to ", total, "; expected the size of dim 0 (",
                      t.dim() ? t.size(0) : 0, ")");
    for (auto s : splits) c.push_back(s * row_bytes(t));
    return c;
  };
  auto in_counts = counts(input, in_splits, "input");
  auto out_counts = counts(output, out_splits, "output");
  auto timeout = timeout_of(o);
  return run("all_to_all_single", o, {output}, [=, this](uint32_t tag) {
    check_header(tag, "all_to_all_single", header(kAlltoall, &input, -1, -1, even), timeout);
    if (size_ == 1) {
      if (input.nbytes()) std::memcpy(bytes(output), bytes(input), input.nbytes());
      return;
    }
    if (even) {
      if (input.nbytes() == 0) return;
      gloo::AlltoallOptions g(context_);
      g.setInput<uint8_t>(bytes(input), input.nbytes());
      g.setOutput<uint8_t>(bytes(output), output.nbytes());
      g.setTag(tag);
      g.setTimeout(timeout);
      gloo::alltoall(g);
      return;
    }
    gloo::AlltoallvOptions g(context_);
    g.setInput<uint8_t>(bytes(input), in_counts);
    g.setOutput<uint8_t>(bytes(output), out_counts);
    g.setTag(tag);
    g.setTimeout(timeout);
    gloo::alltoallv(g);
  });
}

std::shared_ptr<Work> ProcessGroupGloo::alltoall(std::vector<Tensor> outputs,
                                                 std::vector<Tensor> inputs,
                                                 const AllToAllOptions& o) {
  EMBER_CHECK_VALUE(int(inputs.size()) == size_ && int(outputs.size()) == size_,
                    "all_to_all: expected lists of ", size_, " tensors (the world size); got ",
                    outputs.size(), " outputs and ", inputs.size(), " inputs");
  for (auto& t : inputs) check_tensor("all_to_all", t);
  for (auto& t : outputs) check_tensor("all_to_all", t);
  ScalarType dt = inputs[0].dtype();
  std::vector<int64_t> in_rows, out_rows;
  int64_t in_n = 0, out_n = 0;
  for (int r = 0; r < size_; ++r) {
    EMBER_CHECK(inputs[r].dtype() == dt && outputs[r].dtype() == dt,
                "all_to_all: expected every tensor of dtype ", dtype_name(dt));
    in_rows.push_back(inputs[r].numel());
    out_rows.push_back(outputs[r].numel());
    in_n += inputs[r].numel();
    out_n += outputs[r].numel();
  }
  Tensor in = empty({in_n}, dt), out = empty({out_n}, dt);
  size_t off = 0;
  for (auto& t : inputs) {
    if (t.nbytes()) std::memcpy(bytes(in) + off, bytes(t), t.nbytes());
    off += t.nbytes();
  }
  auto work = alltoall_base(out, in, out_rows, in_rows, o);
  auto result = std::make_shared<Work>();
  result->op = "all_to_all";
  result->outputs = outputs;
  work->add_callback([work, result, out, outputs] {
    auto err = work->exception();
    if (!err) {
      size_t p = 0;
      for (auto& t : outputs) {
        if (t.nbytes()) std::memcpy(bytes(t), bytes(out) + p, t.nbytes());
        p += t.nbytes();
      }
    }
    result->finish(err);
  });
  return result;
}

std::shared_ptr<Work> ProcessGroupGloo::barrier(const BarrierOptions& o) {
  auto timeout = timeout_of(o);
  return run("barrier", o, {}, [=, this](uint32_t tag) {
    // Every rank waits for every other's header: that exchange is itself the barrier.
    if (check_header(tag, "barrier", header(kBarrier, nullptr), timeout) || size_ == 1) return;
    gloo::BarrierOptions g(context_);
    g.setTag(tag);
    g.setTimeout(timeout);
    gloo::barrier(g);
  });
}

void ProcessGroupGloo::monitored_barrier(milliseconds timeout, bool wait_all_ranks) {
  if (timeout.count() <= 0) timeout = options_.timeout;
  CollectiveOptions o;
  auto work = run("monitored_barrier", o, {}, [=, this](uint32_t tag) {
    if (size_ == 1) return;
    auto slot = gloo::Slot::build(kMonitorSlotPrefix, tag);
    char token = 1;
    std::vector<char> tokens(size_t(size_), 0);
    if (rank_ != 0) {
      auto s = context_->createUnboundBuffer(&token, 1);
      auto r = context_->createUnboundBuffer(&tokens[0], 1);
      r->recv(0, uint64_t(slot) + 1);
      s->send(0, slot);
      s->waitSend(timeout);
      try {
        r->waitRecv(timeout);
      } catch (const std::exception& e) {
        EMBER_ERROR(ErrorKind::Runtime, "[Rank ", rank_,
                    "]: monitored_barrier: rank 0 did not release the barrier within ",
                    timeout.count(), " ms (another rank failed to reach it): ", e.what());
      }
      return;
    }
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> bufs;
    for (int r = 1; r < size_; ++r) {
      bufs.push_back(context_->createUnboundBuffer(&tokens[size_t(r)], 1));
      bufs.back()->recv(r, slot);
    }
    std::vector<int> failed;
    for (int r = 1; r < size_; ++r) {
      auto left =
          std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
      bool ok = false;
      try {
        ok = left.count() > 0 && bufs[size_t(r - 1)]->waitRecv(left);
      } catch (const std::exception&) {
        ok = false;
      }
      if (!ok) {
        bufs[size_t(r - 1)]->abortWaitRecv();
        failed.push_back(r);
        if (!wait_all_ranks) break;
      }
    }
    if (!failed.empty()) {
      std::ostringstream os;
      os << "[Rank 0]: " << (failed.size() > 1 ? "Ranks " : "Rank ");
      for (size_t i = 0; i < failed.size(); ++i) os << (i ? ", " : "") << failed[i];
      os << " failed to pass monitoredBarrier in " << timeout.count() << " ms";
      EMBER_ERROR(ErrorKind::Runtime, os.str());
    }
    auto s = context_->createUnboundBuffer(&token, 1);
    for (int r = 1; r < size_; ++r) s->send(r, uint64_t(slot) + 1);
    for (int r = 1; r < size_; ++r) s->waitSend(timeout);
  });
  work->wait();
}

std::shared_ptr<Work> ProcessGroupGloo::send(Tensor t, int dst, int tag) {
  check_tensor("send", t);
  EMBER_CHECK_VALUE(dst >= 0 && dst < size_ && dst != rank_, "send: expected a destination rank",
                    " other than this one (", rank_, ") in [0, ", size_, "); got ", dst);
  auto w = std::make_shared<P2PWork>();
  w->op = "send";
  w->outputs = {t};
  w->is_send = true;
  w->group_timeout = options_.timeout;
  w->buf = context_->createUnboundBuffer(t.data_ptr(), t.nbytes());
  w->buf->send(dst, gloo::Slot::build(kP2PSlotPrefix, uint32_t(tag)));
  return w;
}

std::shared_ptr<Work> ProcessGroupGloo::recv(Tensor t, int src, int tag) {
  check_tensor("recv", t);
  EMBER_CHECK_VALUE(src == -1 || (src >= 0 && src < size_ && src != rank_),
                    "recv: expected a source rank other than this one (", rank_, ") in [0, ", size_,
                    "); got ", src);
  auto w = std::make_shared<P2PWork>();
  w->op = "recv";
  w->outputs = {t};
  w->group_timeout = options_.timeout;
  w->buf = context_->createUnboundBuffer(t.data_ptr(), t.nbytes());
  auto slot = gloo::Slot::build(kP2PSlotPrefix, uint32_t(tag));
  if (src >= 0) {
    w->buf->recv(src, slot);
  } else {
    std::vector<int> srcs;
    for (int r = 0; r < size_; ++r)
      if (r != rank_) srcs.push_back(r);
    w->buf->recv(srcs, slot);
  }
  return w;
}

}  // namespace ember::distributed
