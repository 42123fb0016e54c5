#include "ember/core/error.h"

namespace ember::detail {

void throw_error(ErrorKind kind, const std::string& msg) { throw Error(kind, msg); }

void assert_fail(const char* cond, const char* file, int line) {
  throw Error(ErrorKind::Runtime, str_cat("internal assert failed: ", cond, " at ", file, ":", line,
                                          "; please report a bug to ember"));
}

}  // namespace ember::detail
