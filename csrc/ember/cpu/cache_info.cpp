#include "ember/cpu/cache_info.h"

#include <cstdlib>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

namespace ember::cpu {

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
// The unified (or data) level-2 cache a deterministic-cache-parameters leaf lists (Intel's 4 and
// AMD's 0x8000001D share the layout), 0 when it lists none.
int64_t l2_from_leaf(unsigned leaf) {
  if (__get_cpuid_max(leaf & 0x80000000u, nullptr) < leaf) return 0;
  for (unsigned i = 0; i < 16; ++i) {
    unsigned a, b, c, d;
    __cpuid_count(leaf, i, a, b, c, d);
    const unsigned type = a & 31u, level = (a >> 5) & 7u;
    if (type == 0) break;         // no more caches
    if (level == 2 && type != 2)  // 2 is an instruction cache
      return int64_t((b >> 22) + 1) * (((b >> 12) & 1023u) + 1) * ((b & 4095u) + 1) *
             (int64_t(c) + 1);  // ways x partitions x line size x sets
  }
  return 0;
}
#endif

int64_t detect() {
  if (const char* e = std::getenv("EMBER_L2_CACHE_BYTES")) {
    const long long v = std::atoll(e);
    if (v > 0) return v;
  }
  int64_t l2 = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  l2 = l2_from_leaf(4);  // lists nothing on AMD
  if (l2 == 0) l2 = l2_from_leaf(0x8000001Du);
#endif
  return l2 > 0 ? l2 : int64_t(512) << 10;
}

}  // namespace

int64_t l2_cache_bytes() {
  static const int64_t bytes = detect();
  return bytes;
}

}  // namespace ember::cpu
