#include "ember/core/cpu_quota.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace ember::cpu_quota {

// Note [Thread count]
// The pool's default size, as torch and the container-aware runtimes (JVM, Go) choose it:
// - OMP_NUM_THREADS, and MKL_NUM_THREADS over it (torch's intraop_default_num_threads order).
//   torch's x86 build (OpenMP + MKL) takes the OpenMP runtime's reading, measured with torch
//   2.13 on this machine: a positive integer, or a comma list whose first entry counts, blanks
//   around entries allowed ("2", " 2 ", "+2", "2,1"); anything else ("4abc", "1.5", "0", "-1",
//   "1,", "1 2") is ignored with libgomp's warning and the default applies. A valid value wins
//   over affinity and quota (taskset -c 0 with OMP_NUM_THREADS=2 gives 2), but MKL caps it at the
//   machine's cores (OMP_NUM_THREADS=8 gives 2 on this 2-core machine): ember caps it at the
//   machine's online CPUs. (MKL reads MKL_NUM_THREADS its own way, "abc" as 1; ember ignores an
//   invalid value there too.)
// - Otherwise the affinity mask (sched_getaffinity: taskset, cpusets), capped by the CPU quota:
//   for each cgroup hierarchy that carries the cpu controller (v1: cpu.cfs_quota_us /
//   cpu.cfs_period_us, -1 = none; v2: cpu.max "QUOTA PERIOD", "max" = none), the process's cgroup
//   is found through /proc/self/cgroup, its directory through the hierarchy's mount in
//   /proc/self/mountinfo, and every ancestor up to the mount is read: a parent's quota bounds its
//   children, so the smallest quota / period on the path counts. The limit rounds up (a quota of
//   1.5 CPUs gives 2 threads), as the JVM and Go do. Unreadable or malformed files are skipped.
// Everything is read under a root directory so that tests run it on fake trees.

namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (f) std::getline(f, line);
  return line;
}

// A whole non-negative or -1 integer in `s` (surrounding blanks allowed); false otherwise.
bool parse_int(std::string_view s, long long& out) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty() || s.size() > 18) return false;
  bool neg = s.front() == '-';
  if (neg) s.remove_prefix(1);
  if (s.empty()) return false;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = neg ? -v : v;
  return true;
}

// CPUs one cgroup directory allows (quota / period), or 0 when it sets no quota.
double dir_limit(const std::string& dir, bool v2) {
  long long quota = 0, period = 0;
  if (v2) {
    std::istringstream in(read_first_line(dir + "/cpu.max"));
    std::string q, p;
    if (!(in >> q >> p) || q == "max") return 0;
    if (!parse_int(q, quota) || !parse_int(p, period)) return 0;
  } else {
    if (!parse_int(read_first_line(dir + "/cpu.cfs_quota_us"), quota)) return 0;
    if (!parse_int(read_first_line(dir + "/cpu.cfs_period_us"), period)) return 0;
  }
  if (quota <= 0 || period <= 0) return 0;  // -1: no quota; 0 or garbage: ignored
  return double(quota) / double(period);
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t end = s.find(sep, start);
    out.emplace_back(s.substr(start, end == std::string_view::npos ? s.npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// mountinfo escapes blanks in paths as octal (\040).
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      out += char((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Mount {
  std::string root;   // the cgroup path mounted there ("/" outside containers)
  std::string point;  // where it is mounted
  bool v2;
};

std::vector<Mount> cgroup_mounts(const std::string& root) {
  std::vector<Mount> mounts;
  std::ifstream f(root + "/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    // ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
    std::istringstream in(line);
    std::vector<std::string> fields;
    for (std::string w; in >> w;) fields.push_back(w);
    auto dash = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 5 || dash == fields.end() || fields.end() - dash < 2) continue;
    const std::string& type = *(dash + 1);
    bool v2 = type == "cgroup2";
    if (!v2) {
      if (type != "cgroup" || fields.end() - dash < 4) continue;
      auto opts = split(*(dash + 3), ',');
      if (std::find(opts.begin(), opts.end(), "cpu") == opts.end()) continue;
    }
    mounts.push_back({unescape(fields[3]), unescape(fields[4]), v2});
  }
  return mounts;
}

// The smallest limit from `leaf` (a directory under `top`) up to `top`, or 0 when none.
double path_limit(const std::string& top, const std::string& rel, bool v2) {
  double best = 0;
  std::string path = rel;  // "/a/b" or ""
  for (;;) {
    double l = dir_limit(top + path, v2);
    if (l > 0 && (best == 0 || l < best)) best = l;
    if (path.empty()) return best;
    size_t slash = path.rfind('/');
    path = path.substr(0, slash == std::string::npos ? 0 : slash);
  }
}

// Removes trailing slashes but keeps "" for the root.
std::string trim_slashes(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

double cgroup_cpu_limit(const std::string& root) {
  // hierarchy-ID:controllers:path; v2 is "0::/path", v1 lists its controllers ("cpu,cpuacct").
  std::string v2_path;
  std::string v1_path;
  bool have_v2 = false, have_v1 = false;
  {
    std::ifstream f(root + "/proc/self/cgroup");
    std::string line;
    while (std::getline(f, line)) {
      size_t a = line.find(':'), b = a == line.npos ? a : line.find(':', a + 1);
      if (b == line.npos) continue;
      std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
      if (line.compare(0, a, "0") == 0 && controllers.empty()) {
        v2_path = path;
        have_v2 = true;
      } else {
        auto list = split(controllers, ',');
        if (std::find(list.begin(), list.end(), "cpu") != list.end()) {
          v1_path = path;
          have_v1 = true;
        }
      }
    }
  }
  std::vector<Mount> mounts = cgroup_mounts(root);
  double best = 0;
  auto take = [&](double l) {
    if (l > 0 && (best == 0 || l < best)) best = l;
  };
  bool found_mount = false;
  for (const Mount& m : mounts) {
    if (m.v2 ? !have_v2 : !have_v1) continue;
    found_mount = true;
    std::string cg = trim_slashes(m.v2 ? v2_path : v1_path);
    std::string mroot = trim_slashes(m.root);
    // Inside a container the mount's root is the container's cgroup: the process path is below
    // it (or equal). A path outside the mount (another namespace's view) reads the mount only.
    std::string rel;
    if (mroot.empty()) {
      rel = cg;
    } else if (cg == mroot) {
      rel = "";
    } else if (cg.compare(0, mroot.size() + 1, mroot + "/") == 0) {
      rel = cg.substr(mroot.size());
    }
    take(path_limit(root + trim_slashes(m.point), rel, m.v2));
  }
  if (!found_mount) {
    // No usable /proc (or no cgroup mounts listed): the usual mount points.
    take(dir_limit(root + "/sys/fs/cgroup", true));
    take(dir_limit(root + "/sys/fs/cgroup/cpu", false));
    take(dir_limit(root + "/sys/fs/cgroup/cpu,cpuacct", false));
  }
  return best;
}

int parse_thread_env(const char* value) {
  if (value == nullptr) return 0;
  // OpenMP's list syntax as libgomp reads it: positive integers separated by commas, blanks
  // around each; the first entry is the top level's thread count.
  const char* p = value;
  int first = 0;
  for (bool head = true;; head = false) {
    while (std::isspace(static_cast<unsigned char>(*p))) ++p;
    if (*p == '+') ++p;
    if (!std::isdigit(static_cast<unsigned char>(*p))) return 0;
    long long v = 0;
    for (; std::isdigit(static_cast<unsigned char>(*p)); ++p) {
      v = v * 10 + (*p - '0');
      if (v > 1'000'000'000LL) return 0;
    }
    if (v <= 0) return 0;
    if (head) first = int(v);
    while (std::isspace(static_cast<unsigned char>(*p))) ++p;
    if (*p == '\0') return first;
    if (*p++ != ',') return 0;
  }
}

int default_num_threads() {
  // Online CPUs of the machine (not of the affinity mask): MKL's cap in torch.
  const int machine = int(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  int env = parse_thread_env(std::getenv("OMP_NUM_THREADS"));
  if (int mkl = parse_thread_env(std::getenv("MKL_NUM_THREADS"))) env = mkl;
  if (env > 0) return std::min(env, machine);
  int n = machine;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = std::max(1, CPU_COUNT(&set));
  double quota = cgroup_cpu_limit("");
  if (quota > 0) n = std::min(n, std::max(1, int(std::ceil(quota - 1e-9))));
  return n;
}

}  // namespace ember::cpu_quota
