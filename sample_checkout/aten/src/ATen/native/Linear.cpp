// opindex sample: linear is CompositeImplicitAutograd: it is written in other ops.
namespace at::native {

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias_opt) {
  auto output = at::mm(input, weight.t());
  if (bias_opt.has_value() && bias_opt->defined()) {
    output.add_(*bias_opt);
  }
  return output;
}

} // namespace at::native
