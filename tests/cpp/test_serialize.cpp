// Checkpoints from C++: round trips of tensors, maps and trees; corrupt files raise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "ember/ember.h"

using namespace ember;
using serialize::Value;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("ember_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.sizes().equals(b.sizes()) && a.dtype() == b.dtype() &&
         std::memcmp(contiguous(a).data_ptr(), contiguous(b).data_ptr(), a.nbytes()) == 0;
}

std::string bytes_of(const Value& v) {
  std::string out;
  serialize::write(v, [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  return out;
}

}  // namespace

TEST(Serialize, TensorAndMapRoundTrip) {
  std::string path = temp_path("map.ckpt");
  Tensor w = randn({4, 3}), b = arange(Scalar(int64_t(5)), TensorOptions().dtype(kLong));
  Tensor wt = transpose(w, 0, 1);  // non-contiguous: saved in logical order
  std::map<std::string, Tensor> state{{"weight", w}, {"bias", b}, {"wt", wt}};
  ember::save(state, path);
  std::map<std::string, Tensor> loaded;
  ember::load(loaded, path);
  ASSERT_EQ(loaded.size(), 3u);
  EXPECT_TRUE(same_bits(loaded["weight"], w));
  EXPECT_TRUE(same_bits(loaded["bias"], b));
  EXPECT_TRUE(same_bits(loaded["wt"], wt));
  EXPECT_TRUE(loaded["wt"].is_contiguous());

  ember::save(path, w);  // path-first spelling, single tensor
  Tensor t;
  ember::load(t, path);
  EXPECT_TRUE(same_bits(t, w));
  EXPECT_TRUE(same_bits(serialize::load_file(path, /*mmap=*/true).to_tensor(), w));
  std::filesystem::remove(path);
}

TEST(Serialize, TreeRoundTrip) {
  Value tree = Value::dict(
      {
          {Value::from_string("lr"), Value::from_double(0.1)},
          {Value::from_int(3), Value::tuple({Value::from_double(0.9), Value::from_double(-0.0)})},
          {Value::from_string("flags"),
           Value::list({Value::from_bool(true), Value(), Value::from_string("x\"\n")})},
          {Value::from_string("nan"), Value::from_double(NAN)},
          {Value::from_string("step"), Value(scalar_tensor(Scalar(int64_t(7)), kLong))},
      },
      /*ordered=*/true);
  std::string bytes = bytes_of(tree);
  Value v = serialize::load_bytes(bytes.data(), bytes.size());
  ASSERT_EQ(v.kind, Value::Kind::Dict);
  EXPECT_TRUE(v.ordered);
  EXPECT_EQ(v.at("lr").d, 0.1);
  EXPECT_EQ(v.entries[1].first.i, 3);
  EXPECT_EQ(v.entries[1].second.kind, Value::Kind::Tuple);
  EXPECT_TRUE(std::signbit(v.entries[1].second.items[1].d));
  EXPECT_EQ(v.at("flags").items[2].s, "x\"\n");
  EXPECT_EQ(v.at("flags").items[1].kind, Value::Kind::None);
  EXPECT_TRUE(std::isnan(v.at("nan").d));
  EXPECT_EQ(v.at("step").to_tensor().dim(), 0);
  EXPECT_EQ(v.at("step").to_tensor().item<int64_t>(), 7);
  EXPECT_THROW(v.at("missing"), Error);
  EXPECT_THROW(v.at("lr").to_tensor(), Error);
}

TEST(Serialize, CorruptInputsRaise) {
  std::string good = bytes_of(Value(std::map<std::string, Tensor>{{"x", ones({16})}}));
  for (size_t cut = 0; cut < good.size(); cut += 5) {
    try {
      serialize::load_bytes(good.data(), cut);
      FAIL() << "loaded a file cut at " << cut;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("ember.load"), std::string::npos);
    }
  }
  std::string zip = "PK\x03\x04 and more bytes of a zip archive";
  try {
    serialize::load_bytes(zip.data(), zip.size());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not yet supported"), std::string::npos);
  }
  EXPECT_THROW(ember::load(temp_path("does_not_exist")), Error);
}
