"""ONNXProgram: what ember.onnx.export returns with dynamo=True (torch 2.13's default), an
exported ONNX model that can be saved, run with ONNX Runtime, optimized and re-weighted."""

import os

__all__ = ["ONNXProgram"]

_TWO_GB = 2 * 1024**3


def _array(t):
    """A numpy copy of an ember tensor (bfloat16, which numpy lacks, as float32)."""
    from .. import _C

    if not isinstance(t, _C.Tensor):
        return __import__("numpy").asarray(t)
    t = t.detach()
    if t.dtype == _C.bfloat16:
        t = t.float()
    return t.contiguous().numpy()


class ONNXProgram:
    """ONNXProgram(model_proto, exported_program)

    An exported model: ``model_proto`` (an ``onnx.ModelProto``), ``save()``, calling it runs the
    model with ONNX Runtime on ember tensors, ``optimize()`` folds constants,
    ``apply_weights()`` swaps initializer values."""

    def __init__(self, model_proto, exported_program=None):
        self.model_proto = model_proto
        self.exported_program = exported_program
        self._session = None

    def __repr__(self):
        graph = self.model_proto.graph
        ins = ", ".join(i.name for i in graph.input)
        outs = ", ".join(o.name for o in graph.output)
        return (
            f"ONNXProgram(inputs=[{ins}], outputs=[{outs}], nodes={len(graph.node)}, "
            f"initializers={len(graph.initializer)})"
        )

    def save(
        self,
        destination,
        *,
        include_initializers=True,
        keep_initializers_as_inputs=False,
        external_data=None,
    ):
        """save(destination, *, include_initializers=True, keep_initializers_as_inputs=False,
            external_data=None) -> None

        Writes the model to a path (atomically) or a binary file object. Without
        include_initializers the weights are left out; keep_initializers_as_inputs lists them
        as graph inputs too; external_data (default: when the model exceeds 2 GB) writes the
        weights beside the model in `<destination>.data`."""
        onnx = __import__("onnx")
        from ._exporter import write

        proto = onnx.ModelProto()
        proto.CopyFrom(self.model_proto)
        graph = proto.graph
        if keep_initializers_as_inputs:
            listed = {i.name for i in graph.input}
            for t in graph.initializer:
                if t.name not in listed:
                    graph.input.append(
                        onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                    )
        if not include_initializers:
            del graph.initializer[:]
        if external_data is None:
            external_data = proto.ByteSize() > _TWO_GB
        if not external_data or hasattr(destination, "write"):
            write(proto, destination)
            return
        path = os.fspath(destination)
        location = os.path.basename(path) + ".data"
        onnx.external_data_helper.convert_model_to_external_data(
            proto, all_tensors_to_one_file=True, location=location, size_threshold=0
        )
        tmp = path + ".tmp"
        onnx.save_model(proto, tmp)  # writes the weights to <dir>/<location> as well
        os.replace(tmp, path)

    def __call__(self, *args, **kwargs):
        """Runs the model with ONNX Runtime on ember tensors; returns a list of ember tensors."""
        from .. import _C
        from .._ops.creation import as_tensor

        if self._session is None:
            self.initialize_inference_session()
        tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, _C.Tensor)]
        names = [i.name for i in self._session.get_inputs()]
        if len(tensors) != len(names):
            raise ValueError(
                f"ONNXProgram: the model takes {len(names)} inputs ({', '.join(names)}); "
                f"got {len(tensors)} tensors"
            )
        feed = {n: _array(t) for n, t in zip(names, tensors)}
        return [as_tensor(r) for r in self._session.run(None, feed)]

    def initialize_inference_session(self, initializer=None):
        """initialize_inference_session(initializer=None) -> None

        Creates the ONNX Runtime session calls use (initializer(model_bytes) may build it)."""
        data = self.model_proto.SerializeToString()
        if initializer is not None:
            self._session = initializer(data)
            return
        import onnxruntime

        self._session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])

    def release(self):
        """release() -> None

        Drops the inference session (its memory)."""
        self._session = None

    def optimize(self):
        """optimize() -> None

        Folds the model's constant subgraphs into initializers, in place."""
        from ._constant_folding import fold_constants

        fold_constants(self.model_proto)
        self._session = None

    def apply_weights(self, state_dict):
        """apply_weights(state_dict) -> None

        Replaces the values of the initializers named in state_dict (shapes must match)."""
        from onnx import numpy_helper

        by_name = {t.name: i for i, t in enumerate(self.model_proto.graph.initializer)}
        for name, value in state_dict.items():
            if name not in by_name:
                continue
            old = self.model_proto.graph.initializer[by_name[name]]
            array = _array(value)
            if tuple(array.shape) != tuple(old.dims):
                raise ValueError(
                    f"ONNXProgram.apply_weights: '{name}' has shape {tuple(old.dims)} in the "
                    f"model; got {tuple(array.shape)}"
                )
            new = numpy_helper.from_array(array.astype(numpy_helper.to_array(old).dtype), name)
            old.CopyFrom(new)
        self._session = None
