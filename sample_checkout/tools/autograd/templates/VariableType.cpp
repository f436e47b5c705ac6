// opindex sample: a codegen template (not compiled). gen_variable_type.py writes one autograd kernel per op
// that has a derivatives.yaml entry: it records the backward node, then redispatches below Autograd.
#include "torch/csrc/autograd/VariableTypeUtils.h"

namespace torch::autograd::VariableType {

${type_derived_method_definitions}

} // namespace torch::autograd::VariableType
