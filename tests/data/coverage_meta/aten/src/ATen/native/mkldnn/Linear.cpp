// opindex test checkout: an op of another namespace, defined by a TORCH_LIBRARY block
#include <torch/library.h>

TORCH_LIBRARY(mkldnn, m) {
  m.def("_linear_pointwise(Tensor X, Tensor W, Tensor? B, str attr) -> Tensor Y");
}
