#pragma once
// Reading IDX files (the MNIST family's format), gzipped or not, and Fashion-MNIST.
#include <string>

#include "ember/core/tensor.h"

namespace ember::data {

/// Reads an IDX file (plain or gzip) into a tensor of its element type (uint8 for images and
/// labels); validates the magic number, the dims and the payload length.
Tensor read_idx(const std::string& path);

/// Fashion-MNIST from a directory of IDX files (the Debian package dataset-fashion-mnist
/// installs them in /usr/share/datasets/fashion-mnist).
struct FashionMNIST {
  /// Loads the training (60,000) or test (10,000) split; raises naming the missing files.
  explicit FashionMNIST(const std::string& root = "/usr/share/datasets/fashion-mnist",
                        bool train = true);
  /// Images (N, 1, 28, 28) float32 scaled to [0, 1].
  Tensor images;
  /// Labels (N,) int64 in [0, 10).
  Tensor labels;
  int64_t size() const { return labels.size(0); }
};

/// The path of `<root>/<name>` or `<root>/<name>.gz`, whichever exists; raises otherwise.
std::string find_idx_file(const std::string& root, const std::string& name);

}  // namespace ember::data
