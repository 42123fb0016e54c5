#pragma once
// ProcessGroupGloo: collectives and point-to-point messages between processes over Gloo
// (c10d::ProcessGroupGloo). Note [Process groups].
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/distributed/store.h"

namespace gloo {
class Context;
}

namespace ember::distributed {

// Note [Process groups]
// A group is `size` processes that each hold one ProcessGroupGloo with their own rank. They
// meet through a Store (every rank publishes its Gloo address there, then connects to every
// other), and from then on every rank must call the same collectives in the same order: each
// call takes the next tag, so the nth call of every rank pairs up with the nth of the others.
// Before a collective moves data, the ranks swap a small header (the op, dtype, shape and root;
// Options::check_collectives), so that ranks which disagree raise RuntimeError naming both
// sides rather than exchange bytes of another layout or wait for the timeout. Every call returns
// a Work. An async call (async_op) runs on the group's worker thread, in call order, so that the
// caller (Python, the autograd engine) goes on while the data moves; a synchronous call runs on
// the caller's thread when nothing is queued before it. A peer that died makes Gloo's
// connections fail at once, and every wait is bounded by the group's timeout, so a collective
// never hangs: it raises RuntimeError.

/// The reductions of all_reduce, reduce and reduce_scatter (c10d::ReduceOp).
enum class ReduceOp : uint8_t { SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR };

/// The torch name of op ("SUM" ...).
const char* reduce_op_name(ReduceOp op);

/// The handle of one call: wait for it, ask whether it finished, read its error (c10d::Work).
class Work {
 public:
  virtual ~Work() = default;
  /// Whether the call finished (successfully or not).
  virtual bool is_completed();
  /// Whether it finished without an error.
  bool is_success();
  /// The call's error, or nullptr.
  std::exception_ptr exception();
  /// Blocks until the call finished and rethrows its error; `timeout` (when positive) bounds the
  /// wait and raises RuntimeError when it passes.
  virtual bool wait(std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  /// Runs fn once the call finished (at once if it did), on the thread that finishes it.
  void add_callback(std::function<void()> fn);
  /// The tensors the call wrote (torch's Work.result()).
  std::vector<Tensor> result();
  /// Marks the call finished, with an error or not, and runs the callbacks.
  void finish(std::exception_ptr error = nullptr);
  /// The op's name ("all_reduce" ...), for messages.
  std::string op;
  std::vector<Tensor> outputs;

 protected:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
  std::vector<std::function<void()>> callbacks_;
};

/// What every call takes: whether it runs asynchronously, and its own timeout (0: the group's).
struct CollectiveOptions {
  bool async_op = false;
  std::chrono::milliseconds timeout{0};
};
struct AllreduceOptions : CollectiveOptions {
  ReduceOp reduce_op = ReduceOp::SUM;
};
struct ReduceOptions : CollectiveOptions {
  ReduceOp reduce_op = ReduceOp::SUM;
  int root_rank = 0;
};
struct BroadcastOptions : CollectiveOptions {
  int root_rank = 0;
};
struct GatherOptions : CollectiveOptions {
  int root_rank = 0;
};
using ScatterOptions = GatherOptions;
struct ReduceScatterOptions : CollectiveOptions {
  ReduceOp reduce_op = ReduceOp::SUM;
};
using AllgatherOptions = CollectiveOptions;
using AllToAllOptions = CollectiveOptions;
using BarrierOptions = CollectiveOptions;

/// A process group over Gloo's TCP transport (c10d::ProcessGroupGloo).
class ProcessGroupGloo : public std::enable_shared_from_this<ProcessGroupGloo> {
 public:
  struct Options {
    /// Bounds every collective and the rendezvous (torch's default: 30 minutes).
    std::chrono::milliseconds timeout{30 * 60 * 1000};
    /// The address this rank listens on for its peers ("127.0.0.1", a host name); empty: the
    /// machine's host name.
    std::string hostname;
    /// A network interface to listen on instead (GLOO_SOCKET_IFNAME).
    std::string iface;
    /// Swap a header before each collective to catch ranks that disagree (Note [Process groups]).
    bool check_collectives = true;
  };

  /// Connects to the other size - 1 ranks through `store`; raises RuntimeError after the timeout.
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, Options options);
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size)
      : ProcessGroupGloo(std::move(store), rank, size, Options()) {}
  ~ProcessGroupGloo();
  ProcessGroupGloo(const ProcessGroupGloo&) = delete;
  ProcessGroupGloo& operator=(const ProcessGroupGloo&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const Options& options() const { return options_; }
  std::string backend_name() const { return "gloo"; }

  /// Reduces `tensor` over every rank, in place on every rank.
  std::shared_ptr<Work> allreduce(Tensor tensor, const AllreduceOptions& opts = {});
  /// Reduces `tensor` into root_rank's tensor.
  std::shared_ptr<Work> reduce(Tensor tensor, const ReduceOptions& opts = {});
  /// Copies root_rank's tensor into every rank's.
  std::shared_ptr<Work> broadcast(Tensor tensor, const BroadcastOptions& opts = {});
  /// outputs[r] = rank r's input, on every rank.
  std::shared_ptr<Work> allgather(std::vector<Tensor> outputs, Tensor input,
                                  const AllgatherOptions& opts = {});
  /// output (size * input's elements) = every rank's input, concatenated in rank order.
  std::shared_ptr<Work> allgather_into_tensor(Tensor output, Tensor input,
                                              const AllgatherOptions& opts = {});
  /// outputs[r] = rank r's input, on root_rank (outputs empty elsewhere).
  std::shared_ptr<Work> gather(std::vector<Tensor> outputs, Tensor input,
                               const GatherOptions& opts = {});
  /// output = root_rank's inputs[rank] (inputs empty elsewhere).
  std::shared_ptr<Work> scatter(Tensor output, std::vector<Tensor> inputs,
                                const ScatterOptions& opts = {});
  /// output = the reduction over ranks of their inputs[rank].
  std::shared_ptr<Work> reduce_scatter(Tensor output, std::vector<Tensor> inputs,
                                       const ReduceScatterOptions& opts = {});
  /// output = the reduction over ranks of chunk `rank` of their input (size chunks on dim 0).
  std::shared_ptr<Work> reduce_scatter_tensor(Tensor output, Tensor input,
                                              const ReduceScatterOptions& opts = {});
  /// Rank r's chunk `rank` of input lands in chunk r of output; the split sizes (rows of dim 0
  /// per rank; empty: equal) may differ per rank.
  std::shared_ptr<Work> alltoall_base(Tensor output, Tensor input,
                                      std::vector<int64_t> output_split_sizes,
                                      std::vector<int64_t> input_split_sizes,
                                      const AllToAllOptions& opts = {});
  /// outputs[r] = rank r's inputs[rank].
  std::shared_ptr<Work> alltoall(std::vector<Tensor> outputs, std::vector<Tensor> inputs,
                                 const AllToAllOptions& opts = {});
  /// Returns once every rank called it.
  std::shared_ptr<Work> barrier(const BarrierOptions& opts = {});
  /// A barrier that names the ranks that did not reach it within `timeout` (rank 0 reports
  /// them all when wait_all_ranks, else the first).
  void monitored_barrier(std::chrono::milliseconds timeout, bool wait_all_ranks = false);
  /// Sends tensor to dst_rank (matched by a recv there with the same tag); the Work finishes
  /// once the data left.
  std::shared_ptr<Work> send(Tensor tensor, int dst_rank, int tag = 0);
  /// Receives into tensor from src_rank (-1: any rank; Work::source_rank tells which).
  std::shared_ptr<Work> recv(Tensor tensor, int src_rank, int tag = 0);

 private:
  struct Task;
  std::shared_ptr<Work> run(const char* op, const CollectiveOptions& opts,
                            std::vector<Tensor> outputs, std::function<void(uint32_t)> fn);
  void worker();
  // Swaps headers (and, for small collectives, the data: Note [Eager collectives]) with every
  // peer; false when nothing was exchanged (checks off, one rank).
  bool check_header(uint32_t tag, const char* op, const std::vector<int64_t>& header,
                    std::chrono::milliseconds timeout, const void* payload = nullptr,
                    size_t nbytes = 0);
  // Rank r's payload of the last exchange (this rank's own from the send buffer).
  const char* payload_of(int r) const;
  // Whether a collective of nbytes per rank goes in one exchange (Note [Eager collectives]).
  bool eager(size_t nbytes) const { return size_ > 1 && nbytes <= eager_limit_; }
  std::chrono::milliseconds timeout_of(const CollectiveOptions& o) const {
    return o.timeout.count() > 0 ? o.timeout : options_.timeout;
  }

  std::shared_ptr<Store> store_;
  int rank_, size_;
  Options options_;
  std::shared_ptr<gloo::Context> context_;
  uint32_t next_tag_ = 0;
  size_t eager_limit_ = 0;
  std::vector<char> eager_send_, eager_recv_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Task>> queue_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;
};

/// A recv's Work, which also tells the rank the data came from.
class RecvWork : public Work {
 public:
  int source_rank() const { return source_rank_; }

 protected:
  int source_rank_ = -1;
};

}  // namespace ember::distributed
