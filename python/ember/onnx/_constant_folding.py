"""Constant folding of an exported ONNX graph (export's do_constant_folding / optimize): a node
whose inputs are all initializers or constants is computed once, with onnx's reference
evaluator, and its outputs become initializers (a transposed or reshaped weight, shape
arithmetic on known sizes). Nodes that draw random numbers stay."""

_NONDETERMINISTIC = {
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
    "Multinomial",
    "Bernoulli",
    "Dropout",
}


def _evaluate(onnx, node, values, opset_imports):
    from onnx.reference import ReferenceEvaluator

    inputs = [onnx.helper.make_tensor_value_info(n, 0, None) for n in node.input if n]
    outputs = [onnx.helper.make_tensor_value_info(n, 0, None) for n in node.output if n]
    graph = onnx.helper.make_graph([node], "fold", inputs, outputs)
    model = onnx.helper.make_model(graph, opset_imports=opset_imports)
    session = ReferenceEvaluator(model)
    results = session.run(None, {n: values[n] for n in node.input if n})
    return dict(zip([n for n in node.output if n], results))


def fold_constants(model):
    """Folds `model`'s constant subgraphs into initializers, in place; returns the number of
    nodes removed."""
    onnx = __import__("onnx")
    from onnx import numpy_helper

    graph = model.graph
    values = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    graph_inputs = {i.name for i in graph.input}
    for name in graph_inputs:  # initializers that are also inputs can be overridden at run time
        values.pop(name, None)
    kept, folded = [], {}
    for node in graph.node:
        constant = node.op_type == "Constant" or (
            node.input
            and all(n == "" or n in values for n in node.input)
            and node.domain in ("", "ai.onnx")
            and node.op_type not in _NONDETERMINISTIC
            and not any(a.type == onnx.AttributeProto.GRAPH for a in node.attribute)
        )
        if not constant:
            kept.append(node)
            continue
        try:
            results = _evaluate(onnx, node, values, model.opset_import)
        except Exception:  # an operator the reference evaluator lacks: keep it
            kept.append(node)
            continue
        values.update(results)
        folded.update(results)
    if len(kept) == len(graph.node):
        return 0
    used = {n for node in kept for n in node.input} | {o.name for o in graph.output}
    removed = len(graph.node) - len(kept)
    del graph.node[:]
    graph.node.extend(kept)
    for name, value in folded.items():
        if name in used:
            graph.initializer.append(numpy_helper.from_array(value, name))
    # initializers nothing reads any more (the weights a fold consumed)
    live = [t for t in graph.initializer if t.name in used or t.name in graph_inputs]
    del graph.initializer[:]
    graph.initializer.extend(live)
    return removed
