// ember._C._distributed: stores, ProcessGroupGloo and Work, behind ember.distributed.
// Every call that may wait (a collective, a store's get/wait, Work.wait) releases the GIL.
#include <nanobind/stl/chrono.h>
#include <nanobind/stl/function.h>

#include "common.h"
#include "ember/distributed/dist_error.h"
#include "ember/distributed/process_group.h"
#include "ember/distributed/store.h"

namespace ember::py {

namespace {
using namespace ember::distributed;
using std::chrono::milliseconds;
using Release = nb::call_guard<nb::gil_scoped_release>;

std::string as_bytes(nb::handle v) {
  if (PyBytes_Check(v.ptr()))
    return std::string(PyBytes_AS_STRING(v.ptr()), size_t(PyBytes_GET_SIZE(v.ptr())));
  if (PyUnicode_Check(v.ptr())) return nb::cast<std::string>(v);
  if (PyByteArray_Check(v.ptr()))
    return std::string(PyByteArray_AS_STRING(v.ptr()), size_t(PyByteArray_GET_SIZE(v.ptr())));
  throw nb::type_error("Store: expected the value as str or bytes");
}

nb::bytes to_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

template <class O>
O opts(bool async_op, milliseconds timeout = milliseconds(0)) {
  O o;
  o.async_op = async_op;
  o.timeout = timeout;
  return o;
}
}  // namespace

void bind_distributed(nb::module_& m) {
  // torch's DistError family (Note [Distributed errors] in dist_error.h), created here as
  // torch._C creates its own and re-exported by ember.distributed. Leaked on purpose: they live
  // as long as the interpreter.
  static PyObject* dist_error = PyErr_NewExceptionWithDoc(
      "ember.distributed.DistError",
      "DistError(message)\n\nThe base of torch.distributed's errors (a RuntimeError).",
      PyExc_RuntimeError, nullptr);
  static PyObject* kinds[3] = {
      PyErr_NewExceptionWithDoc(
          "ember.distributed.DistBackendError",
          "DistBackendError(message)\n\nAn error of a process group's backend.", dist_error,
          nullptr),
      PyErr_NewExceptionWithDoc("ember.distributed.DistStoreError",
                                "DistStoreError(message)\n\nAn error of a key-value store (a get "
                                "or wait that timed out).",
                                dist_error, nullptr),
      PyErr_NewExceptionWithDoc("ember.distributed.DistNetworkError",
                                "DistNetworkError(message)\n\nA store or peer that cannot be "
                                "reached, refuses or closes the "
                                "connection.",
                                dist_error, nullptr)};
  if (!dist_error || !kinds[0] || !kinds[1] || !kinds[2]) throw nb::python_error();
  m.attr("DistError") = nb::handle(dist_error);
  m.attr("DistBackendError") = nb::handle(kinds[0]);
  m.attr("DistStoreError") = nb::handle(kinds[1]);
  m.attr("DistNetworkError") = nb::handle(kinds[2]);
  // Registered after the module's ember::Error translator, so tried before it.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const DistError& e) {
      PyErr_SetString(kinds[int(e.dist_kind())], e.what());
    }
  });
  nb::enum_<ReduceOp>(m, "ReduceOp", "The reductions of the collectives (torch's ReduceOp).")
      .value("SUM", ReduceOp::SUM)
      .value("AVG", ReduceOp::AVG)
      .value("PRODUCT", ReduceOp::PRODUCT)
      .value("MIN", ReduceOp::MIN)
      .value("MAX", ReduceOp::MAX)
      .value("BAND", ReduceOp::BAND)
      .value("BOR", ReduceOp::BOR)
      .value("BXOR", ReduceOp::BXOR);

  nb::class_<Store>(m, "Store", "A key-value store the ranks meet through (torch's Store).")
      .def(
          "set",
          [](Store& s, const std::string& k, nb::handle v) {
            std::string val = as_bytes(v);
            nb::gil_scoped_release r;
            s.set(k, val);
          },
          nb::arg("key"), nb::arg("value"),
          doc("set(key, value) -> None", "Stores value (str or bytes) under key."))
      .def(
          "get",
          [](Store& s, const std::string& k) {
            std::string v;
            {
              nb::gil_scoped_release r;
              v = s.get(k);
            }
            return to_bytes(v);
          },
          nb::arg("key"),
          doc("get(key) -> bytes", "The value of key, waiting up to the timeout for it."))
      .def("add", &Store::add, nb::arg("key"), nb::arg("amount"), Release(),
           doc("add(key, amount) -> int",
               "Adds amount to the counter under key and returns the new value."))
      .def(
          "compare_set",
          [](Store& s, const std::string& k, nb::handle expected, nb::handle desired) {
            std::string e = as_bytes(expected), d = as_bytes(desired), v;
            {
              nb::gil_scoped_release r;
              v = s.compare_set(k, e, d);
            }
            return to_bytes(v);
          },
          nb::arg("key"), nb::arg("expected_value"), nb::arg("desired_value"),
          doc("compare_set(key, expected_value, desired_value) -> bytes",
              "Sets key to desired_value when it holds expected_value; returns its value."))
      .def(
          "wait",
          [](Store& s, const std::vector<std::string>& keys, std::optional<milliseconds> t) {
            nb::gil_scoped_release r;
            s.wait(keys, t ? *t : s.timeout());
          },
          nb::arg("keys"), nb::arg("timeout") = nb::none(),
          doc("wait(keys, timeout=None) -> None",
              "Waits until every key is set; raises RuntimeError after the timeout."))
      .def("check", &Store::check, nb::arg("keys"), Release(),
           doc("check(keys) -> bool", "Whether every key is set, without waiting."))
      .def("delete_key", &Store::delete_key, nb::arg("key"), Release(),
           doc("delete_key(key) -> bool", "Removes key; False when it was not set."))
      .def("num_keys", &Store::num_keys, Release(),
           doc("num_keys() -> int", "How many keys are set."))
      .def("set_timeout", &Store::set_timeout, nb::arg("timeout"),
           doc("set_timeout(timeout) -> None", "Sets the timeout of get and wait."))
      .def_prop_ro("timeout", &Store::timeout, "The timeout of get and wait (a timedelta).");

  nb::class_<HashStore, Store>(m, "HashStore", "A store in this process's memory.")
      .def(nb::new_([] { return std::make_shared<HashStore>(); }),
           doc("HashStore() -> None", "An empty in-memory store."));

  nb::class_<FileStore, Store>(m, "FileStore", "A store in a file shared by the processes.")
      .def(nb::new_([](const std::string& path, int world_size) {
             return std::make_shared<FileStore>(path, world_size);
           }),
           nb::arg("file_name"), nb::arg("world_size") = -1,
           doc("FileStore(file_name, world_size=-1) -> None",
               "Opens (or creates) the store in file_name."))
      .def_prop_ro("path", &FileStore::path, "The file's path.");

  nb::class_<PrefixStore, Store>(m, "PrefixStore", "Another store's keys under a prefix.")
      .def(nb::new_([](const std::string& prefix, std::shared_ptr<Store> store) {
             return std::make_shared<PrefixStore>(prefix, std::move(store));
           }),
           nb::arg("prefix"), nb::arg("store"),
           doc("PrefixStore(prefix, store) -> None", "Keys of store seen under prefix/."))
      .def_prop_ro("underlying_store", &PrefixStore::underlying_store,
                   "The store the keys live in.");

  nb::class_<TCPStore, Store>(m, "TCPStore", "A store served over TCP by one process.")
      .def(nb::new_([](const std::string& host, int port, std::optional<int> world_size,
                       bool is_master, milliseconds timeout, bool wait_for_workers) {
             TCPStore::Options o;
             o.port = port;
             o.is_server = is_master;
             o.num_workers = world_size ? *world_size : -1;
             o.wait_for_workers = wait_for_workers;
             o.timeout = timeout;
             nb::gil_scoped_release r;
             return std::make_shared<TCPStore>(host, o);
           }),
           nb::arg("host_name"), nb::arg("port"), nb::arg("world_size") = nb::none(),
           nb::arg("is_master") = false, nb::arg("timeout") = milliseconds(300000),
           nb::arg("wait_for_workers") = true,
           doc("TCPStore(host_name, port, world_size=None, is_master=False, "
               "timeout=timedelta(seconds=300), wait_for_workers=True) -> None",
               "Connects to the store server at host_name:port; is_master starts the server "
               "(port 0 picks a free one)."))
      .def_prop_ro("host", &TCPStore::host, "The server's host.")
      .def_prop_ro("port", &TCPStore::port, "The server's port.");

  nb::class_<Work>(m, "Work", "The handle of a collective or point-to-point call.")
      .def(
          "wait",
          [](Work& w, std::optional<milliseconds> t) { return w.wait(t ? *t : milliseconds(0)); },
          nb::arg("timeout") = nb::none(), Release(),
          doc("wait(timeout=None) -> bool",
              "Blocks until the call finished; raises its error (RuntimeError)."))
      .def("is_completed", &Work::is_completed,
           doc("is_completed() -> bool", "Whether the call finished."))
      .def("is_success", &Work::is_success,
           doc("is_success() -> bool", "Whether the call finished without an error."))
      .def(
          "exception",
          [](Work& w) -> nb::object {
            auto e = w.exception();
            if (!e) return nb::none();
            try {
              std::rethrow_exception(e);
            } catch (const std::exception& ex) {
              return nb::module_::import_("builtins").attr("RuntimeError")(ex.what());
            }
          },
          doc("exception() -> Optional[Exception]", "The call's error, or None."))
      .def("result", &Work::result, Release(),
           doc("result() -> List[Tensor]", "The tensors the call wrote, once it finished."))
      .def(
          "_add_callback",
          [](Work& w, nb::object fn) {
            auto held = std::make_shared<nb::object>(std::move(fn));
            w.add_callback([held] {
              nb::gil_scoped_acquire g;
              try {
                (*held)();
              } catch (nb::python_error& e) {
                e.discard_as_unraisable("ember.distributed Work callback");
              }
              held->reset();
            });
          },
          nb::arg("fn"),
          doc("_add_callback(fn) -> None", "Calls fn() once the call finished (any thread)."))
      .def(
          "_source_rank",
          [](Work& w) {
            auto* r = dynamic_cast<RecvWork*>(&w);
            return r ? r->source_rank() : -1;
          },
          doc("_source_rank() -> int", "The rank a finished recv got its data from."));

  using PG = ProcessGroupGloo;
  nb::class_<PG>(m, "ProcessGroupGloo", "A process group over Gloo's TCP transport.")
      .def(nb::new_([](std::shared_ptr<Store> store, int rank, int size, milliseconds timeout,
                       const std::string& hostname, const std::string& iface, bool check) {
             PG::Options o;
             o.timeout = timeout;
             o.hostname = hostname;
             o.iface = iface;
             o.check_collectives = check;
             nb::gil_scoped_release r;
             return std::make_shared<PG>(std::move(store), rank, size, o);
           }),
           nb::arg("store"), nb::arg("rank"), nb::arg("size"),
           nb::arg("timeout") = milliseconds(1800000), nb::arg("hostname") = "",
           nb::arg("iface") = "", nb::arg("check_collectives") = true,
           doc("ProcessGroupGloo(store, rank, size, timeout=timedelta(minutes=30), hostname='', "
               "iface='', check_collectives=True) -> None",
               "Connects rank to the other ranks of a group of size through store."))
      .def("rank", &PG::rank, doc("rank() -> int", "This process's rank in the group."))
      .def("size", &PG::size, doc("size() -> int", "How many ranks the group has."))
      .def_prop_ro(
          "timeout", [](PG& g) { return g.options().timeout; }, "The group's timeout.")
      .def(
          "allreduce",
          [](PG& g, Tensor t, ReduceOp op, bool async_op) {
            auto o = opts<AllreduceOptions>(async_op);
            o.reduce_op = op;
            return g.allreduce(t, o);
          },
          nb::arg("tensor"), nb::arg("op") = ReduceOp::SUM, nb::arg("async_op") = false, Release(),
          doc("allreduce(tensor, op=ReduceOp.SUM, async_op=False) -> Work",
              "Reduces tensor over every rank, in place."))
      .def(
          "reduce",
          [](PG& g, Tensor t, int root, ReduceOp op, bool async_op) {
            auto o = opts<ReduceOptions>(async_op);
            o.reduce_op = op;
            o.root_rank = root;
            return g.reduce(t, o);
          },
          nb::arg("tensor"), nb::arg("root"), nb::arg("op") = ReduceOp::SUM,
          nb::arg("async_op") = false, Release(),
          doc("reduce(tensor, root, op=ReduceOp.SUM, async_op=False) -> Work",
              "Reduces tensor into root's."))
      .def(
          "broadcast",
          [](PG& g, Tensor t, int root, bool async_op) {
            auto o = opts<BroadcastOptions>(async_op);
            o.root_rank = root;
            return g.broadcast(t, o);
          },
          nb::arg("tensor"), nb::arg("root"), nb::arg("async_op") = false, Release(),
          doc("broadcast(tensor, root, async_op=False) -> Work",
              "Copies root's tensor into every rank's."))
      .def(
          "allgather",
          [](PG& g, std::vector<Tensor> outs, Tensor in, bool async_op) {
            return g.allgather(std::move(outs), in, opts<AllgatherOptions>(async_op));
          },
          nb::arg("outputs"), nb::arg("input"), nb::arg("async_op") = false, Release(),
          doc("allgather(outputs, input, async_op=False) -> Work",
              "outputs[r] receives rank r's input."))
      .def(
          "allgather_into_tensor",
          [](PG& g, Tensor out, Tensor in, bool async_op) {
            return g.allgather_into_tensor(out, in, opts<AllgatherOptions>(async_op));
          },
          nb::arg("output"), nb::arg("input"), nb::arg("async_op") = false, Release(),
          doc("allgather_into_tensor(output, input, async_op=False) -> Work",
              "output receives every rank's input, concatenated in rank order."))
      .def(
          "gather",
          [](PG& g, std::vector<Tensor> outs, Tensor in, int root, bool async_op) {
            auto o = opts<GatherOptions>(async_op);
            o.root_rank = root;
            return g.gather(std::move(outs), in, o);
          },
          nb::arg("outputs"), nb::arg("input"), nb::arg("root"), nb::arg("async_op") = false,
          Release(),
          doc("gather(outputs, input, root, async_op=False) -> Work",
              "root's outputs[r] receives rank r's input."))
      .def(
          "scatter",
          [](PG& g, Tensor out, std::vector<Tensor> ins, int root, bool async_op) {
            auto o = opts<ScatterOptions>(async_op);
            o.root_rank = root;
            return g.scatter(out, std::move(ins), o);
          },
          nb::arg("output"), nb::arg("inputs"), nb::arg("root"), nb::arg("async_op") = false,
          Release(),
          doc("scatter(output, inputs, root, async_op=False) -> Work",
              "output receives root's inputs[rank]."))
      .def(
          "reduce_scatter",
          [](PG& g, Tensor out, std::vector<Tensor> ins, ReduceOp op, bool async_op) {
            auto o = opts<ReduceScatterOptions>(async_op);
            o.reduce_op = op;
            return g.reduce_scatter(out, std::move(ins), o);
          },
          nb::arg("output"), nb::arg("inputs"), nb::arg("op") = ReduceOp::SUM,
          nb::arg("async_op") = false, Release(),
          doc("reduce_scatter(output, inputs, op=ReduceOp.SUM, async_op=False) -> Work",
              "output receives the reduction over ranks of their inputs[rank]."))
      .def(
          "reduce_scatter_tensor",
          [](PG& g, Tensor out, Tensor in, ReduceOp op, bool async_op) {
            auto o = opts<ReduceScatterOptions>(async_op);
            o.reduce_op = op;
            return g.reduce_scatter_tensor(out, in, o);
          },
          nb::arg("output"), nb::arg("input"), nb::arg("op") = ReduceOp::SUM,
          nb::arg("async_op") = false, Release(),
          doc("reduce_scatter_tensor(output, input, op=ReduceOp.SUM, async_op=False) -> Work",
              "output receives the reduction over ranks of chunk rank of their input."))
      .def(
          "alltoall_base",
          [](PG& g, Tensor out, Tensor in, std::vector<int64_t> out_splits,
             std::vector<int64_t> in_splits, bool async_op) {
            return g.alltoall_base(out, in, std::move(out_splits), std::move(in_splits),
                                   opts<AllToAllOptions>(async_op));
          },
          nb::arg("output"), nb::arg("input"), nb::arg("output_split_sizes"),
          nb::arg("input_split_sizes"), nb::arg("async_op") = false, Release(),
          doc("alltoall_base(output, input, output_split_sizes, input_split_sizes, "
              "async_op=False) -> Work",
              "Chunk r of input goes to rank r; chunk r of output comes from rank r."))
      .def(
          "alltoall",
          [](PG& g, std::vector<Tensor> outs, std::vector<Tensor> ins, bool async_op) {
            return g.alltoall(std::move(outs), std::move(ins), opts<AllToAllOptions>(async_op));
          },
          nb::arg("outputs"), nb::arg("inputs"), nb::arg("async_op") = false, Release(),
          doc("alltoall(outputs, inputs, async_op=False) -> Work",
              "outputs[r] receives rank r's inputs[rank]."))
      .def(
          "barrier", [](PG& g, bool async_op) { return g.barrier(opts<BarrierOptions>(async_op)); },
          nb::arg("async_op") = false, Release(),
          doc("barrier(async_op=False) -> Work", "Finishes once every rank called it."))
      .def("monitored_barrier", &PG::monitored_barrier, nb::arg("timeout"),
           nb::arg("wait_all_ranks") = false, Release(),
           doc("monitored_barrier(timeout, wait_all_ranks=False) -> None",
               "A barrier whose rank 0 names the ranks that missed it within timeout."))
      .def("send", &PG::send, nb::arg("tensor"), nb::arg("dst"), nb::arg("tag") = 0, Release(),
           doc("send(tensor, dst, tag=0) -> Work", "Sends tensor to rank dst."))
      .def("recv", &PG::recv, nb::arg("tensor"), nb::arg("src"), nb::arg("tag") = 0, Release(),
           doc("recv(tensor, src, tag=0) -> Work",
               "Receives into tensor from rank src (-1: any rank)."));
}

}  // namespace ember::py
