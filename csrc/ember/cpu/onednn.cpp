// Note [oneDNN bf16]
// bfloat16 matrix products and convolutions go to oneDNN (Debian's libdnnl 2.6), which picks
// the best kernel for the CPU at run time: AMX tiles, AVX512-BF16 dot products, or an AVX-512
// emulation; without AVX-512, or in a build without oneDNN (EMBER_HAVE_DNNL undefined), these
// return false and the callers' float32-accumulating loops run. Accumulation is float32 in every
// case. Measured on this machine's AVX512-BF16 cores (no AMX), 2 threads: oneDNN's bf16 matmul
// ran 256x2048x1024 at ~420 GFLOP/s, torch 2.13's bf16 mm (also oneDNN) ~405, ember's float32
// sgemm ~180 (docs/ARCHITECTURE.md). Primitives are created per call; oneDNN's own primitive
// cache makes a repeated shape cheap.
#include "ember/cpu/onednn.h"

#include <unordered_map>

#ifdef EMBER_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

#include "ember/cpu/isa.h"

namespace ember::cpu::onednn {

#ifdef EMBER_HAVE_DNNL
namespace {
using dnnl::memory;
using dt = memory::data_type;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}
thread_local dnnl::stream* t_stream = nullptr;
dnnl::stream& stream() {
  if (!t_stream) t_stream = new dnnl::stream(engine());  // one per thread, kept for its life
  return *t_stream;
}
memory::dims dims_of(const Tensor& t) { return memory::dims(t.sizes().begin(), t.sizes().end()); }
memory::dims strides_of(const Tensor& t) {
  return memory::dims(t.strides().begin(), t.strides().end());
}
void* ptr(const Tensor& t) { return t.data_ptr(); }
}  // namespace

bool bf16_available() {
  static const bool ok = kBestIsa == Isa::avx512;
  return ok;
}

bool gemm_bf16(const Tensor& out, const Tensor& a_in, const Tensor& b_in, float beta, float alpha) {
  if (!bf16_available()) return false;
  try {
    Tensor a = a_in, b = b_in;
    const int64_t B = out.size(0);
    // oneDNN broadcasts a batch of 1 but takes no zero batch stride over several batches, and
    // wants one of the two matrix strides to be unit.
    auto fix = [&](Tensor& t) {
      bool plain = t.stride(2) == 1 || t.stride(1) == 1;
      if ((B > 1 && t.size(0) > 1 && t.stride(0) == 0) || !plain) t = t.contiguous();
    };
    fix(a);
    fix(b);
    // A single product goes in as 2-d: a batch of one with stride 0 is not a layout oneDNN's
    // fast kernels take (it picks its reference kernel, ~1000x slower).
    auto md = [&](const Tensor& t) {
      if (B == 1 && t.size(0) == 1)
        return memory::desc({t.size(1), t.size(2)}, dt::bf16, {t.stride(1), t.stride(2)});
      memory::dims st = strides_of(t);
      if (t.size(0) == 1) st[0] = t.size(1) * t.size(2);
      return memory::desc(dims_of(t), dt::bf16, st);
    };
    memory::desc ad = md(a), bd = md(b), cd = md(out);
    dnnl::primitive_attr attr;
    if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
    if (beta != 0.0f) {
      dnnl::post_ops po;
      po.append_sum(beta);
      attr.set_post_ops(po);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(ad, bd, cd), attr, engine());
    dnnl::matmul prim(pd);
    memory am(ad, engine(), ptr(a)), bm(bd, engine(), ptr(b)), cm(cd, engine(), ptr(out));
    prim.execute(stream(), {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    stream().wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

namespace {
using tag = memory::format_tag;

// A convolution's descriptors: the user's plain layouts and the "any" layouts oneDNN chooses.
struct ConvGeom {
  memory::dims src, wei, dst, stride, dil, pad;
  tag w_tag;
  ConvGeom(const Tensor& x, const Tensor& w, const Tensor& y, IntArrayRef st, IntArrayRef padding,
           IntArrayRef dilation, int64_t groups)
      : src(dims_of(x)),
        wei(dims_of(w)),
        dst(dims_of(y)),
        stride{st[0], st[1]},
        dil{dilation[0] - 1, dilation[1] - 1},
        pad{padding[0], padding[1]},
        w_tag(tag::oihw) {
    if (groups > 1) {
      wei = {groups, w.size(0) / groups, w.size(1), w.size(2), w.size(3)};
      w_tag = tag::goihw;
    }
  }
  memory::desc any(const memory::dims& d) const { return {d, dt::bf16, tag::any}; }
  memory user_src(const Tensor& t) const { return {{src, dt::bf16, tag::nchw}, engine(), ptr(t)}; }
  memory user_wei(const Tensor& t) const { return {{wei, dt::bf16, w_tag}, engine(), ptr(t)}; }
  memory user_dst(const Tensor& t) const { return {{dst, dt::bf16, tag::nchw}, engine(), ptr(t)}; }
  dnnl::convolution_forward::primitive_desc forward(dnnl::prop_kind kind,
                                                    const memory::desc& bias) const {
    dnnl::convolution_forward::desc d(kind, dnnl::algorithm::convolution_direct, any(src), any(wei),
                                      bias, any(dst), stride, dil, pad, pad);
    return {d, engine()};
  }
};

// `user` in the layout a primitive wants: itself, or a reordered copy.
memory as_wanted(const memory& user, const memory::desc& want) {
  if (want == user.get_desc()) return user;
  memory m(want, engine());
  dnnl::reorder(user, m).execute(stream(), const_cast<memory&>(user), m);
  return m;
}
// Runs `prim` writing into `user` through a scratch layout when the primitive wants another.
template <class Run>
void into_user(const memory& user, const memory::desc& want, Run&& run) {
  if (want == user.get_desc()) return run(user);
  memory m(want, engine());
  run(m);
  dnnl::reorder(m, user).execute(stream(), m, const_cast<memory&>(user));
}
}  // namespace

bool conv2d_bf16(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                 const Tensor& y, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                 int64_t groups) {
  if (!bf16_available()) return false;
  try {
    ConvGeom g(x, w, y, stride, padding, dilation, groups);
    memory::desc b_md;
    if (bias) b_md = memory::desc({w.size(0)}, dt::bf16, tag::a);
    auto pd = g.forward(dnnl::prop_kind::forward_inference, b_md);
    memory src = as_wanted(g.user_src(x), pd.src_desc());
    memory wei = as_wanted(g.user_wei(w), pd.weights_desc());
    into_user(g.user_dst(y), pd.dst_desc(), [&](const memory& dst) {
      std::unordered_map<int, memory> args = {
          {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
      if (bias) args.emplace(DNNL_ARG_BIAS, memory(b_md, engine(), ptr(*bias)));
      dnnl::convolution_forward(pd).execute(stream(), args);
    });
    stream().wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

#else
bool bf16_available() { return false; }
bool gemm_bf16(const Tensor&, const Tensor&, const Tensor&, float, float) { return false; }
bool conv2d_bf16(const Tensor&, const Tensor&, const std::optional<Tensor>&, const Tensor&,
                 IntArrayRef, IntArrayRef, IntArrayRef, int64_t) {
  return false;
}
#endif

}  // namespace ember::cpu::onednn
