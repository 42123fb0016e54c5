"""Guards on attributes of global objects and closure variables a compiled function reads
(``cfg.scale``): changing one re-captures, so results always equal eager ones."""

import sys
import types

import numpy as np
import pytest

import ember


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


class Counter:
    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward


class Cfg:
    mode = "double"

    def __init__(self):
        self.scale = 2.0
        self.sub = types.SimpleNamespace(bias=1.0, weight=ember.ones(3))
        self.names = ["a"]

    @property
    def computed(self):
        return self.scale * 10


class Slotted:
    __slots__ = ("k",)

    def __init__(self):
        self.k = 3.0


cfg = Cfg()
slotted = Slotted()
settings = types.ModuleType("ember_test_settings")
settings.factor = 4.0
sys.modules["ember_test_settings"] = settings


def uses_cfg(x):
    y = x * cfg.scale + cfg.sub.bias
    return y * 2 if cfg.mode == "double" else y


def uses_tensor_attr(x):
    return x * cfg.sub.weight


def uses_slots_and_module(x):
    return x * slotted.k + settings.factor


def uses_list(x):
    return x + len(cfg.names)


@pytest.fixture(autouse=True)
def _fresh():
    ember._dynamo.reset()
    saved = (cfg.scale, cfg.sub.bias, Cfg.mode, cfg.sub.weight, slotted.k, settings.factor)
    yield
    cfg.scale, cfg.sub.bias, Cfg.mode, cfg.sub.weight, slotted.k, settings.factor = saved
    cfg.names = ["a"]
    ember._dynamo.reset()


def _check(fn, cf, x):
    close(cf(x), fn(x))


def test_instance_attribute_change_recaptures():
    rec = Counter()
    cf = ember.compile(uses_cfg, backend=rec)
    x = ember.randn(3)
    _check(uses_cfg, cf, x)
    _check(uses_cfg, cf, x)
    assert len(rec.graphs) == 1
    cfg.scale = 3.0
    _check(uses_cfg, cf, x)
    assert len(rec.graphs) == 2
    cfg.scale = 2.0  # the first entry serves again
    _check(uses_cfg, cf, x)
    assert len(rec.graphs) == 2


def test_nested_and_class_attribute_change_recaptures():
    rec = Counter()
    cf = ember.compile(uses_cfg, backend=rec)
    x = ember.randn(3)
    _check(uses_cfg, cf, x)
    cfg.sub.bias = -1.5
    _check(uses_cfg, cf, x)
    Cfg.mode = "single"  # a class attribute read through the instance
    _check(uses_cfg, cf, x)
    assert len(rec.graphs) == 3


def test_tensor_attribute_identity():
    rec = Counter()
    cf = ember.compile(uses_tensor_attr, backend=rec)
    x = ember.randn(3)
    _check(uses_tensor_attr, cf, x)
    cfg.sub.weight = ember.full((3,), 5.0)
    _check(uses_tensor_attr, cf, x)
    assert len(rec.graphs) == 2


def test_slots_and_module_attributes():
    rec = Counter()
    cf = ember.compile(uses_slots_and_module, backend=rec)
    x = ember.randn(3)
    _check(uses_slots_and_module, cf, x)
    slotted.k = -2.0
    _check(uses_slots_and_module, cf, x)
    settings.factor = 0.5
    _check(uses_slots_and_module, cf, x)
    assert len(rec.graphs) == 3


def test_list_attribute_content():
    rec = Counter()
    cf = ember.compile(uses_list, backend=rec)
    x = ember.randn(3)
    _check(uses_list, cf, x)
    cfg.names.append("b")  # the same list, new content
    _check(uses_list, cf, x)
    assert len(rec.graphs) == 2


def test_closure_object_attribute():
    rec = Counter()
    local = types.SimpleNamespace(alpha=0.5)

    def fn(x):
        return x * local.alpha

    cf = ember.compile(fn, backend=rec)
    x = ember.randn(3)
    _check(fn, cf, x)
    local.alpha = 4.0
    _check(fn, cf, x)
    assert len(rec.graphs) == 2


def helper(x):
    return x - cfg.scale


def test_attribute_read_in_a_helper():
    rec = Counter()

    def fn(x):
        return helper(x) * 2

    cf = ember.compile(fn, backend=rec)
    x = ember.randn(3)
    _check(fn, cf, x)
    cfg.scale = 7.0
    _check(fn, cf, x)
    assert len(rec.graphs) == 2


def test_guards_are_reported_and_property_not_evaluated():
    def fn(x):
        return x * cfg.scale + cfg.computed

    report = str(ember._dynamo.explain(fn)(ember.randn(3)))
    assert "global cfg.scale == 2.0" in report
    assert "computed" not in report  # a property is user code: not run by the guard


def test_unchanged_attributes_hit_the_cache():
    rec = Counter()
    cf = ember.compile(uses_cfg, backend=rec)
    for _ in range(3):
        x = ember.randn(3)
        _check(uses_cfg, cf, x)
    cfg.unrelated = 1  # an attribute the function does not read
    _check(uses_cfg, cf, ember.randn(3))
    assert len(rec.graphs) == 1
