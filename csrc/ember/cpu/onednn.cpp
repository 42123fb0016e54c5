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

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#ifdef EMBER_HAVE_DNNL
#include <dlfcn.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

#include "ember/core/parallel.h"
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
// Note [oneDNN threads]
// Debian's oneDNN runs on libgomp, whose thread count is per calling thread (omp_set_num_threads)
// and read when a primitive is created (oneDNN keys its own cache on it). Callers set it for each
// call: ember's thread count for the bf16 products, 1 for the float32 convolution chunks, which
// run on ember's pool (Note [oneDNN float32 convolution]). libgomp is already loaded as oneDNN's
// dependency; it is looked up there, so ember does not link OpenMP itself.
void use_threads(int n) {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
  using SetThreads = void (*)(int);
  static const SetThreads set = [] {
    void* lib = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
    return lib ? reinterpret_cast<SetThreads>(dlsym(lib, "omp_set_num_threads")) : nullptr;
  }();
  thread_local int current = -1;
  if (set && current != n) {
    set(n);
    current = n;
  }
#else
  (void)n;
#endif
}
int pool_threads() { return in_parallel_region() ? 1 : get_num_threads(); }
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
  use_threads(pool_threads());
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

// A convolution's descriptors (1 to 3 spatial dims): the user's plain layouts and the "any"
// layouts oneDNN chooses.
struct ConvGeom {
  dt type;
  memory::dims src, wei, dst, stride, dil, pad;
  tag act_tag, w_tag;
  ConvGeom(dt type, const Tensor& x, const Tensor& w, const Tensor& y, IntArrayRef st,
           IntArrayRef padding, IntArrayRef dilation, int64_t groups)
      : type(type), src(dims_of(x)), wei(dims_of(w)), dst(dims_of(y)) {
    const size_t nd = src.size() - 2;
    for (size_t d = 0; d < nd; ++d) {
      stride.push_back(st[d]);
      dil.push_back(dilation[d] - 1);
      pad.push_back(padding[d]);
    }
    static const tag acts[] = {tag::ncw, tag::nchw, tag::ncdhw};
    static const tag weis[] = {tag::oiw, tag::oihw, tag::oidhw};
    static const tag gweis[] = {tag::goiw, tag::goihw, tag::goidhw};
    act_tag = acts[nd - 1];
    w_tag = weis[nd - 1];
    if (groups > 1) {
      wei.insert(wei.begin(), groups);
      wei[1] /= groups;
      w_tag = gweis[nd - 1];
    }
  }
  memory::desc any(const memory::dims& d) const { return {d, type, tag::any}; }
  memory::desc src_md() const { return {src, type, act_tag}; }
  memory::desc wei_md() const { return {wei, type, w_tag}; }
  memory::desc dst_md() const { return {dst, type, act_tag}; }
  memory user_src(const Tensor& t) const { return {src_md(), engine(), ptr(t)}; }
  memory user_wei(const Tensor& t) const { return {wei_md(), engine(), ptr(t)}; }
  memory user_dst(const Tensor& t) const { return {dst_md(), engine(), ptr(t)}; }
  dnnl::convolution_forward::desc forward_desc(dnnl::prop_kind kind,
                                               const memory::desc& bias) const {
    return {kind,     dnnl::algorithm::convolution_direct,
            any(src), any(wei),
            bias,     any(dst),
            stride,   dil,
            pad,      pad};
  }
  dnnl::convolution_forward::primitive_desc forward(dnnl::prop_kind kind,
                                                    const memory::desc& bias) const {
    return {forward_desc(kind, bias), engine()};
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
  use_threads(pool_threads());
  try {
    ConvGeom g(dt::bf16, x, w, y, stride, padding, dilation, groups);
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

// Note [oneDNN float32 convolution]
// A float32 convolution pass (forward, input gradient, weight gradient) on one chunk of samples,
// on the calling thread: conv.cpp runs chunks that depend only on the shapes on ember's pool and
// sums weight gradients over chunks in order, so results are the same at any thread count
// (oneDNN's own threading splits its reductions by thread count). A plan (the primitive and the
// reorders between the user's plain layouts and the blocked ones oneDNN picks) is made once per
// shape and pass and kept; a plan holds no data pointers.
namespace {
struct ConvPlan {
  bool usable = true;  // false: oneDNN has only a fallback implementation for this shape
  dnnl::primitive prim;
  memory::desc want[3];                    // src, weights, dst as prim takes them
  int arg[3];                              // their DNNL_ARG_* in this pass
  int out;                                 // the operand this pass writes
  std::optional<dnnl::reorder> order[3];   // user -> want (inputs), want -> user (the output)
  memory::desc scratch, order_scratch[3];  // their scratchpads, which each call allocates
};

// oneDNN's own direct kernels (jit, brgemm): its fallbacks, an im2col + GEMM ("gemm:jit") and
// the reference loops ("ref"), are no faster than ember's kernels, and the im2col one crashed in
// oneDNN 2.6.3's weight gradient at a few channels per group (8 -> 8 dilated, 4 per group).
bool direct(const std::string& impl) {
  return impl.find("ref") == std::string::npos &&
         (impl.find("gemm") == std::string::npos || impl.find("brg") != std::string::npos);
}

std::shared_ptr<const ConvPlan> make_plan(ConvPass pass, const ConvGeom& g, bool bias) {
  using dnnl::prop_kind;
  auto plan = std::make_shared<ConvPlan>();
  auto unusable = [&] {
    plan->usable = false;
    return plan;
  };
  const memory::desc b_md = bias ? memory::desc({g.dst[1]}, g.type, tag::a) : memory::desc();
  // Scratchpads are the caller's, so that chunks on several threads never share oneDNN's.
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::convolution_forward::primitive_desc fwd(
      g.forward_desc(
          pass == ConvPass::forward ? prop_kind::forward_inference : prop_kind::forward_training,
          b_md),
      attr, engine());
  if (pass == ConvPass::forward) {
    if (!direct(fwd.impl_info_str())) return unusable();
    plan->prim = dnnl::convolution_forward(fwd);
    plan->scratch = fwd.scratchpad_desc();
    plan->want[0] = fwd.src_desc();
    plan->want[1] = fwd.weights_desc();
    plan->want[2] = fwd.dst_desc();
    plan->arg[0] = DNNL_ARG_SRC, plan->arg[1] = DNNL_ARG_WEIGHTS, plan->arg[2] = DNNL_ARG_DST;
    plan->out = 2;
  } else if (pass == ConvPass::input_grad) {
    dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, g.any(g.src),
                                            g.any(g.wei), g.any(g.dst), g.stride, g.dil, g.pad,
                                            g.pad);
    dnnl::convolution_backward_data::primitive_desc pd(d, attr, engine(), fwd);
    if (!direct(pd.impl_info_str())) return unusable();
    plan->prim = dnnl::convolution_backward_data(pd);
    plan->scratch = pd.scratchpad_desc();
    plan->want[0] = pd.diff_src_desc();
    plan->want[1] = pd.weights_desc();
    plan->want[2] = pd.diff_dst_desc();
    plan->arg[0] = DNNL_ARG_DIFF_SRC, plan->arg[1] = DNNL_ARG_WEIGHTS;
    plan->arg[2] = DNNL_ARG_DIFF_DST;
    plan->out = 0;
  } else {
    dnnl::convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct, g.any(g.src),
                                               g.any(g.wei), g.any(g.dst), g.stride, g.dil, g.pad,
                                               g.pad);
    dnnl::convolution_backward_weights::primitive_desc pd(d, attr, engine(), fwd);
    if (!direct(pd.impl_info_str())) return unusable();
    plan->prim = dnnl::convolution_backward_weights(pd);
    plan->scratch = pd.scratchpad_desc();
    plan->want[0] = pd.src_desc();
    plan->want[1] = pd.diff_weights_desc();
    plan->want[2] = pd.diff_dst_desc();
    plan->arg[0] = DNNL_ARG_SRC, plan->arg[1] = DNNL_ARG_DIFF_WEIGHTS;
    plan->arg[2] = DNNL_ARG_DIFF_DST;
    plan->out = 1;
  }
  const memory::desc user[3] = {g.src_md(), g.wei_md(), g.dst_md()};
  for (int i = 0; i < 3; ++i) {
    if (plan->want[i] == user[i]) continue;
    const bool in = i != plan->out;
    auto rpd = in ? dnnl::reorder::primitive_desc(engine(), user[i], engine(), plan->want[i], attr)
                  : dnnl::reorder::primitive_desc(engine(), plan->want[i], engine(), user[i], attr);
    plan->order[i] = dnnl::reorder(rpd);
    plan->order_scratch[i] = rpd.scratchpad_desc();
  }
  return plan;
}

std::shared_ptr<const ConvPlan> plan_for(ConvPass pass, const ConvGeom& g, bool bias) {
  std::vector<int64_t> key = {int64_t(pass), bias};
  for (const auto* v : {&g.src, &g.wei, &g.dst, &g.stride, &g.dil, &g.pad}) {
    key.push_back(int64_t(v->size()));
    key.insert(key.end(), v->begin(), v->end());
  }
  static std::mutex mu;
  static std::map<std::vector<int64_t>, std::shared_ptr<const ConvPlan>> plans;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
  }
  auto plan = make_plan(pass, g, bias);  // outside the lock: creation takes a while
  std::lock_guard<std::mutex> lock(mu);
  if (plans.size() >= 512) plans.clear();  // a bound on shapes seen; plans are cheap to remake
  return plans.emplace(std::move(key), std::move(plan)).first->second;
}
}  // namespace

bool conv_available() {
  static const bool ok = kBestIsa == Isa::avx512;
  return ok;
}

namespace {
// A weight in the layout a plan wants (conv_f32_weight): the chunks of one forward or input
// gradient all used to reorder the same weight, 8 times per call at batch 8 (2.4 MB each for
// 3x3 256 -> 256).
struct PreparedWeight {
  memory::desc desc;
  memory mem;
};
}  // namespace

std::shared_ptr<const void> conv_f32_weight(ConvPass pass, const Tensor& x, const Tensor& w,
                                            const Tensor& y, bool bias, IntArrayRef stride,
                                            IntArrayRef padding, IntArrayRef dilation,
                                            int64_t groups) {
  if (!conv_available() || pass == ConvPass::weight_grad) return nullptr;
  use_threads(1);
  try {
    ConvGeom g(dt::f32, x, w, y, stride, padding, dilation, groups);
    auto plan = plan_for(pass, g, bias);
    if (!plan->usable || !plan->order[1]) return nullptr;
    auto p = std::make_shared<PreparedWeight>();
    p->desc = plan->want[1];
    p->mem = memory(plan->want[1], engine());
    dnnl::stream& s = stream();
    plan->order[1]->execute(s, {{DNNL_ARG_FROM, g.user_wei(w)},
                                {DNNL_ARG_TO, p->mem},
                                {DNNL_ARG_SCRATCHPAD, memory(plan->order_scratch[1], engine())}});
    s.wait();
    return p;
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

bool conv_f32(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y,
              const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups, const std::shared_ptr<const void>& weight) {
  if (!conv_available()) return false;
  const auto* prepared = static_cast<const PreparedWeight*>(weight.get());
  use_threads(1);
  try {
    ConvGeom g(dt::f32, x, w, y, stride, padding, dilation, groups);
    auto plan = plan_for(pass, g, bias.has_value());
    if (!plan->usable) return false;
    const memory user[3] = {g.user_src(x), g.user_wei(w), g.user_dst(y)};
    memory use[3];
    dnnl::stream& s = stream();
    // Runs reorder i from `from` to `to` with its own scratchpad.
    auto reorder = [&](int i, const memory& from, const memory& to) {
      plan->order[i]->execute(s, {{DNNL_ARG_FROM, from},
                                  {DNNL_ARG_TO, to},
                                  {DNNL_ARG_SCRATCHPAD, memory(plan->order_scratch[i], engine())}});
    };
    for (int i = 0; i < 3; ++i) {
      if (!plan->order[i]) {
        use[i] = user[i];
        continue;
      }
      if (i == 1 && prepared && prepared->desc == plan->want[1]) {
        use[i] = prepared->mem;
        continue;
      }
      use[i] = memory(plan->want[i], engine());
      if (i != plan->out) reorder(i, user[i], use[i]);
    }
    std::unordered_map<int, memory> args = {{DNNL_ARG_SCRATCHPAD, memory(plan->scratch, engine())}};
    for (int i = 0; i < 3; ++i) args.emplace(plan->arg[i], use[i]);
    if (bias)
      args.emplace(DNNL_ARG_BIAS, memory({{g.dst[1]}, dt::f32, tag::a}, engine(), ptr(*bias)));
    plan->prim.execute(s, args);
    const int o = plan->out;
    if (plan->order[o]) reorder(o, use[o], user[o]);
    s.wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// Note [oneDNN int8]
// Static int8 convolution (quint8 activations, symmetric qint8 weights) runs on oneDNN's int8
// primitives (jit_int8 / brgconv on AVX512-VNNI; AMX where the CPU has it), with torch's
// requantization fused into the primitive: the bias, divided by in_scale * w_scale[c], is added
// to the int32 sums, the output scales in_scale * w_scale[c] / out_scale multiply them, ReLU is
// an eltwise post-op, and the output zero point is added before the rounding (half to even) and
// the uint8 saturation. torch rounds first and adds its zero point after, so an exact .5 with an
// odd zero point may differ by one. Activations are NHWC on both sides (the next convolution
// takes this one's output as it is). oneDNN 2.6 bakes the output scales into the primitive
// (runtime per-channel scales are refused for convolution), so a primitive is cached per shape
// and quantization parameters; the weight, reordered once into the primitive's layout, is kept
// by the caller (ember.ao.nn.quantized's packed parameters, per input shape). As for float32
// (Note [oneDNN float32 convolution]), the batch is cut into chunks that depend on the batch
// only, each run by one oneDNN thread on ember's pool: with oneDNN's own OpenMP threads beside
// ember's pool on a busy 2-core machine, one convolution took 10-20 ms instead of 0.3-1.
namespace {
// The output scales of torch's requantization: in_scale * w_scale[c] / out_scale, in float.
std::vector<float> qconv_scales(const QConvSpec& s) {
  const int64_t o = s.weight_sizes[0];
  std::vector<float> sc(static_cast<size_t>(o));
  for (int64_t c = 0; c < o; ++c)
    sc[size_t(c)] = float(s.in_scale) * s.w_scales[c] / float(s.out_scale);
  return sc;
}

struct QConvPlan {
  dnnl::convolution_forward prim;
  memory::desc src, wei, dst, scratch;
  bool src_zp = false;
};

// Images per chunk: a function of the batch alone (Note [oneDNN int8]).
int64_t qconv_chunk(int64_t n) { return n <= 1 ? 1 : std::min<int64_t>(16, (n + 3) / 4); }

std::vector<int64_t> qconv_key(const QConvSpec& s, int64_t batch) {
  std::vector<int64_t> key = {batch};
  for (IntArrayRef v : {s.input_sizes, s.weight_sizes, s.stride, s.padding, s.dilation}) {
    key.push_back(int64_t(v.size()));
    key.insert(key.end(), v.begin(), v.end());
  }
  key.push_back(s.groups);
  key.push_back(s.in_zp != 0);
  key.push_back(s.relu);
  for (float f : qconv_scales(s)) {
    int32_t bits;
    std::memcpy(&bits, &f, 4);
    key.push_back(bits);
  }
  return key;
}

std::shared_ptr<const QConvPlan> make_qconv_plan(const QConvSpec& s, int64_t n) {
  const int64_t c = s.input_sizes[1], h = s.input_sizes[2], w = s.input_sizes[3];
  const int64_t o = s.weight_sizes[0], kh = s.weight_sizes[2], kw = s.weight_sizes[3];
  const int64_t oh = (h + 2 * s.padding[0] - s.dilation[0] * (kh - 1) - 1) / s.stride[0] + 1;
  const int64_t ow = (w + 2 * s.padding[1] - s.dilation[1] * (kw - 1) - 1) / s.stride[1] + 1;
  memory::dims wei = {o, s.weight_sizes[1], kh, kw};
  if (s.groups > 1) wei = {s.groups, o / s.groups, s.weight_sizes[1], kh, kw};
  memory::desc src_md({n, c, h, w}, dt::u8, tag::nhwc), dst_md({n, o, oh, ow}, dt::u8, tag::nhwc);
  memory::desc wei_md(wei, dt::s8, tag::any), b_md({o}, dt::f32, tag::a);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // chunks run on several threads
  attr.set_output_scales(o > 1 ? 2 : 0, qconv_scales(s));
  if (s.in_zp != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  if (s.relu) {
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  dnnl::convolution_forward::desc d(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md, wei_md, b_md,
      dst_md, {s.stride[0], s.stride[1]}, {s.dilation[0] - 1, s.dilation[1] - 1},
      {s.padding[0], s.padding[1]}, {s.padding[0], s.padding[1]});
  dnnl::convolution_forward::primitive_desc pd(d, attr, engine());
  if (std::string(pd.impl_info_str()).find("ref") != std::string::npos) return nullptr;
  auto plan = std::make_shared<QConvPlan>();
  plan->prim = dnnl::convolution_forward(pd);
  plan->src = pd.src_desc();
  plan->wei = pd.weights_desc();
  plan->dst = pd.dst_desc();
  plan->scratch = pd.scratchpad_desc();
  plan->src_zp = s.in_zp != 0;
  return plan;
}

// The plan for `s` at `batch` images, made on first use; null when oneDNN has only a reference
// kernel for it (or refuses it).
std::shared_ptr<const QConvPlan> qconv_plan(const QConvSpec& s, int64_t batch) {
  std::vector<int64_t> key = qconv_key(s, batch);
  static std::mutex mu;
  static std::map<std::vector<int64_t>, std::shared_ptr<const QConvPlan>> plans;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
  }
  std::shared_ptr<const QConvPlan> plan;
  try {
    plan = make_qconv_plan(s, batch);
  } catch (const dnnl::error&) {
    plan = nullptr;
  }
  std::lock_guard<std::mutex> lock(mu);
  if (plans.size() >= 256) plans.clear();
  return plans.emplace(std::move(key), std::move(plan)).first->second;
}

bool int8_available() {
  static const bool ok = [] {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    return kBestIsa == Isa::avx512 && __builtin_cpu_supports("avx512vnni");
#else
    return false;
#endif
  }();
  return ok;
}

// `weight` (plain int8) reordered into `want` at `out`.
void reorder_weight(const Tensor& weight, const memory::desc& want, void* out) {
  memory::dims wd = want.dims();
  memory::desc plain(wd, dt::s8, wd.size() == 5 ? tag::goihw : tag::oihw);
  memory from(plain, engine(), ptr(weight)), to(want, engine(), out);
  dnnl::reorder(from, to).execute(stream(), from, to);
  stream().wait();
}
}  // namespace

Tensor qconv_pack(const Tensor& weight, const QConvSpec& s) {
  if (!int8_available() || s.input_sizes.size() != 4 || s.weight_sizes.size() != 4) return {};
  use_threads(1);
  auto plan = qconv_plan(s, qconv_chunk(s.input_sizes[0]));
  if (!plan) return {};
  try {
    Tensor packed = empty({int64_t(plan->wei.get_size())}, kChar);
    reorder_weight(weight, plan->wei, ptr(packed));
    return packed;
  } catch (const dnnl::error&) {
    return {};
  }
}

bool qconv_run(const Tensor& x, const Tensor& packed, const Tensor& weight, const Tensor& y,
               const float* bias, const QConvSpec& s) {
  if (!int8_available()) return false;
  const int64_t n = s.input_sizes[0], cb = qconv_chunk(n), chunks = (n + cb - 1) / cb;
  const int64_t tail = n - (chunks - 1) * cb;
  auto plan = qconv_plan(s, cb);
  auto tail_plan = tail == cb ? plan : qconv_plan(s, tail);
  if (!plan || !tail_plan || size_t(packed.numel()) != plan->wei.get_size()) return false;
  try {
    // The last chunk's primitive may want the weight in another layout: reordered here.
    Tensor tail_w = packed;
    if (!(tail_plan->wei == plan->wei)) {
      use_threads(1);
      tail_w = empty({int64_t(tail_plan->wei.get_size())}, kChar);
      reorder_weight(weight, tail_plan->wei, ptr(tail_w));
    }
    const int64_t o = s.weight_sizes[0];
    // torch's requantization adds bias / (in_scale * w_scale[c]) to the int32 sums.
    std::vector<float> b(static_cast<size_t>(o), 0.f);
    if (bias)
      for (int64_t c = 0; c < o; ++c) b[size_t(c)] = bias[c] / (float(s.in_scale) * s.w_scales[c]);
    int32_t zs = int32_t(s.in_zp), zd = int32_t(s.out_zp);
    const int64_t x_image = x.numel() / std::max<int64_t>(1, n);
    const int64_t y_image = y.numel() / std::max<int64_t>(1, n);
    auto run_chunk = [&](int64_t i) {
      const QConvPlan& p = i + 1 == chunks ? *tail_plan : *plan;
      const Tensor& w = i + 1 == chunks ? tail_w : packed;
      memory::desc one({1}, dt::s32, tag::a);
      auto* xp = static_cast<uint8_t*>(ptr(x)) + i * cb * x_image;
      auto* yp = static_cast<uint8_t*>(ptr(y)) + i * cb * y_image;
      std::unordered_map<int, memory> args = {
          {DNNL_ARG_SRC, memory(p.src, engine(), xp)},
          {DNNL_ARG_WEIGHTS, memory(p.wei, engine(), ptr(w))},
          {DNNL_ARG_BIAS, memory({{o}, dt::f32, tag::a}, engine(), b.data())},
          {DNNL_ARG_DST, memory(p.dst, engine(), yp)},
          {DNNL_ARG_SCRATCHPAD, memory(p.scratch, engine())},
          {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, memory(one, engine(), &zd)}};
      if (p.src_zp)
        args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, memory(one, engine(), &zs));
      p.prim.execute(stream(), args);
      stream().wait();
    };
    if (chunks == 1) {  // one image: oneDNN's own threads split it
      use_threads(pool_threads());
      run_chunk(0);
      return true;
    }
    std::atomic<bool> ok{true};
    parallel_for(0, chunks, 1, [&](int64_t b0, int64_t b1) {
      use_threads(1);
      try {
        for (int64_t i = b0; i < b1; ++i) run_chunk(i);
      } catch (const dnnl::error&) {
        ok = false;
      }
    });
    return ok;
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
bool conv_available() { return false; }
Tensor qconv_pack(const Tensor&, const QConvSpec&) { return {}; }
bool qconv_run(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const float*,
               const QConvSpec&) {
  return false;
}
bool conv_f32(ConvPass, const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&,
              IntArrayRef, IntArrayRef, IntArrayRef, int64_t, const std::shared_ptr<const void>&) {
  return false;
}
std::shared_ptr<const void> conv_f32_weight(ConvPass, const Tensor&, const Tensor&, const Tensor&,
                                            bool, IntArrayRef, IntArrayRef, IntArrayRef, int64_t) {
  return nullptr;
}
#endif

// Read on every call (a few tens of ns beside a convolution), so that a test or benchmark can
// switch within one process: os.environ["EMBER_ONEDNN_CONV"] = "0".
bool conv_enabled() {
  const char* v = std::getenv("EMBER_ONEDNN_CONV");
  return !(v && std::string_view(v) == "0") && conv_available();
}

}  // namespace ember::cpu::onednn
