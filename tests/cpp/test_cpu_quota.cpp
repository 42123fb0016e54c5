// The default thread count's sources (Note [Thread count]): cgroup v1 and v2 CPU quotas read from
// fake trees (nested cgroups, container mounts, no quota, garbage files) and the thread-count
// environment variables parsed as torch parses OMP_NUM_THREADS.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "ember/core/cpu_quota.h"

namespace fs = std::filesystem;
using ember::cpu_quota::cgroup_cpu_limit;
using ember::cpu_quota::parse_thread_env;

namespace {

// A scratch root with /proc/self and cgroup directories written by the test.
class FakeRoot {
 public:
  FakeRoot() {
    static int counter = 0;
    dir_ = fs::temp_directory_path() /
           ("ember_cpu_quota_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "proc/self");
  }
  ~FakeRoot() { fs::remove_all(dir_); }
  FakeRoot(const FakeRoot&) = delete;
  FakeRoot& operator=(const FakeRoot&) = delete;

  void write(const std::string& rel, const std::string& text) {
    fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string root() const { return dir_.string(); }

 private:
  fs::path dir_;
};

const char* kV1Mounts =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup "
    "rw,cpu,cpuacct\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "34 31 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "35 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

const char* kV2Mounts =
    "25 30 0:23 / /proc rw,nosuid - proc proc rw\n"
    "26 30 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate\n";

}  // namespace

TEST(CpuQuota, V1QuotaOnTheProcessCgroup) {
  FakeRoot r;
  r.write("proc/self/cgroup", "4:memory:/job\n3:cpu,cpuacct:/job\n2:cpuset:/\n0::/\n");
  r.write("proc/self/mountinfo", kV1Mounts);
  r.write("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "150000\n");
  r.write("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
  r.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  r.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(r.root()), 1.5);
}

TEST(CpuQuota, V1NoQuota) {
  FakeRoot r;
  r.write("proc/self/cgroup", "3:cpu,cpuacct:/job\n0::/\n");
  r.write("proc/self/mountinfo", kV1Mounts);
  r.write("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "-1\n");
  r.write("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(cgroup_cpu_limit(r.root()), 0.0);
}

TEST(CpuQuota, V2QuotaAndMax) {
  FakeRoot r;
  r.write("proc/self/cgroup", "0::/user.slice/job.scope\n");
  r.write("proc/self/mountinfo", kV2Mounts);
  r.write("sys/fs/cgroup/user.slice/job.scope/cpu.max", "300000 100000\n");
  r.write("sys/fs/cgroup/user.slice/cpu.max", "max 100000\n");
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(r.root()), 3.0);
  r.write("sys/fs/cgroup/user.slice/job.scope/cpu.max", "max 100000\n");
  EXPECT_EQ(cgroup_cpu_limit(r.root()), 0.0);
}

TEST(CpuQuota, NestedTakesTheSmallestOnThePath) {
  FakeRoot r;
  r.write("proc/self/cgroup", "0::/a/b/c\n");
  r.write("proc/self/mountinfo", kV2Mounts);
  r.write("sys/fs/cgroup/a/cpu.max", "50000 100000\n");  // half a CPU at the top
  r.write("sys/fs/cgroup/a/b/cpu.max", "max 100000\n");
  r.write("sys/fs/cgroup/a/b/c/cpu.max", "400000 100000\n");
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(r.root()), 0.5);
  // v1 the same way: the parent's quota bounds the child's.
  FakeRoot v1;
  v1.write("proc/self/cgroup", "3:cpu,cpuacct:/kube/pod/ctr\n");
  v1.write("proc/self/mountinfo", kV1Mounts);
  v1.write("sys/fs/cgroup/cpu,cpuacct/kube/pod/cpu.cfs_quota_us", "200000");
  v1.write("sys/fs/cgroup/cpu,cpuacct/kube/pod/cpu.cfs_period_us", "100000");
  v1.write("sys/fs/cgroup/cpu,cpuacct/kube/pod/ctr/cpu.cfs_quota_us", "600000");
  v1.write("sys/fs/cgroup/cpu,cpuacct/kube/pod/ctr/cpu.cfs_period_us", "100000");
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(v1.root()), 2.0);
}

TEST(CpuQuota, ContainerMountRootIsTheCgroup) {
  // In a container the hierarchy's root is mounted at the container's own cgroup.
  FakeRoot r;
  r.write("proc/self/cgroup", "0::/docker/abc\n");
  r.write("proc/self/mountinfo",
          "26 30 0:24 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw\n");
  r.write("sys/fs/cgroup/cpu.max", "200000 100000\n");
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(r.root()), 2.0);
  // A cgroup namespace shows "/" in /proc/self/cgroup: the mount point itself.
  r.write("proc/self/cgroup", "0::/\n");
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(r.root()), 2.0);
}

TEST(CpuQuota, HybridV1AndV2TakeTheSmaller) {
  FakeRoot r;
  r.write("proc/self/cgroup", "3:cpu,cpuacct:/job\n0::/job\n");
  r.write("proc/self/mountinfo", kV1Mounts);
  r.write("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "250000");
  r.write("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us", "100000");
  r.write("sys/fs/cgroup/unified/job/cpu.max", "100000 100000");
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(r.root()), 1.0);
}

TEST(CpuQuota, GarbageAndMissingFilesAreIgnored) {
  FakeRoot r;
  r.write("proc/self/cgroup", "garbage\n0::/a/b\n::\n");
  r.write("proc/self/mountinfo", std::string("nonsense line\n") + kV2Mounts);
  r.write("sys/fs/cgroup/a/b/cpu.max", "lots 100000\n");
  r.write("sys/fs/cgroup/a/cpu.max", "100000 0\n");
  r.write("sys/fs/cgroup/cpu.max", "\n");
  EXPECT_EQ(cgroup_cpu_limit(r.root()), 0.0);
  r.write("sys/fs/cgroup/a/cpu.max", "150000 100000\n");  // one good level still counts
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(r.root()), 1.5);
  FakeRoot v1;
  v1.write("proc/self/cgroup", "3:cpu:/job\n");
  v1.write("proc/self/mountinfo", kV1Mounts);
  v1.write("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "12x");
  v1.write("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us", "100000");
  EXPECT_EQ(cgroup_cpu_limit(v1.root()), 0.0);
  FakeRoot empty;  // no /proc files, no cgroup directories
  EXPECT_EQ(cgroup_cpu_limit(empty.root()), 0.0);
}

TEST(CpuQuota, NoMountinfoFallsBackToTheUsualMountPoint) {
  FakeRoot r;
  r.write("sys/fs/cgroup/cpu.max", "100000 100000\n");
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(r.root()), 1.0);
}

TEST(CpuQuota, ThreadEnvParsedAsTorchDoes) {
  // The values real torch 2.13 accepts (OMP_NUM_THREADS through libgomp) and those it ignores.
  EXPECT_EQ(parse_thread_env(nullptr), 0);
  EXPECT_EQ(parse_thread_env(""), 0);
  EXPECT_EQ(parse_thread_env("3"), 3);
  EXPECT_EQ(parse_thread_env(" 5 "), 5);
  EXPECT_EQ(parse_thread_env("+2"), 2);
  EXPECT_EQ(parse_thread_env("01"), 1);
  EXPECT_EQ(parse_thread_env("2,1"), 2);
  EXPECT_EQ(parse_thread_env("4, 3 ,2"), 4);
  EXPECT_EQ(parse_thread_env("4abc"), 0);
  EXPECT_EQ(parse_thread_env("1.5"), 0);
  EXPECT_EQ(parse_thread_env("1,"), 0);
  EXPECT_EQ(parse_thread_env("1 2"), 0);
  EXPECT_EQ(parse_thread_env("abc"), 0);
  EXPECT_EQ(parse_thread_env("0"), 0);
  EXPECT_EQ(parse_thread_env("2,0"), 0);
  EXPECT_EQ(parse_thread_env("-1"), 0);
  EXPECT_EQ(parse_thread_env("99999999999999"), 0);
}
