"""C++ operators on Tensors and the ops they call: ATen's TensorOperators.h defines `a * b` as `a.mul(b)`, `-a` as
`a.neg()`, `a == b` as `a.eq(b)`, `~a` as `a.bitwise_not()`, `a += b` as `a.add_(b)`. A composite kernel written
with them (cross_entropy's label smoothing: `(1 - label_smoothing) * nllloss + ret * ...`) calls those ops; the
index records each such expression on a Tensor as a call of the operator (extract/cpp_operators.py) and the trace
walks it as the op (trace/walk/)."""
from __future__ import annotations

# callee as the index records it -> the Tensor method (op) it calls
TENSOR_OPERATORS = {  # those extract/cpp_operators.py records (not <, >, <=, >=, %: rare on Tensors in kernels)
    "operator+": "add", "operator-": "sub", "operator*": "mul", "operator/": "div",
    "operator==": "eq", "operator!=": "ne", "operator&": "bitwise_and", "operator|": "bitwise_or",
    "operator^": "bitwise_xor",
    "operator+=": "add_", "operator-=": "sub_", "operator*=": "mul_", "operator/=": "div_",
    "operator&=": "bitwise_and_", "operator|=": "bitwise_or_", "operator^=": "bitwise_xor_",
    "unary operator-": "neg", "unary operator~": "bitwise_not",
}
