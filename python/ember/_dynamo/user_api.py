"""The fine-grained controls of ember.compile that user code calls (torch.compiler's and
torch._dynamo's names): ``set_stance``, ``graph_break``, ``allow_in_graph``,
``assume_constant_result``, ``substitute_in_graph``, ``nested_compile_region`` and the counters
of ``ember._dynamo.utils``.

ember's capture records the real run of a function (Note [Capture]), so it already traces into
every Python helper the function calls: ``assume_constant_result``, ``substitute_in_graph`` and
``nested_compile_region`` change nothing a program can observe (torch's only differ in how
Dynamo treats the helper) and return the function unchanged. ``allow_in_graph`` functions
become one node each (Capture.begin_opaque)."""

import functools
import inspect

__all__ = [
    "set_stance",
    "get_stance",
    "graph_break",
    "allow_in_graph",
    "disallow_in_graph",
    "assume_constant_result",
    "substitute_in_graph",
    "nested_compile_region",
    "forbid_in_graph",
    "nonstrict_trace",
    "error_on_graph_break",
    "run",
    "set_default_backend",
    "get_default_backend",
]

_STANCES = (
    "default",
    "force_eager",
    "eager_on_recompile",
    "fail_on_recompile",
    "eager_then_compile",
    "aot_eager_then_compile",
)
_stance = {"stance": "default", "force_backend": None}
_default_backend = ["inductor"]  # what ember.compile uses without backend= (set_default_backend)


class _StanceSetter:
    """What ``set_stance`` returns: the stance is set already; as a context manager or a
    decorator it restores the previous stance on exit."""

    def __init__(self, prior, new):
        self.prior, self.new = prior, new

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _stance.update(self.prior)

    def __call__(self, fn):
        new = self.new

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prior = dict(_stance)
            _stance.update(new)
            try:
                return fn(*args, **kwargs)
            finally:
                _stance.update(prior)

        _stance.update(self.prior)  # as a decorator, the stance applies inside fn only
        return wrapper


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """set_stance(stance='default', *, skip_guard_eval_unsafe=False, force_backend=None)

    Sets how compiled functions behave from now on: ``"default"`` (capture and compile),
    ``"force_eager"`` (ignore ember.compile, run eagerly), ``"eager_on_recompile"`` (use a cached
    graph whose guards hold, else run eagerly instead of capturing again),
    ``"fail_on_recompile"`` (raise RuntimeError where a capture would be needed),
    ``"eager_then_compile"`` / ``"aot_eager_then_compile"`` (the first call of a function runs
    eagerly, later ones compile). Usable as a plain call, a context manager or a decorator.
    """
    if stance not in _STANCES:
        raise RuntimeError(
            f"set_stance: expected stance to be one of {', '.join(_STANCES)}; got {stance!r}"
        )
    if force_backend is not None and stance != "default":
        raise RuntimeError("set_stance: force_backend can only be used with stance='default'")
    prior = dict(_stance)
    new = {"stance": stance, "force_backend": force_backend}
    _stance.update(new)
    return _StanceSetter(prior, new)


def get_stance():
    """get_stance() -> str

    The stance ``set_stance`` set last."""
    return _stance["stance"]


_error_on_graph_break = [False]


class error_on_graph_break:  # noqa: N801 (torch's name; a context manager and decorator)
    """error_on_graph_break(error_on_graph_break)

    While active (a with block, or the calls of a decorated function), a graph break met by a
    capture raises ``Unsupported`` instead of splitting the graph; unlike ``fullgraph=True`` the
    function may still be captured as several graphs where breaks happen outside the block."""

    def __init__(self, error_on_graph_break):
        self.value = bool(error_on_graph_break)
        self.prior = []

    def __enter__(self):
        self.prior.append(_error_on_graph_break[0])
        _error_on_graph_break[0] = self.value
        return self

    def __exit__(self, *exc):
        _error_on_graph_break[0] = self.prior.pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with error_on_graph_break(self.value):
                return fn(*args, **kwargs)

        return wrapper


def graph_break(msg=""):
    """graph_break(msg='')

    Inside a compiled function: ends the graph captured so far; the code after it is captured
    separately (under ``fullgraph=True``: raises Unsupported). Outside: does nothing."""
    from . import eval_frame

    cap = getattr(eval_frame._state, "capture", None)
    if cap is None or getattr(eval_frame._state, "disabled", 0):
        return
    cap.graph_break(
        "Call to `torch._dynamo.graph_break()`\n"
        f"  Explanation: User-inserted graph break. Message: {msg or None}\n"
        "  Hint: Remove the `torch._dynamo.graph_break()` call."
    )
    if cap.log is not None and not cap.stopped:
        # partial graphs: no call runs eagerly here; the graph so far ends and the calls after
        # the break open the next one (two graphs, as torch's resume function makes)
        cap.log.cur_eager = False
        cap.log.user_break()


def _identity_decorator(fn):
    if isinstance(fn, (list, tuple)):
        return [_identity_decorator(f) for f in fn]
    if not callable(fn):
        raise TypeError(f"expected a callable; got {type(fn).__name__}")
    return fn


# code object -> function: what allow_in_graph marked (the capture's profile hook looks calls up)
_allowed_in_graph = {}


def allowed_in_graph(code):
    """The function allow_in_graph marked whose code object is ``code``, or None."""
    return _allowed_in_graph.get(code)


def allow_in_graph(fn):
    """allow_in_graph(fn) -> fn

    Marks ``fn`` (or each function of a list) to appear in captured graphs as one
    call_function node whose target is ``fn``, as torch's Dynamo puts it, instead of the ops it
    runs; the graph calls ``fn`` when it runs. ``fn`` is returned unchanged."""
    fn = _identity_decorator(fn)
    for f in fn if isinstance(fn, list) else [fn]:
        code = getattr(f, "__code__", None)
        if code is not None:  # a builtin or C function: the capture records its calls anyway
            _allowed_in_graph[code] = f
    return fn


def disallow_in_graph(fn):
    """disallow_in_graph(fn) -> fn

    The inverse of ``allow_in_graph``: the capture traces into ``fn`` again; returns ``fn``."""
    fn = _identity_decorator(fn)
    for f in fn if isinstance(fn, list) else [fn]:
        _allowed_in_graph.pop(getattr(f, "__code__", None), None)
    return fn


def forbid_in_graph(fn):
    """forbid_in_graph(fn) -> callable

    Marks ``fn`` as one a compiled function must not call: the returned function raises
    AssertionError when called while ember.compile captures, and runs ``fn`` otherwise."""
    if isinstance(fn, (list, tuple)):
        return [forbid_in_graph(f) for f in fn]
    if not callable(fn):
        raise TypeError(f"forbid_in_graph: expected a callable; got {type(fn).__name__}")

    @functools.wraps(fn)
    def forbidden(*args, **kwargs):
        from .eval_frame import is_compiling

        if is_compiling():
            raise AssertionError(f"Attempt to trace forbidden callable {fn}")
        return fn(*args, **kwargs)

    return forbidden


def nonstrict_trace(fn):
    """nonstrict_trace(fn) -> fn

    torch's marker for a function traced without Dynamo's checks; ember's capture already
    records the ember ops ``fn`` runs, so ``fn`` is returned unchanged."""
    return _identity_decorator(fn)


def assume_constant_result(fn):
    """assume_constant_result(fn) -> fn

    Marks ``fn`` as returning the same value on every call. ember's capture calls ``fn`` once
    while capturing and keeps a non-tensor result as a constant of the graph (guarded where it
    depends on the arguments), so ``fn`` is returned unchanged."""
    fn._dynamo_marked_constant = True
    return fn


def substitute_in_graph(
    original_fn, *, can_constant_fold_through=False, skip_signature_check=False
):
    """substitute_in_graph(original_fn, *, can_constant_fold_through=False,
        skip_signature_check=False) -> decorator

    Registers a Python function to trace in place of ``original_fn`` (a builtin or C function
    the capture cannot look into). The decorated function must take ``original_fn``'s
    parameters (unless ``skip_signature_check``). Called outside a capture, the returned function
    runs ``original_fn``; ember's capture runs it too (both must compute the same result)."""
    if not callable(original_fn):
        raise TypeError(
            f"substitute_in_graph: expected original_fn to be callable; got "
            f"{type(original_fn).__name__}"
        )

    def decorator(polyfill):
        if not skip_signature_check:
            try:
                want, got = inspect.signature(original_fn), inspect.signature(polyfill)
            except (TypeError, ValueError):
                want = got = None
            if want is not None and _sig_key(want) != _sig_key(got):
                raise TypeError(
                    f"substitute_in_graph: expected the signature of {polyfill.__name__} to "
                    f"match {getattr(original_fn, '__name__', original_fn)}{want}; got {got}"
                )

        @functools.wraps(original_fn)
        def wrapper(*args, **kwargs):
            return original_fn(*args, **kwargs)

        wrapper.__torch_dynamo_polyfill__ = polyfill
        wrapper.__torch_dynamo_can_constant_fold_through__ = can_constant_fold_through
        return wrapper

    return decorator


def _sig_key(sig):
    """What substitute_in_graph compares: names, kinds and defaults, with positional-only and
    positional-or-keyword alike (a builtin's ``abs(x, /)`` matches ``def f(x)``, as torch's
    check takes it) and annotations left out."""
    P = inspect.Parameter
    kinds = {P.POSITIONAL_ONLY: P.POSITIONAL_OR_KEYWORD}
    return [(p.name, kinds.get(p.kind, p.kind), p.default) for p in sig.parameters.values()]


def nested_compile_region(fn=None, *, options=None, max_reuse_entries=8, reuse_hash_fn=None):
    """nested_compile_region(fn=None, *, options=None, max_reuse_entries=8, reuse_hash_fn=None)

    Marks a region torch compiles once and reuses; ember's capture inlines it (same values), so
    ``fn`` is returned unchanged. Without ``fn``, a decorator."""
    if fn is None:
        return lambda f: f
    return fn


def run(fn=None):
    """run(fn=None) -> callable

    ``fn`` (a function that calls compiled functions) run so that compiled functions only use
    graphs they already captured: a call whose guards match none runs eagerly instead of
    capturing. Without ``fn``, a decorator."""
    if fn is None:
        return run

    @functools.wraps(fn)
    def cached_only(*args, **kwargs):
        prior = dict(_stance)
        _stance["stance"] = "_cached_only"
        try:
            return fn(*args, **kwargs)
        finally:
            _stance.update(prior)

    return cached_only


def set_default_backend(backend):
    """set_default_backend(backend)

    The backend ``ember.compile`` uses when called without ``backend=`` (a name or a callable;
    None restores "inductor"). Functions compiled earlier keep theirs."""
    _default_backend[0] = "inductor" if backend is None else backend


def get_default_backend():
    """get_default_backend() -> str or callable

    The backend ``ember.compile`` uses when called without ``backend=``."""
    return _default_backend[0]
