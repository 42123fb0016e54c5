"""Marks for tests whose reference holds on one CPU tier only: torch's int8 kernels sum exactly
only with AVX512-VNNI, and ember's oneDNN float32 convolution routes run only on AVX-512. Each
mark says why; the tests run wherever the tier holds."""

import pytest

import ember


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


_AVX512 = ember.backends.cpu.get_cpu_capability() == "AVX512"

# Without VNNI, torch's fbgemm and oneDNN int8 kernels add u8 x s8 pairs in saturating int16
# (vpmaddubsw): their sums differ from the exact ones ember computes wherever a pair overflows.
torch_int8_exact = pytest.mark.skipif(
    not (_AVX512 and "avx512_vnni" in _cpu_flags()),
    reason="torch's int8 kernels saturate int16 pair sums on CPUs without AVX512-VNNI",
)

# Below AVX-512 convolution takes ember's own kernels instead of oneDNN (other profiler rows).
avx512_tier = pytest.mark.skipif(
    not _AVX512, reason="ember's oneDNN convolution routes run on AVX-512 CPUs only"
)
