"""Every public callable of ember's torch-like namespaces has a docstring that starts with torch's
signature for it (Note [Binding docstrings] in python/src/common.h; Python-level callables follow
the same format): the first line is `name(...)`, or `name -> type` for a property."""

import importlib
import types

import pytest

import ember

# Namespaces walked: all public callables, or only the classes where the namespace's point is its
# classes (modules, optimizers, schedulers, datasets and samplers).
FUNCTIONS_AND_CLASSES = [
    "ember",
    "ember.nn.functional",
    "ember.linalg",
    "ember.special",
    "ember.fft",
    "ember.autograd",
    "ember.nn.init",
    "ember.nn.utils",
    "ember.fx",
    "ember.onnx",
    "ember.export",
    "ember.jit",
    "ember.overrides",
]
CLASSES_ONLY = ["ember.nn", "ember.optim", "ember.optim.lr_scheduler", "ember.utils.data"]

# Things that genuinely have no torch call signature, each with why.
EXEMPT = {
    # torch.dtype cannot be constructed (dtypes are fixed objects such as torch.float32), so it has
    # no signature to show; its binding docstring describes the type in prose.
    "ember.dtype",
}


def _ours(obj):
    module = getattr(obj, "__module__", None) or ""
    return module == "ember" or module.startswith("ember.")


def _public():
    """(qualified name, attribute name, object) for every public callable walked."""
    out = []
    for ns in FUNCTIONS_AND_CLASSES + CLASSES_ONLY:
        try:
            mod = importlib.import_module(ns)
        except ImportError:  # e.g. ember.fft while it does not exist
            continue
        for name in dir(mod):
            obj = getattr(mod, name)
            if name.startswith("_") or isinstance(obj, types.ModuleType) or not callable(obj):
                continue
            if ns in CLASSES_ONLY and not isinstance(obj, type):
                continue
            if _ours(obj):
                out.append((f"{ns}.{name}", name, obj))
    for name, obj in vars(ember.Tensor).items():
        if name.startswith("_"):
            continue
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, property) or callable(obj):
            out.append((f"ember.Tensor.{name}", name, obj))
    return out


PUBLIC = _public()


def _doc(obj):
    # A class's own docstring: type.__doc__ is not inherited, but say so explicitly.
    return vars(obj).get("__doc__") if isinstance(obj, type) else obj.__doc__


def _problem(name, obj):
    doc = _doc(obj)
    if not doc or not doc.strip():
        return "no docstring"
    first = doc.strip().splitlines()[0]
    if isinstance(obj, property):
        return None if first.startswith(name + " -> ") else f"first line {first!r}"
    # An alias that is the same object as its target (ember.arccos is ember.acos) keeps the
    # target's docstring, so the object's own name is accepted too.
    names = {name, getattr(obj, "__name__", name)}
    if any(first.startswith(n + "(") for n in names):
        return None
    return f"first line {first!r}"


def test_the_walk_finds_the_namespaces():
    names = {q for q, _, _ in PUBLIC}
    for expected in [
        "ember.add",
        "ember.nn.functional.relu",
        "ember.linalg.svd",
        "ember.nn.Linear",
        "ember.optim.Adam",
        "ember.utils.data.DataLoader",
        "ember.Tensor.to",
        "ember.Tensor.device",
        "ember.autograd.Function",
        "ember.nn.init.zeros_",
    ]:
        assert expected in names
    assert len(PUBLIC) > 1000


def test_exemptions_are_still_needed():
    # An exempt name that gained a good docstring (or went away) should leave the list.
    by_name = {q: (n, o) for q, n, o in PUBLIC}
    for qual in EXEMPT:
        assert qual in by_name, qual
        assert _problem(*by_name[qual]) is not None, qual


def test_every_public_callable_starts_with_its_signature():
    problems = [f"{q}: {p}" for q, n, o in PUBLIC if q not in EXEMPT and (p := _problem(n, o))]
    assert not problems, f"{len(problems)} without a signature line:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    "obj, first",
    [
        (ember.nn.functional.relu, "relu(input, inplace=False) -> Tensor"),
        (ember.linalg.det, "det(A) -> Tensor"),
        (ember.nn.Linear, "Linear(in_features, out_features, bias=True, device=None, dtype=None)"),
        (ember.exp_, "exp_(input) -> Tensor"),
    ],
)
def test_examples(obj, first):
    doc = _doc(obj)
    lines = doc.splitlines()
    assert lines[0] == first
    assert lines[1] == "" and lines[2].strip(), "a blank line, then our sentence"


def test_help_shows_the_signature_line():
    import pydoc

    text = pydoc.render_doc(ember.nn.functional.conv2d, renderer=pydoc.plaintext)
    assert "conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)" in text
