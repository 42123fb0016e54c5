#pragma once
// Errors: user mistakes throw ember::Error with the Python class PyTorch would raise.
#include <sstream>
#include <stdexcept>
#include <string>

namespace ember {

/// The Python exception class an error maps to (PyTorch's choice for the same mistake).
enum class ErrorKind { Runtime, Index, Type, Value, NotImplemented };

/// A user-facing error; the bindings translate `kind` into the matching Python exception.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

/// Whether an error of kind `actual` is caught as `expected` (Python's NotImplementedError is a
/// RuntimeError, so NotImplemented counts as Runtime).
constexpr bool is_a(ErrorKind actual, ErrorKind expected) {
  return actual == expected ||
         (expected == ErrorKind::Runtime && actual == ErrorKind::NotImplemented);
}

namespace detail {
template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
[[noreturn]] void throw_error(ErrorKind kind, const std::string& msg);
[[noreturn]] void assert_fail(const char* cond, const char* file, int line);
}  // namespace detail

}  // namespace ember

// Error text, one rule (CONTRIBUTING.md): keep PyTorch's wording where PyTorch has one, since user
// code matches on it, with the op name first ("add: The size of tensor a (3) must match ...").
// Where PyTorch has no wording: "op: expected ...; got ..." with the shapes and dtypes involved.

/// User error: `EMBER_CHECK(cond, "op: expected ...; got ", x)`; throws RuntimeError.
#define EMBER_CHECK(cond, ...) EMBER_CHECK_KIND(cond, ::ember::ErrorKind::Runtime, __VA_ARGS__)
#define EMBER_CHECK_INDEX(cond, ...) EMBER_CHECK_KIND(cond, ::ember::ErrorKind::Index, __VA_ARGS__)
#define EMBER_CHECK_TYPE(cond, ...) EMBER_CHECK_KIND(cond, ::ember::ErrorKind::Type, __VA_ARGS__)
#define EMBER_CHECK_VALUE(cond, ...) EMBER_CHECK_KIND(cond, ::ember::ErrorKind::Value, __VA_ARGS__)
#define EMBER_CHECK_KIND(cond, kind, ...)                                        \
  do {                                                                           \
    if (!(cond)) [[unlikely]]                                                    \
      ::ember::detail::throw_error(kind, ::ember::detail::str_cat(__VA_ARGS__)); \
  } while (0)
#define EMBER_ERROR(kind, ...) \
  ::ember::detail::throw_error(kind, ::ember::detail::str_cat(__VA_ARGS__))
/// Internal invariant: a failure is ember's bug, never the user's.
#define EMBER_ASSERT(cond)                                     \
  do {                                                         \
    if (!(cond)) [[unlikely]]                                  \
      ::ember::detail::assert_fail(#cond, __FILE__, __LINE__); \
  } while (0)
