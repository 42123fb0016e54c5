"""ember.distributed.tensor.parallel: tensor parallelism by module (torch's
torch.distributed.tensor.parallel).

parallelize_module(module, mesh, plan) applies a ParallelStyle to each named submodule:
ColwiseParallel shards a Linear's weight by output features (an Embedding's by embedding dim),
RowwiseParallel by input features (an Embedding's by vocabulary), SequenceParallel keeps the
parameters replicated and the activations sharded along the sequence dim, and
PrepareModuleInput / PrepareModuleOutput only lay out a module's inputs and outputs. The styles
turn the parameters into DTensors and add forward hooks that convert the inputs to the layout
the module computes in and the outputs to the layout the plan asks for.
"""

import fnmatch

from .._api import DTensor, Replicate, Shard, distribute_tensor
from ._loss import loss_parallel

__all__ = [
    "ColwiseParallel",
    "ParallelStyle",
    "PrepareModuleInput",
    "PrepareModuleInputOutput",
    "PrepareModuleOutput",
    "RowwiseParallel",
    "SequenceParallel",
    "loss_parallel",
    "parallelize_module",
]


def _nn():
    from .... import nn

    return nn


def _to_dtensor(x, mesh, layout, desired):
    """x (a local piece laid out as `layout`, or a DTensor) moved to `desired`."""
    if layout is None or not hasattr(x, "dim"):
        return x
    if not isinstance(x, DTensor):
        # pieces of equal size, as torch assumes here (no collective to learn the shape)
        shape = list(x.shape)
        if isinstance(layout, Shard):
            shape[layout.dim] *= mesh.size()
        x = DTensor.from_local(x, mesh, (layout,), run_check=False, shape=shape)
    if desired is not None and x.placements != (desired,):
        x = x.redistribute(mesh, (desired,))
    return x


def _shard_params(module, mesh, placements):
    """Replaces module's direct parameters by DTensor parameters (name -> placement)."""
    nn = _nn()
    for name, p in list(module.named_parameters(recurse=False)):
        pl = placements.get(name, Replicate())
        dt = distribute_tensor(p.detach(), mesh, [pl], src_data_rank=None)
        module._parameters[name] = nn.Parameter(dt, p.requires_grad)


class ParallelStyle:
    """How parallelize_module lays out one module (a base class)."""

    def _apply(self, module, device_mesh):
        raise NotImplementedError


class ColwiseParallel(ParallelStyle):
    """ColwiseParallel(*, input_layouts=None, output_layouts=None, use_local_output=True)

    Shards a Linear by output features (an Embedding by embedding dim): the input is made
    Replicate (from input_layouts, default Replicate()), the output comes out Shard(-1) and is
    moved to output_layouts (default Shard(-1)); use_local_output returns its local piece."""

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        self.input_layouts = input_layouts or Replicate()
        self.output_layouts = output_layouts or Shard(-1)
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        nn = _nn()
        if isinstance(module, nn.Embedding):
            _shard_params(module, device_mesh, {"weight": Shard(1)})
        elif isinstance(module, nn.Linear):
            _shard_params(module, device_mesh, {"weight": Shard(0), "bias": Shard(0)})
        else:
            raise NotImplementedError(
                f"ColwiseParallel: expected an nn.Linear or nn.Embedding; got "
                f"{type(module).__name__}"
            )
        layout, use_local = self.input_layouts, self.use_local_output
        out_layout = self.output_layouts

        def pre(mod, inputs):
            return tuple(_to_dtensor(x, device_mesh, layout, Replicate()) for x in inputs)

        def post(mod, inputs, out):
            out = out.redistribute(device_mesh, (out_layout,))
            return out.to_local() if use_local else out

        module.register_forward_pre_hook(pre)
        module.register_forward_hook(post)
        return module

    def __repr__(self):
        return (
            f"ColwiseParallel(input_layouts={self.input_layouts}, output_layouts="
            f"{self.output_layouts}, use_local_output={self.use_local_output})"
        )


class RowwiseParallel(ParallelStyle):
    """RowwiseParallel(*, input_layouts=None, output_layouts=None, use_local_output=True)

    Shards a Linear by input features (an Embedding by vocabulary): the input is made Shard(-1)
    (Replicate for an Embedding) from input_layouts (default Shard(-1)); the partial sums the
    module computes are reduced to output_layouts (default Replicate(), Shard(d) reduce-scatters);
    use_local_output returns the local piece."""

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        self.input_layouts = input_layouts or Shard(-1)
        self.output_layouts = output_layouts or Replicate()
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        nn = _nn()
        if isinstance(module, nn.Embedding):
            _shard_params(module, device_mesh, {"weight": Shard(0)})
            desired = Replicate()
        elif isinstance(module, nn.Linear):
            _shard_params(module, device_mesh, {"weight": Shard(1), "bias": Replicate()})
            desired = Shard(-1)
        else:
            raise NotImplementedError(
                f"RowwiseParallel: expected an nn.Linear or nn.Embedding; got "
                f"{type(module).__name__}"
            )
        layout, use_local = self.input_layouts, self.use_local_output
        out_layout = self.output_layouts

        def pre(mod, inputs):
            return tuple(_to_dtensor(x, device_mesh, layout, desired) for x in inputs)

        def post(mod, inputs, out):
            out = out.redistribute(device_mesh, (out_layout,))
            return out.to_local() if use_local else out

        module.register_forward_pre_hook(pre)
        module.register_forward_hook(post)
        return module


class SequenceParallel(ParallelStyle):
    """SequenceParallel(*, sequence_dim=1, use_local_output=False)

    Replicates the module's parameters and runs it on activations sharded along sequence_dim
    (a norm, dropout or other per-token module): a plain input is taken as this rank's piece of
    the sequence; the output stays Shard(sequence_dim)."""

    def __init__(self, *, sequence_dim=1, use_local_output=False):
        self.sequence_dim = sequence_dim
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        _shard_params(module, device_mesh, {})
        seq, use_local = self.sequence_dim, self.use_local_output

        def pre(mod, inputs):
            return tuple(_to_dtensor(x, device_mesh, Shard(seq), Shard(seq)) for x in inputs)

        def post(mod, inputs, out):
            return out.to_local() if use_local and isinstance(out, DTensor) else out

        module.register_forward_pre_hook(pre)
        module.register_forward_hook(post)
        return module


def _layouts(layouts):
    if layouts is None:
        return None
    return tuple(layouts) if isinstance(layouts, (list, tuple)) else (layouts,)


class PrepareModuleInput(ParallelStyle):
    """PrepareModuleInput(*, input_layouts=None, desired_input_layouts=None,
        input_kwarg_layouts=None, desired_input_kwarg_layouts=None, use_local_output=False)

    Lays out the module's inputs: each positional input given by input_layouts (None: left
    alone) is made a DTensor and moved to desired_input_layouts; likewise the keyword inputs;
    use_local_output hands the module the local pieces."""

    def __init__(
        self,
        *,
        input_layouts=None,
        desired_input_layouts=None,
        input_kwarg_layouts=None,
        desired_input_kwarg_layouts=None,
        use_local_output=False,
    ):
        self.input_layouts = _layouts(input_layouts)
        self.desired_input_layouts = _layouts(desired_input_layouts)
        if (self.input_layouts is None) != (self.desired_input_layouts is None) or (
            self.input_layouts and len(self.input_layouts) != len(self.desired_input_layouts)
        ):
            raise AssertionError(
                "input_layouts and desired_input_layouts should have the same length!"
            )
        self.input_kwarg_layouts = input_kwarg_layouts or {}
        self.desired_input_kwarg_layouts = desired_input_kwarg_layouts or {}
        self.use_local_output = use_local_output

    def _prepare(self, x, mesh, layout, desired):
        x = _to_dtensor(x, mesh, layout, desired)
        return x.to_local() if self.use_local_output and isinstance(x, DTensor) else x

    def _apply(self, module, device_mesh):
        def pre(mod, args, kwargs):
            if self.input_layouts is not None:
                if len(args) < len(self.input_layouts):
                    raise ValueError(
                        f"PrepareModuleInput: expected {len(self.input_layouts)} inputs; "
                        f"got {len(args)}"
                    )
                args = tuple(
                    self._prepare(x, device_mesh, lay, want)
                    for x, lay, want in zip(args, self.input_layouts, self.desired_input_layouts)
                ) + tuple(args[len(self.input_layouts) :])
            kwargs = dict(kwargs)
            for key, lay in self.input_kwarg_layouts.items():
                if key in kwargs:
                    want = self.desired_input_kwarg_layouts.get(key)
                    kwargs[key] = self._prepare(kwargs[key], device_mesh, lay, want)
            return args, kwargs

        module.register_forward_pre_hook(pre, with_kwargs=True)
        return module


class PrepareModuleOutput(ParallelStyle):
    """PrepareModuleOutput(*, output_layouts, desired_output_layouts, use_local_output=True)

    Lays out the module's outputs: each given by output_layouts is made a DTensor and moved to
    desired_output_layouts; use_local_output returns the local pieces."""

    def __init__(self, *, output_layouts, desired_output_layouts, use_local_output=True):
        self.output_layouts = _layouts(output_layouts)
        self.desired_output_layouts = _layouts(desired_output_layouts)
        if len(self.output_layouts) != len(self.desired_output_layouts):
            raise AssertionError(
                "output_layouts and desired_output_layouts should have the same length!"
            )
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        def post(mod, inputs, out):
            single = not isinstance(out, tuple)
            outs = (out,) if single else out
            res = []
            for x, lay, want in zip(outs, self.output_layouts, self.desired_output_layouts):
                x = _to_dtensor(x, device_mesh, lay, want)
                res.append(x.to_local() if self.use_local_output and isinstance(x, DTensor) else x)
            res += list(outs[len(res) :])
            return res[0] if single else tuple(res)

        module.register_forward_hook(post)
        return module


class PrepareModuleInputOutput(ParallelStyle):
    """PrepareModuleInputOutput(*, input_layouts=None, desired_input_layouts=None,
        input_kwarg_layouts=None, desired_input_kwarg_layouts=None, use_local_input=False,
        output_layouts, desired_output_layouts, use_local_output=True)

    PrepareModuleInput and PrepareModuleOutput on the same module: lays out its inputs
    (use_local_input hands it the local pieces) and its outputs."""

    def __init__(
        self,
        *,
        input_layouts=None,
        desired_input_layouts=None,
        input_kwarg_layouts=None,
        desired_input_kwarg_layouts=None,
        use_local_input=False,
        output_layouts,
        desired_output_layouts,
        use_local_output=True,
    ):
        self.prepare_module_input = PrepareModuleInput(
            input_layouts=input_layouts,
            desired_input_layouts=desired_input_layouts,
            input_kwarg_layouts=input_kwarg_layouts,
            desired_input_kwarg_layouts=desired_input_kwarg_layouts,
            use_local_output=use_local_input,
        )
        self.prepare_module_output = PrepareModuleOutput(
            output_layouts=output_layouts,
            desired_output_layouts=desired_output_layouts,
            use_local_output=use_local_output,
        )

    def _apply(self, module, device_mesh):
        self.prepare_module_input._apply(module, device_mesh)
        self.prepare_module_output._apply(module, device_mesh)
        return module


def parallelize_module(module, device_mesh=None, parallelize_plan=None, *, src_data_rank=0):
    """parallelize_module(module, device_mesh=None, parallelize_plan=None, *, src_data_rank=0)
        -> Module

    Applies parallelize_plan to module: a ParallelStyle for the module itself, or a dict from
    submodule paths (fnmatch patterns per dotted part, like "layers.*.attn") to styles."""
    from ...device_mesh import _default_mesh

    mesh = device_mesh or _default_mesh()
    if mesh.ndim != 1:
        raise ValueError(
            f"parallelize_module: expected a 1-d DeviceMesh; got one of {mesh.ndim} dims "
            "(slice it by name)"
        )
    if parallelize_plan is None:
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        parallelize_plan._apply(module, mesh)
        return module
    if not isinstance(parallelize_plan, dict):
        raise TypeError(
            "parallelize_module: expected a ParallelStyle or a dict of them; got "
            f"{type(parallelize_plan).__name__}"
        )
    names = dict(module.named_modules())
    for path, style in parallelize_plan.items():
        if path == "":  # the module itself, as torch's
            style._apply(module, mesh)
            continue
        parts = path.split(".")
        hits = [
            n
            for n in names
            if n
            and len(n.split(".")) == len(parts)
            and all(fnmatch.fnmatch(a, b) for a, b in zip(n.split("."), parts))
        ]
        if not hits:
            raise ValueError(f"parallelize_module: no submodule matches '{path}'")
        for n in hits:
            style._apply(names[n], mesh)
    return module
