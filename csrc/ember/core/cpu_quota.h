#pragma once
// The default intra-op thread count: OMP_NUM_THREADS / MKL_NUM_THREADS as torch reads them, else
// the CPUs this process may use (affinity mask, cgroup v1 or v2 CPU quota). Note [Thread count].
#include <string>

namespace ember::cpu_quota {

/// CPUs allowed by the cgroup CPU quotas of this process, read under `root` ("" for the real
/// filesystem; tests pass a fake tree): the smallest quota / period over the process's cgroup and
/// its ancestors, in every v1 `cpu` and v2 hierarchy that /proc/self/cgroup and
/// /proc/self/mountinfo name. 0 when there is no quota (or nothing readable).
double cgroup_cpu_limit(const std::string& root);

/// A thread-count variable read as torch's OpenMP runtime reads OMP_NUM_THREADS: a positive
/// integer or a comma list of them (the first counts); 0 when unset or invalid (then ignored).
int parse_thread_env(const char* value);

/// The default thread count from OMP_NUM_THREADS / MKL_NUM_THREADS (a positive value wins, capped
/// at the machine's CPU count), else the affinity mask capped by the cgroup quota (rounded up).
int default_num_threads();

}  // namespace ember::cpu_quota
