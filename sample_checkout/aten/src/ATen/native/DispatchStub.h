// opindex sample: a simplified dispatch-stub header. The macro family below is what the index reads back.
#pragma once

namespace at::native {

enum class CpuCapability { DEFAULT, AVX2, AVX512 };

template <typename FnPtr, typename T>
struct DispatchStub {
  FnPtr cpu_dispatch_ptr = nullptr;
  FnPtr cuda_dispatch_ptr = nullptr;
  template <typename... Args>
  void operator()(c10::DeviceType device, Args&&... args) {
    FnPtr fn = device == c10::DeviceType::CUDA ? cuda_dispatch_ptr : cpu_dispatch_ptr;
    fn(std::forward<Args>(args)...);
  }
};

#define DECLARE_DISPATCH(fn, name) \
  struct name##_type : DispatchStub<fn, name##_type> {}; \
  extern struct name##_type name;

#define DEFINE_DISPATCH(name) struct name##_type name

#define REGISTER_ARCH_DISPATCH(name, arch, fn) \
  template <> decltype(fn) DispatchStub<decltype(fn), struct name##_type>::arch = fn;

#define REGISTER_AVX2_DISPATCH(name, fn) REGISTER_ARCH_DISPATCH(name, AVX2, fn)
#define REGISTER_AVX512_DISPATCH(name, fn) REGISTER_ARCH_DISPATCH(name, AVX512, fn)

#define REGISTER_CUDA_DISPATCH(name, fn) \
  static RegisterCUDADispatch<struct name##_type> name##__register(name, fn);
#define REGISTER_HIP_DISPATCH(name, fn) \
  static RegisterHIPDispatch<struct name##_type> name##__register(name, fn);
#define REGISTER_MPS_DISPATCH(name, fn) \
  static RegisterMPSDispatch<struct name##_type> name##__register(name, fn);

#define REGISTER_ALL_CPU_DISPATCH(name, fn) \
  REGISTER_ARCH_DISPATCH(name, DEFAULT, fn)   \
  REGISTER_AVX2_DISPATCH(name, fn)            \
  REGISTER_AVX512_DISPATCH(name, fn)
#define REGISTER_NO_CPU_DISPATCH(name) REGISTER_ALL_CPU_DISPATCH(name, nullptr)

// The same macro means a different device depending on the compiler that sees it.
#if defined(__CUDACC__)
#define REGISTER_DISPATCH(name, fn) REGISTER_CUDA_DISPATCH(name, fn)
#elif defined(CPU_CAPABILITY)
#define REGISTER_DISPATCH(name, fn) REGISTER_ARCH_DISPATCH(name, CPU_CAPABILITY, fn)
#define ALSO_REGISTER_AVX512_DISPATCH(name, fn) REGISTER_ARCH_DISPATCH(name, CPU_CAPABILITY, fn)
#endif

} // namespace at::native
