// opindex sample: mm is structured; the CPU kernel lives here, the CUDA one in cuda/Blas.cpp.
namespace at::meta {

TORCH_META_FUNC(mm)(const Tensor& self, const Tensor& mat2) {
  TORCH_CHECK(self.dim() == 2, "self must be a matrix");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  set_output_raw_strided(0, {self.sizes()[0], mat2.sizes()[1]}, {}, self.options());
}

} // namespace at::meta

namespace at::native {

static void addmm_impl_cpu_(Tensor& result, const Tensor& self, Tensor m1, Tensor m2) {
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX(result.scalar_type(), "addmm_impl_cpu_", [&] {
    cpublas::gemm(TransposeType::NoTranspose, TransposeType::NoTranspose, m1.size(0), m2.size(1), m1.size(1),
                  scalar_t(1), m1.const_data_ptr<scalar_t>(), m1.stride(0), m2.const_data_ptr<scalar_t>(),
                  m2.stride(0), scalar_t(0), result.mutable_data_ptr<scalar_t>(), result.stride(0));
  });
}

TORCH_IMPL_FUNC(mm_out_cpu)(const Tensor& self, const Tensor& mat2, const Tensor& result) {
  addmm_impl_cpu_(const_cast<Tensor&>(result), result, self, mat2);
}

} // namespace at::native
