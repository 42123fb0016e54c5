"""ember's Python-level ops, one module per family as in csrc/ember/ops: creation, random,
elementwise, reduce, sort, shape, index, products, linalg, nn (torch's top-level forms of nn ops),
attributes, inplace (torch's top-level in-place forms), quantized (quantized tensors) and extras
(functions composed of the others); tensor
holds the Python protocols and conversions of Tensor. Each family lists its public names in
__all__, which the package root imports; `_tensor_methods` is the one table that gives Tensor
its Python-level methods.

Nothing here imports the package root at import time: each module imports the specific modules
(ember._C, another family) whose names it uses."""
