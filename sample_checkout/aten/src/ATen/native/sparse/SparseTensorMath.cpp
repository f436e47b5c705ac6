// opindex sample: sparse kernels are plain functions named in the YAML's SparseCPU rows.
namespace at::native {

Tensor& add_out_sparse_cpu(const Tensor& t, const Tensor& src, const Scalar& value, Tensor& r) {
  TORCH_CHECK(t.is_sparse() && src.is_sparse(), "add: expected sparse inputs");
  r.resize_as_(src);
  return add_out_sparse_contiguous(r, t, src, value, promoteTypes(t.scalar_type(), src.scalar_type()));
}

Tensor& mul_out_sparse_cpu(const Tensor& t_, const Tensor& src_, Tensor& r) {
  auto t = t_.coalesce();
  auto src = src_.coalesce();
  return intersection_binary_op_sparse_dense_out(t, src, r, "mul", [](const Tensor& a, const Tensor& b) {
    return at::mul(a, b);
  });
}

} // namespace at::native
