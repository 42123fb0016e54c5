import torch

print("imported", torch.__name__)
import torch.nn.not_a_real_submodule  # noqa: E402,F401
