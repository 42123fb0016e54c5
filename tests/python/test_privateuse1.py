"""A custom backend on the PrivateUse1 key, as torch's out-of-tree backends: a small Python backend
("emberdev") whose memory comes from a registered allocator over host memory and whose kernels are
registered with ember.library for the PrivateUse1 key. Renaming the backend is once per process,
so each test runs in a fresh interpreter."""

import subprocess
import sys
import textwrap

import pytest

_BACKEND = textwrap.dedent(
    """
    import types
    import numpy as np
    import ember
    from ember import Tensor

    ember._C._privateuse1_register_host_allocator()
    ember.utils.rename_privateuse1_backend("emberdev")
    ember.utils.generate_methods_for_privateuse1_backend()
    runtime = types.ModuleType("emberdev")
    runtime.is_available = lambda: True
    runtime.device_count = lambda: 1
    ember._register_device_module("emberdev", runtime)
    """
)


def _run(body):
    code = _BACKEND + textwrap.dedent(body)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_device_tensors_come_from_the_backends_allocator():
    _run(
        """
        allocs, frees, live = ember._C._privateuse1_host_allocator_stats()
        x = ember.empty(3, device="emberdev")
        assert ember._C._privateuse1_host_allocator_stats()[0] == allocs + 1
        assert ember._C._privateuse1_host_allocator_stats()[2] == live + 12
        assert x.device == ember.device("emberdev:0") and x.device.type == "emberdev"
        assert str(x.device) == "emberdev:0" and x.is_emberdev and not x.is_cpu
        del x
        assert ember._C._privateuse1_host_allocator_stats()[1] == frees + 1
        assert ember.emberdev is runtime and ember.emberdev.is_available()

        y = ember.tensor([1.0, 2.0, 3.0]).to("emberdev")
        assert y.device.type == "emberdev"
        assert repr(y) == "tensor([1., 2., 3.], device='emberdev:0')"
        assert y.cpu().tolist() == [1.0, 2.0, 3.0] and y.cpu().device.type == "cpu"
        z = ember.ones(2, 2, device="emberdev", requires_grad=True)
        assert z.is_leaf and z.requires_grad and z.device.type == "emberdev"
        assert ember.zeros(2).emberdev().device.type == "emberdev"
        assert ember.full((2,), 7.0, device=ember.device("emberdev")).cpu().tolist() == [7.0, 7.0]
        assert ember.randn(4, device="emberdev").device.type == "emberdev"
        try:
            ember.device("nodev")
        except RuntimeError as e:
            assert "emberdev" in str(e)
        else:
            raise AssertionError("expected RuntimeError")
        try:
            ember.utils.rename_privateuse1_backend("other")
        except RuntimeError as e:
            assert "has already been set" in str(e)
        else:
            raise AssertionError("expected RuntimeError")
        """
    )


def test_missing_kernel_raises_not_implemented_naming_op_and_backend():
    _run(
        """
        x = ember.ones(3, device="emberdev")
        try:
            x.exp()
        except NotImplementedError as e:
            msg = str(e)
            assert "exp" in msg and "PrivateUse1" in msg and "emberdev" in msg, msg
        else:
            raise AssertionError("expected NotImplementedError")
        """
    )


def test_kernels_registered_for_the_key_run_for_device_tensors():
    _run(
        """
        calls = []

        @ember.library.custom_op("emdev::scale", mutates_args=())
        def scale(x: Tensor, s: float) -> Tensor:
            calls.append("cpu")
            return x * s

        @scale.register_kernel("emberdev")
        def _(x, s):
            calls.append("emberdev")
            host = x.cpu().numpy() * s  # the backend computes on its memory (host memory here)
            return ember.from_numpy(host).to("emberdev")

        lib = ember.library.Library("emdev", "FRAGMENT")
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: (x.cpu() * 2).to("emberdev"), "PrivateUse1")

        x = ember.tensor([1.0, 2.0])
        assert scale(x, 3.0).tolist() == [3.0, 6.0] and calls == ["cpu"]
        d = scale(x.to("emberdev"), 3.0)
        assert calls == ["cpu", "emberdev"] and d.device.type == "emberdev"
        assert d.cpu().tolist() == [3.0, 6.0]
        assert ember.ops.emdev.twice(x.to("emberdev")).cpu().tolist() == [2.0, 4.0]
        try:
            ember.ops.emdev.twice(x)
        except NotImplementedError as e:
            assert "emdev::twice" in str(e) and "CPU" in str(e)
        else:
            raise AssertionError("expected NotImplementedError")
        """
    )


def test_training_step_on_the_backend_with_cpu_fallback_matches_cpu():
    out = _run(
        """
        ember._C._set_privateuse1_cpu_fallback(True)
        ember.manual_seed(0)
        cpu_model = ember.nn.Sequential(
            ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 2)
        )
        dev_model = ember.nn.Sequential(
            ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 2)
        )
        dev_model.load_state_dict(cpu_model.state_dict())
        dev_model.emberdev()
        assert all(p.device.type == "emberdev" for p in dev_model.parameters())
        x = ember.randn(16, 4)
        y = ember.randint(0, 2, (16,))
        results = []
        for model, xs, ys in ((cpu_model, x, y), (dev_model, x.to("emberdev"), y.to("emberdev"))):
            opt = ember.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(3):
                opt.zero_grad()
                loss = ember.nn.functional.cross_entropy(model(xs), ys)
                loss.backward()
                opt.step()
            results.append([p.detach().cpu().numpy() for p in model.parameters()])
            results.append(loss.item())
        for a, b in zip(results[0], results[2]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        assert abs(results[1] - results[3]) < 1e-5
        assert loss.device.type == "emberdev"
        print("ok", results[3])
        """
    )
    assert out.startswith("ok")


def test_gradients_flow_through_to_and_from_the_device():
    _run(
        """
        ember._C._set_privateuse1_cpu_fallback(True)
        x = ember.tensor([1.0, 2.0], requires_grad=True)
        d = x.to("emberdev")
        assert type(d.grad_fn).__name__ == "ToCopyBackward0"
        (d * d).sum().backward()
        assert x.grad.tolist() == [2.0, 4.0] and x.grad.device.type == "cpu"
        """
    )


@pytest.mark.parametrize("name", ["privateuseone"])
def test_unrenamed_backend_has_no_methods(name):
    code = (
        "import ember\n"
        "try:\n"
        "    ember.utils.generate_methods_for_privateuse1_backend()\n"
        "except RuntimeError as e:\n"
        "    assert 'rename' in str(e)\n"
        "else:\n"
        "    raise AssertionError\n"
        f"assert ember._C._get_privateuse1_backend_name() == {name!r}\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr


def test_reading_values_copies_them_from_the_device():
    _run(
        """
        x = ember.tensor([[1.5, 2.0], [3.0, 4.0]], device="emberdev")
        assert x.tolist() == [[1.5, 2.0], [3.0, 4.0]]
        assert ember.tensor([2.5], device="emberdev").item() == 2.5
        try:
            x.numpy()
        except TypeError as e:
            assert "can't convert emberdev:0 device type tensor to numpy" in str(e)
        else:
            raise AssertionError("expected TypeError")
        """
    )
