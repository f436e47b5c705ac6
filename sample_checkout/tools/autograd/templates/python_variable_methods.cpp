// opindex sample: a codegen template (not compiled). gen_python_functions.py fills ${...} with one
// binding per native_functions.yaml entry whose variants include "method".
#include <Python.h>

namespace torch::autograd {

${py_methods}

PyMethodDef variable_methods[] = {
  ${py_method_defs}
  {nullptr}
};

} // namespace torch::autograd
