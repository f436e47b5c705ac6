// opindex sample: a codegen template (not compiled); torchgen/dest/register_dispatch_key.py fills it once
// per dispatch key.
#include <ATen/core/op_registration/adaption.h>

namespace at {

${dispatch_anonymous_definitions}

TORCH_LIBRARY_IMPL(aten, ${DispatchKey}, m) {
  ${dispatch_registrations}
}

} // namespace at
