import torch
from torch import _VF, Tensor
from torch.nn.parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "LSTM"]


class RNNBase(Module):
    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False):
        super().__init__()
        self.mode = mode
        self.num_layers = num_layers
        self.bias = bias
        self.dropout = dropout
        self.batch_first = batch_first
        self.bidirectional = bidirectional
        self.weight_ih_l0 = Parameter(torch.empty((4 * hidden_size, input_size)))
        self.weight_hh_l0 = Parameter(torch.empty((4 * hidden_size, hidden_size)))
        self._flat_weights = [self.weight_ih_l0, self.weight_hh_l0]
        self.register_buffer("_sample_steps", torch.zeros(1), persistent=False)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        result = _VF.lstm(input, hx, self._flat_weights, self.bias, self.num_layers, self.dropout,
                          self.training, self.bidirectional, self.batch_first)
        return result[0], result[1:]
