// opindex sample: a codegen template (not compiled). One binding per entry with variants: function and no
// python_module, exposed as torch.<name>.
#include <Python.h>

namespace torch::autograd {

${py_forwards}

static PyMethodDef torch_functions[] = {
  ${py_method_defs}
  {nullptr}
};

} // namespace torch::autograd
