"""ember.optim: optimizers and learning-rate schedulers, as torch.optim."""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta, Adamax
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam, RAdam
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .rprop_asgd import ASGD, Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = [
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adamax",
    "Adam",
    "AdamW",
    "ASGD",
    "LBFGS",
    "Muon",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SGD",
    "SparseAdam",
    "lr_scheduler",
    "swa_utils",
]
