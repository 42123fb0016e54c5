// Trains the Fashion-MNIST CNN of examples/fashion_mnist.py through ember's C++ API (libtorch's
// API under namespace ember). Usage:
//   fashion_mnist [--epochs N] [--batch-size B] [--lr X] [--max-steps S] [--data-dir DIR]
//                 [--threads T] [--checkpoint PATH]
#include <ember/ember.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

namespace nn = ember::nn;

struct Args {
  int64_t epochs = 1, batch_size = 128, max_steps = -1, threads = 0;
  double lr = 2e-3;
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  std::string checkpoint = "fashion_mnist_cpp.ckpt";
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--epochs") a.epochs = std::stoll(v);
    else if (k == "--batch-size") a.batch_size = std::stoll(v);
    else if (k == "--max-steps") a.max_steps = std::stoll(v);
    else if (k == "--threads") a.threads = std::stoll(v);
    else if (k == "--lr") a.lr = std::stod(v);
    else if (k == "--data-dir") a.data_dir = v;
    else if (k == "--checkpoint") a.checkpoint = v;
    else throw std::invalid_argument("unknown flag " + k);
  }
  return a;
}

nn::Sequential build_model() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1).bias(false)),
                        nn::BatchNorm2d(32), nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)),
                        nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1).bias(false)),
                        nn::BatchNorm2d(64), nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)),
                        nn::Flatten(), nn::Linear(64 * 7 * 7, 128), nn::ReLU(), nn::Dropout(0.25),
                        nn::Linear(128, 10));
}

// Images scaled to [0, 1] by the reader, then standardized with the data set's mean and std.
ember::Tensor standardize(const ember::Tensor& images) { return (images - 0.2860) / 0.3530; }

double accuracy(nn::Sequential& model, const ember::Tensor& x, const ember::Tensor& y) {
  ember::NoGradGuard no_grad;
  model->eval();
  int64_t correct = 0;
  for (int64_t i = 0; i < x.size(0); i += 1000) {
    int64_t n = std::min<int64_t>(1000, x.size(0) - i);
    ember::Tensor logits = model->forward(ember::narrow(x, 0, i, n));
    ember::Tensor hits = ember::eq(ember::argmax(logits, 1), ember::narrow(y, 0, i, n));
    correct += ember::sum(hits).item<int64_t>();
  }
  return double(correct) / double(x.size(0));
}

int main(int argc, char** argv) {
  Args args = parse(argc, argv);
  if (args.threads > 0) ember::set_num_threads(int(args.threads));
  ember::manual_seed(0);
  ember::data::FashionMNIST train(args.data_dir, /*train=*/true), test(args.data_dir, false);
  ember::Tensor train_x = standardize(train.images), train_y = train.labels;
  ember::Tensor test_x = standardize(test.images), test_y = test.labels;

  nn::Sequential model = build_model();
  ember::optim::Adam optimizer(model->parameters(), ember::optim::AdamOptions(args.lr));
  std::cout << model << "\n";

  const int64_t n = train_x.size(0);
  for (int64_t epoch = 1; epoch <= args.epochs; ++epoch) {
    model->train();
    auto start = std::chrono::steady_clock::now();
    ember::Tensor order = ember::randperm(n);
    double loss_sum = 0;
    int64_t seen = 0, step = 0;
    for (int64_t i = 0; i < n && step != args.max_steps; i += args.batch_size, ++step) {
      ember::Tensor idx = ember::narrow(order, 0, i, std::min(args.batch_size, n - i));
      ember::Tensor xb = ember::index_select(train_x, 0, idx);
      ember::Tensor yb = ember::index_select(train_y, 0, idx);
      optimizer.zero_grad();
      ember::Tensor loss = nn::functional::cross_entropy(model->forward(xb), yb);
      loss.backward();
      optimizer.step();
      loss_sum += loss.item<double>() * double(xb.size(0));
      seen += xb.size(0);
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double acc = accuracy(model, test_x, test_y);
    std::cout << "epoch " << epoch << ": train loss " << loss_sum / double(seen)
              << ", test accuracy " << acc << ", " << seconds << " s (" << double(seen) / seconds
              << " samples/s)" << std::endl;
    ember::save(args.checkpoint, model->state_dict());
  }
  return 0;
}
