"""Fixes found by the session-21 real programs (tests/python/torch_scripts/p17_*)."""

import subprocess
import sys
import textwrap


def test_functions_held_from_before_a_mode_still_deep_copy_by_name():
    # p17 probe: after a MaskedTensor call (a __torch_function__ subclass: ember then routes the
    # public functions through wrappers), nn.Transformer's deepcopy of a layer holding F.relu
    # raised "cannot pickle '_SparseGuard' object". In a subprocess: the routing stays on.
    code = textwrap.dedent(
        """
        import copy, pickle
        import ember
        import ember.nn.functional as F
        relu = F.relu
        x = ember.linspace(-2, 2, 6)
        ember.masked.masked_tensor(x, x > 0).sum()
        layer = ember.nn.TransformerEncoderLayer(8, 2, 16)
        assert copy.deepcopy(layer).activation == relu
        assert pickle.loads(pickle.dumps(relu)) == relu
        model = ember.nn.Transformer(8, 2, 1, 1, 16, batch_first=True)
        print(tuple(model(ember.ones(2, 3, 8), ember.ones(2, 4, 8)).shape))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["(2,", "4,", "8)"]
