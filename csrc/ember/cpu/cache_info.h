#pragma once
// The L2 cache of one core, for kernels that block their operands to fit it.
#include <cstdint>

namespace ember::cpu {

/// Bytes of L2 per core, read once: EMBER_L2_CACHE_BYTES when set to a positive number (to run
/// another CPU's blocking, as tests do, or where a hypervisor's cpuid misreports it), else what
/// cpuid reports (Intel's leaf 4, AMD's 0x8000001D), else 512 KB, the smallest L2 of the CPUs
/// ember has been measured on.
int64_t l2_cache_bytes();

}  // namespace ember::cpu
