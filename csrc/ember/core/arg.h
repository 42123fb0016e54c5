#pragma once
// EMBER_ARG: the chainable options of the C++ frontend's option structs (libtorch's TORCH_ARG),
// shared by ember::nn and ember::optim.

/// Declares a chainable option `name` of type T stored in `name##_`: `opts.name(v)` sets it and
/// returns *this, `opts.name()` reads it.
#define EMBER_ARG(T, name)                                 \
 public:                                                   \
  auto name(const T& new_##name)->decltype(*this) {        \
    this->name##_ = new_##name;                            \
    return *this;                                          \
  }                                                        \
  const T& name() const noexcept { return this->name##_; } \
  T& name() noexcept { return this->name##_; }             \
                                                           \
 private:                                                  \
  T name##_
