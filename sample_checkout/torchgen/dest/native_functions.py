"""opindex sample: writes NativeFunctions.h, the declarations of every at::native kernel named in a dispatch row
(and the structured_<name> classes of structured kernels)."""


def compute_native_function_declaration(functions: list) -> list[str]:
    return [f"TORCH_API at::Tensor {f}(const at::Tensor & self);" for f in functions]
