// ember::distributed: the stores, and a two-rank process group on two threads of this process.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <thread>

#include "ember/distributed/dist_error.h"
#include "ember/distributed/process_group.h"
#include "ember/distributed/store.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember::distributed;
using std::chrono::milliseconds;

namespace {
// own: the keys the store counts of its own (FileStore: its users count, as torch's "cleanup/");
// timeout: the text of a wait that times out, torch's for each store; dist_store: whether it is
// a DistStoreError (torch's FileStore raises a plain RuntimeError).
void exercise(Store& s, int64_t own, const std::string& timeout, bool dist_store = true) {
  s.set("a", "1");
  EXPECT_EQ(s.get("a"), "1");
  EXPECT_EQ(s.add("n", 2), 2);
  EXPECT_EQ(s.add("n", 3), 5);
  EXPECT_EQ(s.get("n"), "5");
  EXPECT_TRUE(s.check({"a", "n"}));
  EXPECT_FALSE(s.check({"missing"}));
  EXPECT_EQ(s.compare_set("a", "1", "2"), "2");
  EXPECT_EQ(s.compare_set("a", "1", "3"), "2");
  EXPECT_EQ(s.num_keys(), own + 2);
  EXPECT_TRUE(s.delete_key("a"));
  EXPECT_FALSE(s.delete_key("a"));
  EXPECT_EQ(s.num_keys(), own + 1);
  try {
    s.wait({"never"}, milliseconds(50));
    FAIL() << "wait did not time out";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), timeout);
    auto* d = dynamic_cast<const ember::distributed::DistError*>(&e);  // DistStoreError in Python
    if (!dist_store) {
      EXPECT_EQ(d, nullptr);
      return;
    }
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->dist_kind(), ember::distributed::DistErrorKind::Store);
  }
}
}  // namespace

TEST(DistributedStore, HashStore) {
  HashStore s;
  exercise(s, 0, "Wait timeout");
}

TEST(DistributedStore, FileStore) {
  std::string path = testing::TempDir() + "ember_filestore_" + std::to_string(::getpid());
  std::remove(path.c_str());
  {
    FileStore s(path, 1);
    exercise(s, 1, "Wait timeout", false);
    FileStore other(path, 1);  // a second handle sees the same keys
    EXPECT_EQ(other.get("n"), "5");
  }
  EXPECT_NE(::access(path.c_str(), F_OK), 0);  // the last user removed the file
}

TEST(DistributedStore, TCPStoreAndPrefix) {
  TCPStore::Options o;
  o.port = 0;
  o.is_server = true;
  o.timeout = milliseconds(5000);
  auto server = std::make_shared<TCPStore>("127.0.0.1", o);
  exercise(*server, 0, "wait timeout after 50ms, keys: /never");
  o.is_server = false;
  o.port = server->port();
  auto client = std::make_shared<TCPStore>("127.0.0.1", o);
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(20));
    server->set("late", "x");
  });
  EXPECT_EQ(client->get("late"), "x");  // get waits for a key another client sets
  later.join();
  PrefixStore p("grp", client);
  p.set("k", "v");
  EXPECT_EQ(server->get("grp/k"), "v");
  EXPECT_EQ(p.get("k"), "v");
}

TEST(DistributedStore, TCPStoreConnectFailureNamesAddress) {
  TCPStore::Options o;
  o.port = 1;  // nothing listens there
  o.timeout = milliseconds(200);
  try {
    TCPStore s("127.0.0.1", o);
    FAIL() << "connected to port 1";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("127.0.0.1, 1"), std::string::npos) << m;
    EXPECT_NE(m.find("200ms"), std::string::npos) << m;
  }
}

TEST(ProcessGroupGloo, TwoThreadsAllReduceBroadcastAllgather) {
  auto store = std::make_shared<HashStore>();
  std::vector<Tensor> results(2), gathered(2);
  std::vector<std::string> errors(2);
  auto body = [&](int rank) {
    try {
      ProcessGroupGloo::Options o;
      o.hostname = "127.0.0.1";
      o.timeout = milliseconds(20000);
      ProcessGroupGloo pg(store, rank, 2, o);
      Tensor t = full({5}, double(rank + 1));
      pg.allreduce(t)->wait();
      AllreduceOptions mx;
      mx.reduce_op = ReduceOp::MAX;
      mx.async_op = true;
      Tensor m = full({3}, double(rank * 10), kLong);
      auto w = pg.allreduce(m, mx);
      w->wait();
      Tensor b = full({2, 2}, double(rank + 7));
      BroadcastOptions bo;
      bo.root_rank = 1;
      pg.broadcast(b, bo)->wait();
      Tensor out = empty({4});
      pg.allgather_into_tensor(out, full({2}, double(rank)))->wait();
      results[rank] = cat({t, m.to(kFloat), b.flatten()}, 0);
      gathered[rank] = out;
      pg.barrier()->wait();
    } catch (const std::exception& e) {
      errors[rank] = e.what();
    }
  };
  std::thread t0(body, 0), t1(body, 1);
  t0.join();
  t1.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  for (int r = 0; r < 2; ++r) {
    std::vector<float> want = {3, 3, 3, 3, 3, 10, 10, 10, 8, 8, 8, 8};
    auto* p = results[r].data_ptr<float>();
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(p[i], want[i]) << "rank " << r << " " << i;
    auto* g = gathered[r].data_ptr<float>();
    EXPECT_EQ(g[0], 0);
    EXPECT_EQ(g[3], 1);
  }
}

TEST(ProcessGroupGloo, MismatchedShapesRaise) {
  auto store = std::make_shared<HashStore>();
  std::vector<std::string> errors(2);
  auto body = [&](int rank) {
    try {
      ProcessGroupGloo::Options o;
      o.hostname = "127.0.0.1";
      o.timeout = milliseconds(20000);
      ProcessGroupGloo pg(store, rank, 2, o);
      Tensor t = ones({rank + 3});
      pg.allreduce(t)->wait();
    } catch (const std::exception& e) {
      errors[rank] = e.what();
    }
  };
  std::thread t0(body, 0), t1(body, 1);
  t0.join();
  t1.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(errors[r].find("disagree"), std::string::npos) << errors[r];
    EXPECT_NE(errors[r].find("shape [3]"), std::string::npos) << errors[r];
    EXPECT_NE(errors[r].find("shape [4]"), std::string::npos) << errors[r];
  }
}
