from .module import Module
from .linear import Linear
from .activation import ReLU, Softmax
from .normalization import LayerNorm
from .rnn import RNNBase, LSTM

__all__ = ["Module", "Linear", "ReLU", "Softmax", "LayerNorm", "RNNBase", "LSTM"]
