// An out-of-tree PrivateUse1 backend's registrations (tests/test_coverage.py reads their lines).
#include <torch/library.h>

namespace at::pu1 {

at::Tensor& mm_out_pu1(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  return out;
}

at::Tensor scale_pu1(const at::Tensor& self, double factor) {
  return self;
}

void pu1_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mm.out", TORCH_FN(mm_out_pu1));
}

TORCH_LIBRARY(pu1, m) {
  m.def("scale(Tensor self, float factor) -> Tensor");
}

TORCH_LIBRARY_IMPL(pu1, PrivateUse1, m) {
  m.impl("scale", &scale_pu1);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&pu1_fallback>());
}

}  // namespace at::pu1
