// ember::data: the IDX reader, Fashion-MNIST and TensorLoader.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ember/ember.h"

using namespace ember;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("ember_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

}  // namespace

TEST(Data, ReadIdxAndFashionMNIST) {
  std::string path = temp_path("labels-idx1-ubyte");
  {
    std::ofstream f(path, std::ios::binary);
    const unsigned char bytes[] = {0, 0, 0x0B, 1,    0,    0,
                                   0, 2, 0x01, 0x02, 0xFF, 0xFE};  // int16, big-endian
    f.write(reinterpret_cast<const char*>(bytes), sizeof bytes);
  }
  Tensor t = data::read_idx(path);
  ASSERT_EQ(t.dtype(), kShort);
  ASSERT_EQ(t.numel(), 2);
  EXPECT_EQ(t.data_ptr<int16_t>()[0], 0x0102);
  EXPECT_EQ(t.data_ptr<int16_t>()[1], -2);
  std::filesystem::remove(path);
  EXPECT_THROW(data::FashionMNIST("/nonexistent/fashion-mnist"), Error);

  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist"))
    GTEST_SKIP() << "no dataset-fashion-mnist";
  data::FashionMNIST test("/usr/share/datasets/fashion-mnist", /*train=*/false);
  EXPECT_EQ(test.size(), 10000);
  EXPECT_EQ(test.images.sizes().vec(), (std::vector<int64_t>{10000, 1, 28, 28}));
  EXPECT_EQ(test.images.dtype(), kFloat);
  EXPECT_EQ(test.labels.dtype(), kLong);
  EXPECT_LE(max(test.images).item<float>(), 1.0f);
  EXPECT_EQ(test.labels.data_ptr<int64_t>()[0], 9);  // the first test image is an ankle boot
}

TEST(Data, TensorLoaderBatches) {
  Tensor x = reshape(arange(Scalar(int64_t(20)), TensorOptions().dtype(kFloat)), {10, 2});
  Tensor y = arange(Scalar(int64_t(10)), TensorOptions().dtype(kLong));
  data::TensorLoader seq(x, y, 4);
  EXPECT_EQ(seq.size(), 3);
  std::vector<int64_t> sizes;
  for (const data::Batch& b : seq) sizes.push_back(b.target.size(0));
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));

  data::TensorLoader shuf(x, y, 4, /*shuffle=*/true, /*drop_last=*/true, /*seed=*/42);
  data::TensorLoader same(x, y, 4, true, true, 42);
  EXPECT_EQ(shuf.size(), 2);
  std::vector<int64_t> a, c;
  for (const data::Batch& b : shuf) {
    EXPECT_EQ(b.data.size(0), 4);
    for (int64_t k = 0; k < 4; ++k) {
      int64_t label = b.target.data_ptr<int64_t>()[k];
      EXPECT_EQ(contiguous(b.data).data_ptr<float>()[2 * k], float(2 * label));  // rows stay paired
      a.push_back(label);
    }
  }
  for (const data::Batch& b : same)
    for (int64_t k = 0; k < 4; ++k) c.push_back(b.target.data_ptr<int64_t>()[k]);
  EXPECT_EQ(a, c);
  EXPECT_THROW(data::TensorLoader(x, y, 0), Error);
}
