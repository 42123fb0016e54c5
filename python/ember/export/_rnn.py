"""LSTM/GRU layers in an exported forward, as torch's export records them.

torch 2.13's export shows ``nn.LSTM(x)`` as zeros nodes for the initial states (none when the
caller passes them) and one ``aten.lstm.input(x, [h0, c0], params, has_biases, num_layers,
dropout, train, bidirectional, batch_first)`` (``gru.input`` with one state) over the flat
weight list, read by getitem. The export tracer records that call for the layer modules
(``module_call``); ``ember.ops.aten`` runs it (``install``) through the layers' own
``_rnn_forward``; ``run_decompositions`` (so save and the C++ runtime) lowers it onto one
``rnn_layer`` runtime op per layer and direction (``lower``)."""

import operator
import sys

__all__ = ["module_call", "overloads", "lower"]

_TAIL = "bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool "
_TAIL += "batch_first)"
_SCHEMAS = {
    "lstm.input": f"lstm.input(Tensor input, Tensor[] hx, Tensor[] params, {_TAIL} -> (Tensor, "
    "Tensor, Tensor)",
    "gru.input": f"gru.input(Tensor input, Tensor hx, Tensor[] params, {_TAIL} -> (Tensor, Tensor)",
}


def _ember():
    return sys.modules["ember"]


def _weights(params, has_biases, count):
    """(w_ih, w_hh, b_ih, b_hh, w_hr) per layer and direction from torch's flat list."""
    k = 4 if has_biases else 2
    out = []
    for i in range(count):
        p = list(params[i * k : (i + 1) * k])
        out.append((p[0], p[1], p[2] if has_biases else None, p[3] if has_biases else None, None))
    return out


def _run(mode, x, h0, c0, params, has_biases, num_layers, dropout, train, bidirectional, first):
    from ..nn.functional._composite import _rnn_forward

    dirs = 2 if bidirectional else 1
    weights = _weights(params, has_biases, num_layers * dirs)
    x = x.transpose(0, 1) if first else x
    out, h_n, c_n = _rnn_forward(
        mode, x, h0, c0, weights, num_layers, bidirectional, dropout, train
    )
    return (out.transpose(0, 1) if first else out), h_n, c_n


def _lstm(input, hx, params, *flags):
    return _run("LSTM", input, hx[0], hx[1], params, *flags)


def _gru(input, hx, params, *flags):
    return _run("GRU", input, hx, None, params, *flags)[:2]


def overloads():
    """``lstm.input``/``gru.input`` as (``name.overload``, schema, function) for
    ``ember.ops.aten``."""
    return ((ov, _SCHEMAS[ov], fn) for ov, fn in (("lstm.input", _lstm), ("gru.input", _gru)))


def module_call(tracer, m, args, kwargs):
    """The traced result of calling the LSTM/GRU module ``m`` as torch's export records it, or
    None to trace its forward (unbatched or packed input, projections, other layer types)."""
    from .. import fx
    from ._aten_names import overload_of

    nn = _ember().nn
    cls = nn.LSTM if isinstance(m, nn.LSTM) else nn.GRU if isinstance(m, nn.GRU) else None
    if cls is None or type(m).forward is not cls.forward or m.proj_size:
        return None  # (the tracer may call a subclass of the layer's; its own forward counts)
    names = ("input", "hx")
    bound = dict(zip(names, args))
    bound.update(kwargs)
    x, hx = bound.get("input"), bound.get("hx")
    if set(bound) - set(names) or not isinstance(x, fx.Proxy):
        return None
    val = x.node.meta.get("val")
    if not isinstance(val, _ember().Tensor) or val.dim() != 3 or val.size(-1) != m.input_size:
        return None  # the forward's own checks and unbatched path
    if not tracer._all_static(x.node):
        return None  # a dynamic batch: the initial states' size is not a number
    lstm = cls is nn.LSTM
    dirs = 2 if m.bidirectional else 1

    def record(target, args, kwargs, value):
        # the example value is computed here, on real tensors: the tracer's own run of the call
        # would record the ops inside it (factories, the layers' Python)
        node = tracer.create_node("call_function", target, tracer.create_arg(args), kwargs)
        node.meta["val"] = value
        return tracer.proxy(node)

    if hx is None:
        size = [m.num_layers * dirs, val.size(0 if m.batch_first else 1), m.hidden_size]
        options = {"dtype": val.dtype, "device": val.device}

        def zeros():
            return record(_ember().zeros, (size,), dict(options), val.new_zeros(size))

        hx = [zeros(), zeros()] if lstm else zeros()
    elif lstm:
        hx = list(hx)
    flags = (m.bias, m.num_layers, float(m.dropout), m.training, m.bidirectional, m.batch_first)
    # the module's own tensors (its attribute reads are the tracer's get_attr proxies)
    params = [m._parameters[name] for name in m._flat_weights_names]
    target = overload_of("lstm.input" if lstm else "gru.input")
    args = (x, hx, params) + flags
    real = fx.node.map_aggregate(
        args, lambda v: v.node.meta["val"] if isinstance(v, fx.Proxy) else v
    )
    with _ember().no_grad():
        value = target(*real)
    r = record(target, args, {}, value)
    return (r[0], (r[1], r[2])) if lstm else (r[0], r[1])


def _decomposition(node):
    """A function of the node's arguments computing its results from runtime ops, or None."""
    name = getattr(getattr(node.target, "overloadpacket", None), "_name", None)
    if name not in ("lstm", "gru") or node.target._overloadname != "input" or node.kwargs:
        return None
    has_biases, num_layers, dropout, train, bidirectional, first = node.args[3:]
    if train and dropout and num_layers > 1:
        return None  # dropout between layers draws random numbers: kept (save refuses it)
    mode = name.upper()
    dirs = 2 if bidirectional else 1

    def compute(x, hx, params, *flags):
        e = _ember()
        rnn_layer = e._C._nn.rnn_layer
        h0, c0 = (hx[0], hx[1]) if mode == "LSTM" else (hx, None)
        weights = _weights(params, has_biases, num_layers * dirs)
        inp = x.transpose(0, 1) if first else x
        hs, cs = [], []
        for layer in range(num_layers):
            outs = []
            for d in range(dirs):
                i = layer * dirs + d
                w_ih, w_hh, b_ih, b_hh, _ = weights[i]
                c = c0[i] if c0 is not None else None
                call = (inp, h0[i], c, w_ih, w_hh, b_ih, b_hh, mode, d == 1)
                r = inp.tracer.create_proxy("call_function", rnn_layer, call, {})
                outs.append(r[0])
                hs.append(r[1])
                cs.append(r[2])
            inp = e.cat(outs, 2) if dirs == 2 else outs[0]
        out = inp.transpose(0, 1) if first else inp
        results = (out, e.stack(hs, 0))
        return results + (e.stack(cs, 0),) if mode == "LSTM" else results

    return compute


def lower(graph):
    """``graph`` with each lstm/gru call replaced by runtime ops (a new Graph; the same one when
    there is none); the getitem nodes reading it read the lowered results."""
    from .. import fx
    from ._decomp import splice

    nodes = list(graph.nodes)
    found = {n: fn for n in nodes for fn in [_decomposition(n)] if fn is not None}
    if not found:
        return graph
    new, env, results = fx.Graph(), {}, {}
    for node in nodes:
        if node in found:
            results[node] = splice(new, found[node], node.args, lambda n: env[n], node.meta)
            for result, value in zip(results[node], node.meta["val"]):
                result.meta["val"] = value
        elif node.target is operator.getitem and node.args[0] in results:
            env[node] = results[node.args[0]][node.args[1]]
        else:
            env[node] = new.node_copy(node, lambda n: env[n])
            env[node].meta.update(node.meta)
    new.lint()
    return new
