"""opindex sample: writes RegisterCPU.cpp / RegisterCUDA.cpp from templates/RegisterDispatchKey.cpp: one
TORCH_LIBRARY_IMPL(aten, KEY, m) block binding each op to the kernel its dispatch row names."""


class RegisterDispatchKey:
    def __init__(self, dispatch_key: str):
        self.dispatch_key = dispatch_key

    def emit(self, functions: list) -> list[str]:
        return [f'm.impl("{f}", TORCH_FN(wrapper_{f}));' for f in functions]
