#pragma once
// The distributed runtime's errors, as torch's DistError family (Note [Distributed errors]).
#include <string>

#include "ember/core/error.h"

namespace ember::distributed {

// Note [Distributed errors]: torch raises c10::DistError subclasses where a store or the network
// fails: DistStoreError for a store's get/wait that times out, DistNetworkError for a store
// server that cannot be reached, refuses, or closes the connection, DistBackendError for a
// backend's own failures. They are RuntimeErrors in Python, so an ember::Error of kind Runtime
// carrying the finer kind keeps every `catch (const Error&)` and `except RuntimeError` working;
// the binding (python/src/distributed.cpp) maps the finer kind to ember.distributed's classes.
// It lives here rather than in core/error.h's ErrorKind so that only the distributed sources
// see it. Measured against torch 2.13's gloo backend: a collective whose peer was killed or timed
// out raises a plain RuntimeError there, so ember's collectives keep ErrorKind::Runtime.
enum class DistErrorKind { Backend, Store, Network };

/// A distributed error: a RuntimeError whose Python class is DistBackendError, DistStoreError
/// or DistNetworkError.
class DistError : public Error {
 public:
  DistError(DistErrorKind kind, const std::string& msg)
      : Error(ErrorKind::Runtime, msg), dist_kind_(kind) {}
  DistErrorKind dist_kind() const { return dist_kind_; }

 private:
  DistErrorKind dist_kind_;
};

}  // namespace ember::distributed

/// `EMBER_DIST_ERROR(Store, "wait timeout after ", ms, "ms")` throws a DistStoreError.
#define EMBER_DIST_ERROR(kind, ...)                                                \
  throw ::ember::distributed::DistError(::ember::distributed::DistErrorKind::kind, \
                                        ::ember::detail::str_cat(__VA_ARGS__))
