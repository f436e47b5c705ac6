// opindex sample: an op that only writes its output (zero_), and a factory that calls it (zeros_like). Kernels call
// them besides their own work (layer_norm_backward_cuda): the GPU runs a fill kernel for each.
#include <ATen/native/Fill.h>

namespace at::native {

DEFINE_DISPATCH(fill_stub);

Tensor& zero_(Tensor& self) {
  auto iter = TensorIterator::borrowing_nullary_op(self);
  fill_stub(iter.device_type(), iter, 0);
  return self;
}

Tensor zeros_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                  std::optional<Device> device, std::optional<bool> pin_memory,
                  std::optional<MemoryFormat> memory_format) {
  auto result = at::empty_like(self, dtype, layout, device, pin_memory, memory_format);
  return result.zero_();
}

} // namespace at::native
