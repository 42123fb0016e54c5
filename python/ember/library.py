"""ember.library: operators defined from Python, as torch.library.

``custom_op("mylib::foo", mutates_args=())`` turns a type-annotated function into an operator of
ember's dispatcher (Note [Python custom ops] in python/src/library.cpp): calls go through the
dispatcher's key selection and its profiler hook, ``ember.ops.mylib.foo.default`` names it, graph
capture (``ember.compile``, ``ember.fx.symbolic_trace``) records it as one node, and
``register_autograd`` makes it differentiable. ``Library(ns, "DEF" | "IMPL" | "FRAGMENT")`` with
``define``/``impl`` is the lower-level form over the same entries.
"""

import functools
import weakref

from . import _C, _dispatch_keys, _library_fake, _library_tags, _op_overloads
from ._library_fake import get_ctx
from ._library_schema import infer_schema, normalize_tags
from ._library_triton import triton_op, wrap_triton
from ._op_overloads import FunctionSchema
from ._ops._op_range import OP_MARK

__all__ = [
    "Library",
    "CustomOpDef",
    "custom_op",
    "define",
    "fallthrough_kernel",
    "get_ctx",
    "get_kernel",
    "impl",
    "impl_abstract",
    "infer_schema",
    "opcheck",
    "register_autocast",
    "register_autograd",
    "register_fake",
    "register_kernel",
    "register_torch_dispatch",
    "register_vmap",
    "triton_op",
    "wrap_triton",
]

_BACKEND_KEYS = ("CPU", "CUDA", "Meta", "PrivateUse1")
_DISPATCH_KEYS = _BACKEND_KEYS + (
    "Autograd",
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
)


def _device_key(device_type):
    device_type = str(device_type).split(":")[0]
    fixed = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "privateuseone": "PrivateUse1"}
    if device_type in fixed:
        return fixed[device_type]
    if device_type == _C._get_privateuse1_backend_name():
        return "PrivateUse1"
    if device_type in _DISPATCH_KEYS:
        return device_type
    raise ValueError(f"ember.library: unknown device type '{device_type}'")


# --------------------------------------------------------------------------------------------
# One operator's kernels


class _OpState:
    """The Python kernels of one custom operator, per dispatch key, and the dispatcher handle
    they are installed on."""

    def __init__(self, entry_name, schema_text, *, from_custom_op, tags=()):
        self.entry_name = entry_name
        self.schema = FunctionSchema(schema_text)
        _library_tags.validate_schema(schema_text.split("::", 1)[1], tags)
        self.tags = tags
        self.handle = _C._custom_op_define(entry_name, schema_text)
        self.kernels = {}  # dispatch key (or Composite*) -> fn
        self.backward = None
        self.setup_context = None
        self.fake = None
        self.autocast = {}  # device type -> dtype (register_autocast)
        self.from_custom_op = from_custom_op
        ns, name, overload = _op_overloads._split_entry(entry_name)
        self.display = f"{ns}.{name}.{overload}"
        self.forward_row = f"GeneratedBackwardFor_{ns}_{name}_{overload}"
        self.node_name = self.forward_row + "Backward"
        self.mutated = [a for a in self.schema.arguments if a.is_write]
        self.opoverload = _op_overloads._register_custom(entry_name, self.call)
        self.opoverload._tags = tags
        self.opoverload._redispatch = self.redispatch
        self._install()

    def _kernel(self, key):
        fn = self.kernels.get(key)
        return None if fn is fallthrough_kernel else fn

    def kernel_for(self, key):
        """The kernel a backend key runs: its own, else the fake (Meta), else a composite; None
        where there is none (a fallthrough registered at a backend key leaves none)."""
        if self.kernels.get(key) is fallthrough_kernel:
            return None
        fn = self._kernel(key)
        if fn is None and key == "Meta" and self.fake is not None:
            fn = _library_fake.meta_kernel(self.schema.name, self.fake)
        if fn is None:
            fn = self._kernel("CompositeExplicitAutograd") or self._kernel(
                "CompositeImplicitAutograd"
            )
        return fn

    def _install(self):
        for key in _BACKEND_KEYS:
            _C._custom_op_set_kernel(self.handle, key, self.kernel_for(key))
        _C._custom_op_set_kernel(self.handle, "Autograd", self._autograd_kernel)

    def set_kernel(self, key, fn):
        key = _device_key(key) if key else "CompositeImplicitAutograd"
        if key == "Autograd":
            self.kernels["Autograd"] = fn
        else:
            self.kernels[key] = fn
        self._install()

    def redispatch(self, keyset, *args, **kwargs):
        """Calls the kernel of the highest key of keyset (a DispatchKeySet)."""
        bound = self.schema.bind(args, kwargs, self.schema.name)
        pargs, pkwargs = self._split(bound)
        key = _dispatch_keys.ember_key(keyset)
        return _C._custom_op_redispatch(self.handle, key, self._tensors(bound), pargs, pkwargs)

    def _split(self, bound):
        args, kwargs = [], {}
        for a, v in zip(self.schema.arguments, bound):
            if a.kwarg_only:
                kwargs[a.name] = v
            else:
                args.append(v)
        return tuple(args), kwargs

    def _tensors(self, bound):
        out = []
        for a, v in zip(self.schema.arguments, bound):
            if isinstance(v, _C.Tensor):
                out.append(v)
            elif isinstance(v, (list, tuple)):
                out.extend(x for x in v if isinstance(x, _C.Tensor))
        return out

    def _check(self, bound):
        for a, v in zip(self.schema.arguments, bound):
            t = a.type
            bad = False
            if t == "Tensor":
                bad = not isinstance(v, _C.Tensor)
            elif t == "Tensor?":
                bad = v is not None and not isinstance(v, _C.Tensor)
            elif t.startswith("Tensor") and t.endswith("[]"):
                bad = not isinstance(v, (list, tuple)) or not all(
                    isinstance(x, _C.Tensor) or (x is None and "?" in t) for x in v
                )
            if bad:
                raise RuntimeError(
                    f"{self.schema.name}() Expected a value of type '{t}' for argument "
                    f"'{a.name}' but instead found type '{type(v).__name__}'.\n"
                    f"Declaration: {self.schema}"
                )

    def call(self, *args, **kwargs):
        bound = self.schema.bind(args, kwargs, self.schema.name)
        if self.autocast:
            from ._process import autocast, is_autocast_enabled

            devices = {t.device.type for t in self._tensors(bound)}
            for device_type, dtype in self.autocast.items():
                if device_type in devices and is_autocast_enabled(device_type):
                    pargs, pkwargs = self._split(
                        [_autocast_arg(v, device_type, dtype) for v in bound]
                    )
                    with autocast(device_type, enabled=False):
                        return self.call(*pargs, **pkwargs)
        self._check(bound)
        pargs, pkwargs = self._split(bound)
        out = _C._custom_op_call(self.handle, self._tensors(bound), pargs, pkwargs)
        for a in self.mutated:
            v = bound[self.schema.arguments.index(a)]
            for t in v if isinstance(v, (list, tuple)) else (v,):
                if isinstance(t, _C.Tensor):
                    _C._bump_version(t)
        return out

    def _autograd_kernel(self, *args, **kwargs):
        user = self.kernels.get("Autograd")
        if user is fallthrough_kernel:  # the backend kernel runs as if called directly
            tensors = _tensors((args, kwargs))
            fn = self.kernel_for(_device_key(tensors[0].device.type) if tensors else "CPU")
            if fn is None:  # the dispatcher's missing-kernel error
                return _C._custom_op_redispatch(self.handle, "backend", tensors, args, kwargs)
            return fn(*args, **kwargs)
        if user is not None:
            return user(*args, **kwargs)
        implicit = self._kernel("CompositeImplicitAutograd")
        if implicit is not None and self.backward is None:
            return implicit(*args, **kwargs)
        bound = self.schema.bind(args, kwargs, self.schema.name)
        tensors = self._tensors(bound)
        if not _C.is_grad_enabled() or not any(t.requires_grad for t in tensors):
            return _C._custom_op_redispatch(self.handle, "backend", tensors, args, kwargs)
        # torch runs a differentiable call as an autograd.Function, whose row the profile shows
        handle = _C._record_function_enter(OP_MARK + self.forward_row)
        try:
            out = _C._custom_op_redispatch(self.handle, "backend", tensors, args, kwargs)
        finally:
            _C._record_function_exit(handle)
        from .autograd.function import FunctionCtx, _attach

        ctx = FunctionCtx()
        # torch's autograd.Function takes the positional arguments only: the keyword-only ones
        # reach setup_context as `keyword_only_inputs` and get no gradient from backward
        positional, keyword_only = self._split(bound)
        ctx.needs_input_grad = tuple(
            (isinstance(v, _C.Tensor) and v.requires_grad)
            or (
                isinstance(v, (list, tuple))
                and any(isinstance(x, _C.Tensor) and x.requires_grad for x in v)
            )
            for v in positional
        )
        is_seq = isinstance(out, (tuple, list))
        outputs = list(out) if is_seq else [out]
        # An output that is an input gets its own handle, so the input keeps its history.
        outputs = [
            o.detach() if isinstance(o, _C.Tensor) and any(o is t for t in tensors) else o
            for o in outputs
        ]
        if is_seq:
            out = type(out)(outputs)
        else:
            out = outputs[0]
        if self.setup_context is not None and len(positional) < len(bound):
            self.setup_context(
                ctx=ctx, inputs=positional, keyword_only_inputs=keyword_only, output=out
            )
        elif self.setup_context is not None:
            self.setup_context(ctx=ctx, inputs=positional, output=out)
        state = self

        def backward(grads):
            if state.backward is None:
                raise RuntimeError(
                    f"Trying to backward through {state.display} but no autograd formula was "
                    "registered. Please use register_autograd to add one."
                )
            result = state.backward(ctx, *grads)
            if not isinstance(result, tuple):
                result = (result,)
            if len(result) != len(positional):
                raise RuntimeError(
                    f"{state.schema.name}: expected the backward formula to return "
                    f"{len(positional)} gradients (one per input), got {len(result)}"
                )
            flat = []  # keyword-only tensors are refused by custom_op and register_autograd
            for v, g in zip(positional, result):
                if isinstance(v, _C.Tensor):
                    flat.append(g)
                elif isinstance(v, (list, tuple)):
                    tensors_in = [x for x in v if isinstance(x, _C.Tensor)]
                    gs = list(g) if g is not None else [None] * len(tensors_in)
                    flat.extend(gs)
            return tuple(flat)

        tensor_outputs = [o for o in outputs if isinstance(o, _C.Tensor)]
        _attach(
            ctx, self.node_name, backward, tensors, tensor_outputs, list(ctx.non_differentiable)
        )
        return out


_ops_by_name = {}  # entry name -> _OpState


def _state(op):
    """The _OpState of an op named by string, CustomOpDef or OpOverload(Packet)."""
    if isinstance(op, CustomOpDef):
        return op._state
    if isinstance(op, _op_overloads.OpOverload):
        op = op.name()
    elif isinstance(op, _op_overloads.OpOverloadPacket):
        op = op._qualified_op_name
    if not isinstance(op, str):
        raise TypeError(f"ember.library: expected an operator name or op; got {type(op).__name__}")
    name = op if "." in op.split("::")[-1] else op
    st = _ops_by_name.get(name)
    if st is None:
        if "::" not in op or op.split("::")[0] == "aten":
            raise NotImplementedError(
                f"ember.library: '{op}' is one of ember's own operators; their kernels are typed "
                "C++ functions, registered with EMBER_REGISTER_KERNEL"
            )
        raise RuntimeError(f"ember.library: operator '{op}' does not exist (define it first)")
    return st


def _define(entry_name, schema_text, *, from_custom_op=False, tags=()):
    if entry_name in _ops_by_name:
        raise RuntimeError(
            f"Tried to register an operator ({schema_text}) with the same name and overload name "
            "multiple times."
        )
    st = _OpState(entry_name, schema_text, from_custom_op=from_custom_op, tags=tags)
    _ops_by_name[entry_name] = st
    return st


# --------------------------------------------------------------------------------------------
# custom_op


class CustomOpDef:
    """CustomOpDef(namespace, name, schema, fn, tags=None)

    What ``custom_op`` returns: callable like the function it wraps (through the dispatcher), with
    ``register_fake``, ``register_autograd`` and ``register_kernel``."""

    def __init__(self, namespace, name, schema, fn, tags=None):
        from ._runtime_names import Tag

        self._namespace = namespace
        self._name = name
        self._qualname = f"{namespace}::{name}"
        self._init_fn = fn
        self._tags = normalize_tags(tags)
        # as torch's, every custom op is pt2_compliant_tag (first)
        op_tags = (Tag.pt2_compliant_tag,) + tuple(
            t for t in self._tags if t != Tag.pt2_compliant_tag
        )
        self._state = _define(
            self._qualname, f"{self._qualname}{schema}", from_custom_op=True, tags=op_tags
        )
        self._opoverload = self._state.opoverload
        if Tag.inplace in self._tags or Tag.out in self._tags:
            self._state.fake = _library_tags.trivial_fake(self._state.schema, self._tags)
        elif not self._state.schema.returns:  # torch generates the fake of an op returning nothing
            self._state.fake = _returns_nothing
        self.__name__ = name
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    @property
    def _schema(self):
        return self._state.schema

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def register_kernel(self, device_types, fn=None, /):
        """register_kernel(device_types, fn=None, /) -> Callable

        Makes fn the kernel for device type(s) ("cpu", "cuda", the PrivateUse1 backend's name);
        usable as a decorator."""

        def inner(fn):
            types = (
                [device_types]
                if isinstance(device_types, str) or device_types is None
                else device_types
            )
            kernel = self._checked(fn)
            for dt in types:
                self._state.set_kernel(
                    "CompositeExplicitAutograd" if dt is None else _device_key(dt), kernel
                )
            return fn

        return inner if fn is None else inner(fn)

    def _checked(self, fn):
        """fn with torch's check of what a custom op's kernel returns."""
        from ._runtime_names import Tag

        if Tag.inplace in self._tags or Tag.out in self._tags:
            return _library_tags.returns_promised(self._state.schema, self._tags, self._name, fn)
        return _no_alias_outputs(self._name, fn)

    def register_fake(self, fn, /):
        """register_fake(fn, /) -> Callable

        The fake (meta) kernel: computes the outputs' shapes and dtypes from the inputs' without
        reading data (opcheck compares it with the real kernel)."""
        from ._runtime_names import Tag

        if Tag.inplace in self._tags or Tag.out in self._tags:
            import warnings

            tag = "torch.Tag.inplace" if Tag.inplace in self._tags else "torch.Tag.out"
            warnings.warn(
                f"The fake registration for {self} is unnecessary. Custom ops tagged with {tag} "
                "already get an autogenerated fake kernel. The provided fake impl will be used "
                "instead.",
                stacklevel=2,
            )
        self._state.fake = fn
        self._state._install()
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """register_autograd(backward, /, *, setup_context=None) -> None

        Makes the op differentiable: ``setup_context(ctx, inputs, output)`` (with
        ``keyword_only_inputs`` before output when the op has keyword-only arguments) saves what
        backward needs, ``backward(ctx, *grads)`` returns one gradient per positional input
        (None where there is none)."""
        register_autograd(self, backward, setup_context=setup_context)

    def register_autocast(self, device_type, cast_inputs):
        """register_autocast(device_type, cast_inputs) -> None

        The op's autocast rule (see ember.library.register_autocast)."""
        register_autocast(self, device_type, cast_inputs)

    def register_vmap(self, func=None, /):
        """register_vmap(func=None, /) -> Callable

        The op's rule under ember.func.vmap (see ember.library.register_vmap)."""
        return register_vmap(self, func)

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        """register_torch_dispatch(torch_dispatch_class, fn=None, /) -> Callable

        The op's rule under a TorchDispatchMode class (ember.library.register_torch_dispatch)."""
        return register_torch_dispatch(self, torch_dispatch_class, fn)


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    """register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None) -> Callable

    While a mode of class ``torch_dispatch_class`` (a TorchDispatchMode) is the innermost, a
    call of ``op`` runs ``func(mode, op_overload, types, args, kwargs)`` instead of the mode's
    ``__torch_dispatch__``; usable as a decorator. ``op`` names one overload ("ns::name" is
    the default one)."""
    from .utils._python_dispatch import TorchDispatchMode

    if isinstance(op, CustomOpDef):
        overload = op._opoverload
    elif isinstance(op, _op_overloads.OpOverload):
        overload = op
    elif isinstance(op, str) and "::" in op:
        ns, _, rest = op.partition("::")
        name, _, ov = rest.partition(".")
        overload = getattr(getattr(getattr(_op_overloads.ops, ns), name), ov or "default")
    else:
        raise ValueError(f"register_torch_dispatch({op}): got unexpected type for op: {type(op)}")
    is_mode = isinstance(torch_dispatch_class, type) and issubclass(
        torch_dispatch_class, TorchDispatchMode
    )
    if not is_mode:
        raise NotImplementedError(
            "register_torch_dispatch: ember supports TorchDispatchMode classes; it has no Tensor "
            f"subclasses with __torch_dispatch__ (got {torch_dispatch_class!r})"
        )

    def inner(fn):
        if overload._torch_dispatch_rules is None:
            overload._torch_dispatch_rules = {}
        overload._torch_dispatch_rules[torch_dispatch_class] = fn
        return fn

    return inner if func is None else inner(func)


def _returns_nothing(*args, **kwargs):
    return None


def _missing_fake(st):
    """The error of a fake-kernel test on an op without one (torch's text for a custom_op)."""
    if st.from_custom_op:
        name = st.schema.name
        short = name.split("::", 1)[1]
        return RuntimeError(
            f"There was no fake impl registered for <CustomOpDef({name})>. This is necessary "
            "for torch.compile/export/fx tracing to work. Please use "
            f"`{short}.register_fake` to add an fake impl."
        )
    return RuntimeError(f"{st.entry_name}: no fake kernel was registered (use register_fake)")


def _tensors(value):
    if isinstance(value, _C.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _no_alias_outputs(name, fn):
    """fn checked as torch checks a custom op's kernel: no output may be an input, alias an
    input or alias another output (RuntimeError)."""

    def storage(t):
        return t.untyped_storage().data_ptr() if t.numel() else None

    @functools.wraps(fn)
    def kernel(*args, **kwargs):
        out = fn(*args, **kwargs)
        seen = {storage(t) for t in _tensors((args, kwargs))}
        ins = {id(t) for t in _tensors((args, kwargs))}
        for t in _tensors(out):
            key = storage(t)
            if id(t) in ins or (key is not None and key in seen):
                raise RuntimeError(
                    f"{name}: The output of this custom operator (1) must not also be an "
                    "input to this custom operator and (2) may not alias any inputs to this "
                    "custom operator or other returns. The most common way to trigger this "
                    "error is if we have y = custom_op(x) and y and x are the same Tensor. "
                    "Please instead return a clone of the offending output tensor(s) (e.g. "
                    "return x.clone()) or refactor the custom operator to not return y."
                )
            if key is not None:
                seen.add(key)
        return out

    return kernel


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None)
    -> CustomOpDef

    Makes fn an operator ``"namespace::name"`` of ember's dispatcher: its schema comes from fn's
    type annotations (or ``schema``), ``mutates_args`` names the arguments fn writes, and
    ``device_types`` the devices fn is the kernel for (all when None). ``tags`` (ember.Tag or a
    sequence) reach the op's ``.tags``; ``Tag.inplace`` (fn writes its first argument and returns
    it) and ``Tag.out`` (fn writes keyword-only out tensors and returns them) give the op that
    form, as torch's. Usable as a decorator."""
    if not isinstance(name, str) or "::" not in name:
        raise ValueError(
            f"custom_op(name=...): expected a name of the form 'namespace::name'; got {name!r}"
        )
    namespace, opname = name.split("::", 1)
    if not namespace.isidentifier() or not opname.isidentifier():
        raise ValueError(
            f"custom_op(name=...): namespace and name must be identifiers; got {name!r}"
        )

    def inner(fn):
        from ._runtime_names import Tag

        normalized = normalize_tags(tags)
        if schema is None:
            text = infer_schema(fn, mutates_args=mutates_args, tags=normalized)
        else:
            text = schema
        if Tag.out not in normalized and _kwarg_only_tensors(FunctionSchema(f"{opname}{text}")):
            raise NotImplementedError(
                "custom_op with kwarg-only Tensor args. Please make your tensors not kwarg-only. "
                f"Got: {opname}{text}"
            )
        result = CustomOpDef(namespace, opname, text, fn, normalized)
        if device_types is None:
            result._state.set_kernel("CompositeExplicitAutograd", result._checked(fn))
        else:
            result.register_kernel(device_types, fn)
        return result

    return inner if fn is None else inner(fn)


# --------------------------------------------------------------------------------------------
# Library


_def_namespaces = {}  # namespace -> the DEF Library that owns it


class Library:
    """Library(ns, kind, dispatch_key="")

    A set of operator definitions ("DEF": the namespace's one definition block; "FRAGMENT": more
    definitions in it) or kernel registrations ("IMPL") for namespace ``ns``."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns == "aten" and kind == "DEF":
            raise ValueError("Library(ns='aten', 'DEF'): ember's own operators are defined in C++")
        if kind == "DEF":
            owner = _def_namespaces.get(ns)
            if owner is not None and owner() is not None:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                    "please put all of your definitions in a single TORCH_LIBRARY block."
                )
            _def_namespaces[ns] = weakref.ref(self)
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defined = []

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"

    def define(self, schema, alias_analysis="", *, tags=()):
        """define(schema, alias_analysis="", *, tags=()) -> str

        Declares an operator of this namespace, ``"foo(Tensor x) -> Tensor"`` or
        ``"foo.overload(...) -> ..."``; returns its name as written, without the overload
        (``"foo"``; ``"ns::foo"`` when the schema names the namespace), as torch's. ``tags``
        (ember.Tag or a sequence) reach the op's ``.tags``."""
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        if self.kind == "IMPL":
            raise RuntimeError("Library.define: an IMPL library cannot define operators")
        tags = normalize_tags(tags)
        written = schema.split("(", 1)[0].strip()
        head = written.split("::", 1)[1] if "::" in written else written
        entry = f"{self.ns}::{head}"
        _define(entry, f"{self.ns}::{schema.strip()}", tags=tags)
        self._defined.append(entry)
        return written.split(".")[0]

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False):
        """impl(op_name, fn, dispatch_key="", *, with_keyset=False) -> None

        Registers fn as the kernel of op_name for dispatch_key: "CPU", "Meta", "PrivateUse1",
        "Autograd", "CompositeExplicitAutograd" or "CompositeImplicitAutograd" (the default).
        ``with_keyset=True``: fn gets the call's DispatchKeySet first (for
        ``OpOverload.redispatch``)."""
        if isinstance(op_name, _op_overloads.OpOverload):
            op_name = op_name.name()
        if "::" not in op_name:
            op_name = f"{self.ns}::{op_name}"
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        if key not in _DISPATCH_KEYS:
            raise ValueError(
                f"Library.impl: unknown dispatch key '{key}'; expected one of "
                f"{list(_DISPATCH_KEYS)}"
            )
        _state(op_name).set_kernel(key, _with_keyset(key, fn) if with_keyset else fn)

    def _destroy(self):
        owner = _def_namespaces.get(self.ns)
        if owner is not None and owner() is self:
            del _def_namespaces[self.ns]


def fallthrough_kernel():
    """fallthrough_kernel() -> NoReturn

    The placeholder to pass to ``Library.impl`` to register a fallthrough: at the "Autograd" key
    the op's backend kernel runs as called (grad mode unchanged, so the ops inside record their
    own graph); at a backend key the op has no kernel there."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


class _SafeKernelFunction:
    """What get_kernel returns (torch._C._SafeKernelFunction): ``call_boxed(keyset, *args,
    **kwargs)`` runs the kernel that was registered when get_kernel was called."""

    def __init__(self, fn, op_name, key):
        self._fn = fn
        self._name = f"{op_name} ({key})"

    def call_boxed(self, keyset, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self):
        return f"SafeKernelFunction(op={self._name})"


def get_kernel(op, dispatch_key):
    """get_kernel(op, dispatch_key) -> SafeKernelFunction

    The kernel custom op `op` (name, OpOverload or CustomOpDef) runs at `dispatch_key` ("CPU",
    "Meta", "Autograd", ...), kept so that a kernel registered later can call it."""
    if not isinstance(op, (str, _op_overloads.OpOverload, CustomOpDef)):
        raise ValueError(f"get_kernel({op}): got unexpected type for op: {type(op)}")
    st = _state(op)
    key = _device_key(getattr(dispatch_key, "name", dispatch_key))
    fn = st._autograd_kernel if key == "Autograd" else st.kernel_for(key)
    if fn is None:
        raise RuntimeError(f"get_kernel: {st.entry_name} has no kernel for dispatch key {key}")
    return _SafeKernelFunction(fn, st.entry_name, key)


def _with_keyset(key, fn):
    """fn called as torch calls a kernel registered with_keyset=True: the call's keys first (the
    backend of its tensors, and its Autograd key for an Autograd kernel)."""

    @functools.wraps(fn)
    def kernel(*args, **kwargs):
        tensors = _tensors((args, kwargs))
        backend = _device_key(tensors[0].device.type) if tensors else "CPU"
        return fn(_dispatch_keys.keyset_for(key, backend), *args, **kwargs)

    return kernel


def define(qualname, schema, *, lib=None, tags=()):
    """define(qualname, schema, *, lib=None, tags=()) -> None

    Declares operator ``qualname`` ("ns::name") with ``schema`` ("(Tensor x) -> Tensor")."""
    ns, name = qualname.split("::", 1)
    lib = lib or Library(ns, "FRAGMENT")
    lib.define(name + schema, tags=tags)
    _keep.append(lib)


_keep = []  # libraries made by the module-level helpers live as long as the process


def impl(qualname, types, func=None, *, lib=None):
    """impl(qualname, types, func=None, *, lib=None) -> Callable

    Registers func as the kernel of ``qualname`` for device type(s) or dispatch key(s) ``types``
    ("cpu", "CompositeImplicitAutograd", ...); usable as a decorator. ``impl(lib, name, key)``, the
    older form, is accepted too."""
    if isinstance(qualname, Library):
        library, name, key = qualname, types, func or ""

        def register(fn):
            library.impl(name, fn, key)
            return fn

        return register

    def inner(fn):
        for t in [types] if isinstance(types, str) else types:
            _state(qualname).set_kernel(_device_key(t), fn)
        return fn

    return inner if func is None else inner(func)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """register_kernel(op, device_types, func=None, /, *, lib=None) -> Callable

    Makes func the kernel of op for device type(s) ("cpu", the PrivateUse1 backend's name, None
    for all); usable as a decorator."""

    def inner(fn):
        types = (
            [device_types]
            if isinstance(device_types, str) or device_types is None
            else device_types
        )
        for dt in types:
            _state(op).set_kernel(
                "CompositeExplicitAutograd" if dt is None else _device_key(dt), fn
            )
        return fn

    return inner if func is None else inner(func)


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    """impl_abstract(qualname, func=None, *, lib=None) -> Callable

    The name register_fake had before torch 2.4 (see register_fake); warns as torch's does."""
    import warnings

    warnings.warn(
        "`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. Please use "
        "that instead; we will remove `torch.library.impl_abstract` in a future version of "
        "PyTorch.",
        FutureWarning,
        stacklevel=2,
    )
    return register_fake(qualname, func, lib=lib)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1):
    """register_fake(op, func=None, /, *, lib=None) -> Callable

    Registers the fake (meta) kernel of op; usable as a decorator."""

    def inner(fn):
        st = _state(op)
        st.fake = fn
        st._install()
        return fn

    return inner if func is None else inner(func)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """register_autograd(op, backward, /, *, setup_context=None, lib=None) -> None

    Makes op differentiable with ``backward(ctx, *grads)`` (and ``setup_context(ctx, inputs,
    output)``, with ``keyword_only_inputs`` before output when op has keyword-only arguments)."""
    from ._runtime_names import Tag

    st = _state(op)
    if Tag.out in st.tags:
        shown = f"<CustomOpDef({st.entry_name})>" if st.from_custom_op else st.entry_name
        raise RuntimeError(
            "Cannot register autograd formula for operator tagged with torch.Tag.out: "
            f"{shown}. Out variants do not support autograd."
        )
    _refuse_kwarg_only_tensors("register_autograd", st.schema)
    st.backward = backward
    st.setup_context = setup_context
    st._install()


def _autocast_arg(v, device_type, dtype):
    # torch's rule (as amp.custom_fwd's): floating tensors on the device, float64 excepted
    if isinstance(v, (list, tuple)):
        return type(v)(_autocast_arg(x, device_type, dtype) for x in v)
    if (
        isinstance(v, _C.Tensor)
        and v.is_floating_point()
        and v.device.type == device_type
        and v.dtype != _C.float64
    ):
        return v.to(dtype)
    return v


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """register_autocast(op, device_type, cast_inputs, /, *, lib=None) -> None

    Inside an autocast region of ``device_type`` ("cpu" or "cuda"), the op casts its floating
    tensors on that device (float64 excepted) to ``cast_inputs`` and runs with autocast off."""
    if not isinstance(op, (str, CustomOpDef, _op_overloads.OpOverload)):
        raise ValueError(f"register_autocast({op}): got unexpected type for op: {type(op)}")
    if device_type not in ("cpu", "cuda"):
        raise ValueError(f"Unknown device type: {device_type}")
    _state(op).autocast[device_type] = cast_inputs


def register_vmap(op, func=None, /, *, lib=None):
    """register_vmap(op, func=None, /, *, lib=None) -> Callable

    Makes ``func(info, in_dims, *args, **kwargs) -> (output, out_dims)`` the op's rule under
    ember.func.vmap: ``in_dims`` gives each argument's batch dimension (None when unbatched),
    ``info.batch_size`` the vmap's size; usable as a decorator."""
    st = _state(op)
    _refuse_kwarg_only_tensors("register_vmap", st.schema)

    def inner(fn):
        from . import _library_vmap

        _library_vmap.register(st.opoverload, fn)
        return fn

    return inner if func is None else inner(func)


def _kwarg_only_tensors(schema):
    return any(a.kwarg_only and a.type.startswith("Tensor") for a in schema.arguments)


def _refuse_kwarg_only_tensors(what, schema):
    if _kwarg_only_tensors(schema):
        raise NotImplementedError(
            f"{what} with kwarg-only Tensor args. In the original definition of the op, please "
            f"make your tensors not kwarg-only. Got: {schema}"
        )


class OpCheckError(Exception):
    """OpCheckError(message)

    Raised by opcheck when a test fails."""


def _clone_arg(v):
    """v with each tensor (also inside lists/tuples) replaced by a detached copy."""
    if isinstance(v, _C.Tensor):
        return v.detach().clone()
    if isinstance(v, (list, tuple)):
        return type(v)(_clone_arg(x) for x in v)
    return v


def _check_traced(ember, st, args, kwargs, flat):
    """opcheck's test_aot_dispatch_dynamic: the op captured by make_fx (one node, traced through
    its fake kernel) and the captured graph run must give the eager outputs."""
    from .fx.experimental.proxy_tensor import make_fx

    if st.fake is None:  # torch traces through the fake kernel
        raise _missing_fake(st)
    where = [i for i, a in enumerate(args) if isinstance(a, _C.Tensor)]

    def call(*tensors):  # the tensors are the graph's inputs; other arguments are constants
        full = list(args)
        for i, t in zip(where, tensors):
            full[i] = t
        out = st.opoverload(*full, **_clone_arg(kwargs))
        # an op that returns nothing is checked by the tensors it wrote
        return out if st.schema.returns else tuple(full[i] for i in where)

    tensors = [args[i] for i in where]
    with ember.no_grad():
        expected = flat(call(*_clone_arg(tensors)))
        gm = make_fx(call)(*_clone_arg(tensors))
        got = flat(gm(*_clone_arg(tensors)))
    if len(got) != len(expected) or any(
        tuple(g.shape) != tuple(e.shape) or g.dtype != e.dtype or not ember.allclose(g, e)
        for g, e in zip(got, expected)
        if g.is_floating_point()
    ):
        raise OpCheckError(f"{st.entry_name}: the traced op's outputs differ from eager's")


def opcheck(op, args, kwargs=None, *, test_utils=None, raise_exception=True, atol=None, rtol=None):
    """opcheck(op, args, kwargs=None, *, test_utils=None, raise_exception=True) -> dict

    Checks a custom op's registrations on one input: "test_schema" (arguments not declared mutated
    are unchanged), "test_autograd_registration" (an op whose inputs require grad has a
    backward), "test_faketensor" (the fake kernel's outputs have the real outputs' shapes and
    dtypes), "test_aot_dispatch_dynamic" (the op traced into a graph through its fake kernel
    gives the eager outputs). Returns {test: "SUCCESS" or the error}."""
    import ember

    st = _state(op)
    kwargs = kwargs or {}
    tests = test_utils or (
        "test_schema",
        "test_autograd_registration",
        "test_faketensor",
        "test_aot_dispatch_dynamic",
    )
    if isinstance(tests, str):
        tests = (tests,)
    results = {}

    def flat(v):
        if isinstance(v, _C.Tensor):
            return [v]
        if isinstance(v, (list, tuple)):
            return [t for x in v for t in flat(x)]
        return []

    for test in tests:
        try:
            if test == "test_schema":
                a, k = _clone_arg(args), _clone_arg(kwargs)
                bound = st.schema.bind(a, k, st.schema.name)
                before = [[t.clone() for t in flat(v)] for v in bound]
                with ember.no_grad():
                    st.opoverload(*a, **k)
                for arg, v, saved in zip(st.schema.arguments, bound, before):
                    if not arg.is_write and not all(map(ember.equal, saved, flat(v))):
                        raise RuntimeError(  # torch's schema check
                            f"Argument {arg.name} is not defined as mutable but was mutated"
                        )
            elif test == "test_autograd_registration":
                ins = flat((args, kwargs))
                if any(t.requires_grad for t in ins) and st.backward is None:
                    if (
                        "Autograd" not in st.kernels
                        and "CompositeImplicitAutograd" not in st.kernels
                    ):
                        raise OpCheckError(
                            f"{st.entry_name}: inputs require grad but no autograd formula was "
                            "registered (use register_autograd)"
                        )
            elif test == "test_faketensor":
                if st.fake is None:
                    raise _missing_fake(st)
                a, k = _clone_arg(args), _clone_arg(kwargs)
                with ember.no_grad():
                    real = flat(st.opoverload(*a, **k))
                    fake, dynamic = _library_fake.run_fake(
                        st.fake, st.opoverload, _clone_arg(args), _clone_arg(kwargs)
                    )
                    fake = flat(fake)
                _library_fake.check_outputs(st.opoverload, real, fake, dynamic)
            elif test == "test_aot_dispatch_dynamic":
                _check_traced(ember, st, _clone_arg(args), _clone_arg(kwargs), flat)
            else:
                raise ValueError(f"opcheck: unknown test '{test}'")
            results[test] = "SUCCESS"
        except Exception as e:
            if raise_exception:
                raise OpCheckError(
                    f"opcheck(op, ...): {test} failed with {e} (scroll up for stack trace)"
                ) from e
            results[test] = e
    return results
