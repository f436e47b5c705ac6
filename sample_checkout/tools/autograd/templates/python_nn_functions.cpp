// opindex sample: a codegen template (not compiled). Entries with python_module: nn become torch._C._nn.<name>.
#include <Python.h>

namespace torch::autograd {

${py_forwards}

static PyMethodDef nn_functions[] = {
  ${py_method_defs}
  {nullptr}
};

} // namespace torch::autograd
