#pragma once
// The meta step of the elementwise ops. See Note [Meta step].
//
// Note [Meta step]
// An elementwise op's rules that do not depend on the data live here, once, for every backend:
// the result dtype (torch's promotion, with wrapped Python numbers), the broadcast shape, the
// output's allocation in the inputs' layout (core/output_layout.h), the in-place checks and
// torch's error texts. The op's backend kernels (CPU and Meta, registered from ops/) run the
// step and then hand the op's out= kernel ready operands: every operand already of the dtype the
// loop computes in, the output allocated. So a kernel (cpu/) only loops and never computes a
// dtype or a shape, and a second backend registers only its out= kernels.
// On the Meta key the step is the whole op: it checks the devices, computes the result's
// geometry and allocates it on meta storage, and runs no loop (before, the Meta fallback ran
// the CPU kernel over zeros to learn the same shape; one rule now answers both).
//   a + b: ops/binary.cpp's add -> op::add (dispatcher) -> add_structured<CPU> (ops/binary.cpp:
//   meta::binary here, the casts, the output) -> op::add_out's CPU kernel (cpu/binary.cpp: the
//   loop).
#include <initializer_list>

#include "ember/core/output_layout.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/profile_range.h"

namespace ember::meta {

/// The device of a backend key.
inline Device device_of(DispatchKey k) { return Device(DeviceType(uint8_t(k))); }

/// The result dtype rule of an elementwise op: the promoted dtype (Same), the promoted dtype
/// or the default float dtype for integers and bool (Float: true division, atan2, the special
/// functions), bool computed in the promoted dtype (Bool: comparisons, logical ops).
enum class Result : uint8_t { Same, Float, Bool };

/// What the meta step decides for one call.
struct Elementwise {
  ScalarType compute;  // the dtype the loop runs in: every operand is cast to it
  ScalarType result;   // the output's dtype: compute, or bool
  DimVector shape;     // the broadcast shape
};

/// The step of a binary op (name is the op's, for error texts).
Elementwise binary(const char* name, const Tensor& a, const Tensor& b, Result kind);
/// The step of a unary op (the unary table's kinds: FLOAT and SPECIAL are Float, SAME and INT
/// Same, BOOL Bool). neg of a bool tensor raises torch's text here, on every device.
Elementwise unary(const char* name, const Tensor& self, Result kind);
/// where(condition, self, other): the promoted dtype of self and other; all three broadcast.
Elementwise where(const Tensor& condition, const Tensor& self, const Tensor& other);
/// lerp(self, end, weight): self's dtype (the public op checked end's and weight's).
Elementwise lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
/// An in-place write of m's result into self: same shape, castable dtype (torch's texts).
void check_inplace(const Elementwise& m, const Tensor& self, const char* name);
/// add/sub: a floating alpha needs a floating (or complex) result.
void check_alpha(const Scalar& alpha, ScalarType compute);
/// pow: an integer base with a negative Python-number exponent raises, as torch's.
void check_integer_pow(const Tensor& self, const Tensor& exponent);
/// Every tensor is on `device` or a 0-d CPU one (a Python number), else torch's
/// "Tensor on device cpu is not on the expected device meta!".
void check_devices(const char* name, Device device, std::initializer_list<const Tensor*> tensors);
/// The dtype refusals torch's meta functions make where the CPU loop's dtype set refuses (on
/// CPU the loop raises its own NotImplementedError): bool floor_divide. Meta runs no loop, so
/// without this a meta program would pass where its CPU run fails.
void check_meta_dtype(const char* name, const Elementwise& m);
/// check_devices on meta.
inline void check_meta_devices(const char* name, std::initializer_list<const Tensor*> tensors) {
  check_devices(name, Device(DeviceType::Meta), tensors);
}
/// `t` in dtype `dt` on the backend of key `k` (t itself when it has it): a wrapped number
/// converts as a scalar, a tensor through the backend's copy_ kernel.
Tensor cast(const Tensor& t, ScalarType dt, DispatchKey k);
/// dst <- src through the backend's copy_ kernel (an in-place op whose dtype differs).
void copy(Tensor& dst, const Tensor& src, DispatchKey k);
/// An out= write's version bump, with torch's error for an inference tensor outside
/// InferenceMode (ops/copy.cpp's bump_inplace_version).
void bump_out_version(const Tensor& out);

/// No check beyond the step's own.
struct NoCheck {
  void operator()(const Elementwise&) const {}
};

/// out='s dtype rule, torch's: Cast, out may have any dtype the result casts to (can_cast);
/// Exact, out must have the result's dtype (the SAME and INT unary kinds); Bool, out must be
/// bool (signbit, isposinf, isneginf).
enum class OutDtype : uint8_t { Cast, Exact, Bool };
/// torch's out= checks after the op's step: out on the inputs' device, out's dtype against
/// m.result by `rule` (torch's texts), then out resized to m.shape when it differs (contiguous,
/// on its own storage when that has room, as resize_; torch's warning about it is the Python
/// layer's, which sees the shape change).
void check_out(const char* name, const Elementwise& m, Tensor& out, OutDtype rule);
/// torch's overlap rules for a written tensor (out=, or self of an in-place op), checked before
/// shapes and dtypes: no two of its elements may share memory (an expanded dim) ...
void check_no_internal_overlap(const Tensor& t);
/// ... and it may be an input itself (the same span of memory, the same strides) or apart from
/// every input; a partial overlap raises torch's text. Only non-overlapping dense tensors are
/// compared, as torch's get_overlap_status (strided slices are "too hard" there and pass).
void check_out_overlap(const Tensor& out, std::initializer_list<const Tensor*> inputs);

/// The out= form of an elementwise op (Python's `out=`): `step()` (the op's meta step, an
/// Elementwise) on out's device, torch's out= checks, an op's own `check` (after them, as
/// torch's: add's alpha), then (not on Meta) `run(k, m, dst)`, the op's out= kernel for key k
/// and step m, into out itself when it has the result dtype, else into a new tensor copied into
/// out (torch's cast to out's dtype). Bumps out's version. `name` is a string literal (the
/// profiler's row keeps it).
template <class Step, class Run, class Check = NoCheck>
Tensor& out_op(const char* name, OutDtype rule, std::initializer_list<const Tensor*> inputs,
               Tensor& out, Step step, Run run, Check check = {}) {
  profiler::OpRange row(name, out);  // torch's row of the op (Note [Profiler rows])
  const DispatchKey k = backend_key(out.device());
  check_devices(name, out.device(), inputs);
  const Elementwise m = step();
  check_out(name, m, out, rule);
  check(m);
  if (k == DispatchKey::Meta) {
    check_meta_dtype(name, m);
    return out;
  }
  check_out_overlap(out, inputs);
  if (out.dtype() == m.result) {
    run(k, m, out);
  } else {
    Tensor tmp = empty_like_inputs(m.shape, m.result, inputs, device_of(k));
    run(k, m, tmp);
    copy(out, tmp, k);
  }
  bump_out_version(out);
  return out;
}

/// The kernel of op declaration `d` for key `k` (an out= kernel the step hands its operands).
template <class Decl>
typename Decl::Signature* kernel(const Decl&, DispatchKey k) {
  const OperatorEntry& e = Decl::handle().entry();
  void* fn = e.kernel(k);
  if (!fn) [[unlikely]]
    detail::missing_kernel(e, k);
  return reinterpret_cast<typename Decl::Signature*>(fn);
}

/// Note [Opmath scalars]: torch's mul and true_divide of a float16/bfloat16 tensor by a 0-d
/// tensor of another dtype (a Python number among them) read that scalar as float, its opmath
/// type, instead of rounding it to the tensor's dtype first (bfloat16 124 * 0.1 is 12.375, not
/// 12.4375); the scalar first, and add and sub, round as the other ops do. The ops that do pass
/// OpmathScalar: their out= kernel then gets such a `b` as a 0-d float tensor.
template <bool OpmathScalar>
Tensor cast_second(const Tensor& b, const Elementwise& m, DispatchKey k) {
  const bool reduced = m.compute == ScalarType::Half || m.compute == ScalarType::BFloat16;
  if (OpmathScalar && reduced && b.dim() == 0 && b.dtype() != m.compute)
    return cast(b, ScalarType::Float, k);
  return cast(b, m.compute, k);
}

/// The backend kernel of binary op `name` for key K: the step (and an op's own `check` of its
/// result), then `run(a, b, out)` with the cast operands and the new output (not on Meta, where
/// the step is the whole op).
template <DispatchKey K, bool OpmathScalar = false, class Run, class Check = NoCheck>
Tensor binary_op(const char* name, Result kind, const Tensor& a, const Tensor& b, Run run,
                 Check check = {}) {
  if constexpr (K == DispatchKey::Meta) check_meta_devices(name, {&a, &b});
  const Elementwise m = binary(name, a, b, kind);
  check(m);
  if constexpr (K == DispatchKey::Meta) check_meta_dtype(name, m);
  Tensor out = empty_like_inputs(m.shape, m.result, {&a, &b}, device_of(K));
  if constexpr (K != DispatchKey::Meta)
    run(cast(a, m.compute, K), cast_second<OpmathScalar>(b, m, K), out);
  return out;
}

/// The backend kernel of unary op `name` for key K: the step, then `run(self, out)` with self
/// cast to the compute dtype and the new output (not on Meta).
template <DispatchKey K, class Run>
Tensor unary_op(const char* name, Result kind, const Tensor& self, Run run) {
  if constexpr (K == DispatchKey::Meta) check_meta_devices(name, {&self});
  const Elementwise m = unary(name, self, kind);
  Tensor out = empty_like_inputs(m.shape, m.result, {&self}, device_of(K));
  if constexpr (K != DispatchKey::Meta) run(cast(self, m.compute, K), out);
  return out;
}

/// Its in-place form: self must hold the result's dtype (an integer self of a Float op raises).
template <DispatchKey K, class Run>
Tensor& unary_op_(const char* name, Result kind, Tensor& self, Run run) {
  if constexpr (K == DispatchKey::Meta) check_meta_devices(name, {&self});
  if constexpr (K != DispatchKey::Meta) check_no_internal_overlap(self);
  const Elementwise m = unary(name, self, kind);
  check_inplace(m, self, name);
  if constexpr (K != DispatchKey::Meta) run(self, self);
  return self;
}

/// The in-place form: writes into self (through a temporary when the result's dtype differs
/// from self's, e.g. a bool comparison into a float self).
template <DispatchKey K, bool OpmathScalar = false, class Run, class Check = NoCheck>
Tensor& binary_op_(const char* name, Result kind, Tensor& self, const Tensor& other, Run run,
                   Check check = {}) {
  if constexpr (K == DispatchKey::Meta) check_meta_devices(name, {&self, &other});
  if constexpr (K != DispatchKey::Meta) {
    check_no_internal_overlap(self);
    check_out_overlap(self, {&other});
  }
  const Elementwise m = binary(name, self, other, kind);
  check(m);
  if constexpr (K == DispatchKey::Meta) check_meta_dtype(name, m);
  check_inplace(m, self, name);
  if constexpr (K != DispatchKey::Meta) {
    Tensor cs = cast(self, m.compute, K), co = cast_second<OpmathScalar>(other, m, K);
    if (m.result == self.dtype()) {
      run(cs, co, self);
    } else {
      Tensor tmp = empty(m.shape, m.result, device_of(K));
      run(cs, co, tmp);
      copy(self, tmp, K);
    }
  }
  return self;
}

}  // namespace ember::meta
