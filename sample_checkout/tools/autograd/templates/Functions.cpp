// opindex sample: a codegen template (not compiled). Each derivatives.yaml formula becomes the apply() of a
// backward Node subclass here.
#include "torch/csrc/autograd/generated/Functions.h"

namespace torch::autograd::generated {

${autograd_function_definitions}

} // namespace torch::autograd::generated
