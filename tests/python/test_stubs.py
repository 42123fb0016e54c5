"""Docs in the product: the type stubs shipped as ember/_C.pyi (generated at build time by
nanobind's stubgen) and the docstrings and parameter names of every binding in ember._C."""

import __future__

import ast
import pathlib
import pydoc
import re

import pytest

import ember
from ember import _C

PKG = pathlib.Path(ember.__file__).parent
STUB = PKG / "_C.pyi"


def _bindings():
    """(qualified name, object) of every function, method and property the extension defines."""
    scopes = [
        ("", _C),
        ("_nn.", _C._nn),
        ("_optim.", _C._optim),
        ("_serialize.", _C._serialize),
        ("_linalg.", _C._linalg),
    ]
    scopes += [
        (cls.__name__ + ".", cls)
        for cls in vars(_C).values()
        if isinstance(cls, type) and type(cls).__module__ == "nanobind"
    ]
    out = []
    for prefix, scope in scopes:
        for name, value in vars(scope).items():
            # Tensor's methods behind a guard (sparse paths; vmap's foreign-tensor check)
            if type(value).__name__ in ("_SparseGuard", "_ForeignGuard"):
                value = value.__wrapped__
            kind = type(value).__name__
            if kind in ("nb_func", "nb_method"):
                out.append((prefix + name, value))
            elif kind == "property" and hasattr(value.fget, "__nb_signature__"):
                out.append((prefix + name, value.fget))
    return out


BINDINGS = _bindings()


def _docs(fn):
    return [doc for _, doc, _ in fn.__nb_signature__ if doc]


def test_the_extension_has_many_bindings():
    assert len(BINDINGS) > 700


def test_every_binding_has_a_docstring():
    missing = [name for name, fn in BINDINGS if not _docs(fn)]
    assert missing == []


def test_every_binding_names_its_parameters():
    # nanobind calls unnamed parameters arg (or arg0, arg1 ...): every binding names them.
    unnamed = [
        (name, sig)
        for name, fn in BINDINGS
        for sig, _, _ in fn.__nb_signature__
        if re.search(r"\barg\d*\b", sig)
    ]
    assert unnamed == []


def test_public_docstrings_start_with_the_signature():
    # Note [Binding docstrings]: torch's signature line, a blank line, then a sentence.
    bad = []
    for name, fn in BINDINGS:
        short = fn.__name__  # aliases (Tensor.arccos is acos) keep the name they were bound as
        if name.startswith(("_nn.", "_optim.", "_serialize.")):
            continue  # kernels behind Python wrappers: a sentence is enough
        for doc in _docs(fn):
            first, _, rest = doc.partition("\n\n")
            if not first.startswith(short) or not rest.strip():
                bad.append((name, doc))
    assert bad == []


@pytest.mark.parametrize("name", ["add", "sum", "matmul", "cat", "exp", "clamp"])
def test_public_functions_have_docstrings(name):
    fn = getattr(ember, name)
    assert fn.__doc__ and name in fn.__doc__


def test_help_of_add_shows_torchs_signature_and_a_sentence():
    text = pydoc.render_doc(ember.add, renderer=pydoc.plaintext)
    assert "add(input, other, *, alpha=1) -> Tensor" in text
    assert "alpha" in text.split("-> Tensor", 2)[-1]  # the sentence says what alpha does
    method = pydoc.render_doc(ember.Tensor.add, renderer=pydoc.plaintext)
    assert "add(other, *, alpha=1) -> Tensor" in method


def test_unary_ops_and_inplace_forms_are_documented():
    assert ember.exp.__doc__.splitlines()[-1].startswith("Raises e")
    assert "exp_() -> Tensor" in ember.Tensor.exp_.__doc__
    assert "In-place form of exp()" in ember.Tensor.exp_.__doc__


def test_numpy_keyword_fallback_keeps_one_docstring():
    # The axis/keepdims overload repeats the docstring, so help() shows it once.
    doc = ember.Tensor.sum.__doc__
    assert "Overloaded function" not in doc
    assert doc.count("sum(dim=None, keepdim=False, *, dtype=None) -> Tensor") == 1


# --- the stub file ------------------------------------------------------------------------------


def test_stub_and_marker_are_installed():
    assert STUB.is_file()
    assert (PKG / "py.typed").is_file()


@pytest.fixture(scope="module")
def stub_tree():
    return ast.parse(STUB.read_text(encoding="utf-8"), filename=str(STUB))


def _functions(body):
    out = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            out.setdefault(node.name, []).append(node)
    return out


def _params(fn):
    a = fn.args
    return [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]


@pytest.mark.parametrize(
    "name,params",
    [
        ("add", ["input", "other", "alpha"]),
        ("matmul", ["input", "other"]),
        ("sum", ["input", "dim", "keepdim", "dtype"]),
        ("cat", ["tensors", "dim"]),
        ("exp", ["input"]),
        ("index_select", ["input", "dim", "index"]),
        ("lerp", ["input", "end", "weight"]),
        ("tril", ["input", "diagonal"]),
    ],
)
def test_stub_declares_functions_with_parameters(stub_tree, name, params):
    fns = _functions(stub_tree.body)
    assert name in fns
    assert any(_params(f) == params for f in fns[name])
    assert any(ast.get_docstring(f) for f in fns[name])


def test_stub_declares_tensor_and_its_methods(stub_tree):
    classes = {n.name: n for n in stub_tree.body if isinstance(n, ast.ClassDef)}
    for cls in ("Tensor", "dtype", "Generator"):
        assert cls in classes
    methods = _functions(classes["Tensor"].body)
    for name, params in [
        ("add", ["self", "other", "alpha"]),
        ("add_", ["self", "other", "alpha"]),
        ("matmul", ["self", "other"]),
        ("sum", ["self", "dim", "keepdim", "dtype"]),
        ("__add__", ["self", "other"]),
        ("view", ["self"]),
        ("exp", ["self"]),
    ]:
        assert name in methods, name
        assert any(_params(f) == params for f in methods[name]), (
            name,
            [_params(f) for f in methods[name]],
        )
    assert ast.get_docstring(classes["Tensor"])


def test_stub_executes(stub_tree):
    # A stub is never imported by Python itself; executing it (annotations unevaluated, as a type
    # checker reads them) checks that it is well-formed Python whose names resolve.
    code = compile(
        stub_tree, str(STUB), "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True
    )
    namespace = {"__name__": "ember._C_stub"}
    exec(code, namespace)
    assert callable(namespace["add"])
    assert isinstance(namespace["Tensor"], type)
    assert hasattr(namespace["Tensor"], "add")


def test_stub_covers_every_public_function():
    text = STUB.read_text(encoding="utf-8")
    names = [
        n for n, v in vars(_C).items() if type(v).__name__ == "nb_func" and not n.startswith("_")
    ]
    missing = [n for n in names if not re.search(rf"^def {re.escape(n)}\(", text, re.M)]
    assert missing == []
