"""opindex sample: the codegen entry point. Reads native_functions.yaml and writes the registration files
(RegisterCPU.cpp, RegisterCUDA.cpp, ...) and the headers (NativeFunctions.h, Functions.h)."""
from torchgen.dest.native_functions import compute_native_function_declaration
from torchgen.dest.register_dispatch_key import RegisterDispatchKey


def parse_native_yaml(path: str) -> list:
    """The model of every entry, with its dispatch table per key."""
    return []


def main() -> None:
    functions = parse_native_yaml("aten/src/ATen/native/native_functions.yaml")
    for key in ("CPU", "CUDA", "CompositeImplicitAutograd"):
        RegisterDispatchKey(key).emit(functions)
    compute_native_function_declaration(functions)


if __name__ == "__main__":
    main()
