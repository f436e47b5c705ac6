#pragma once
// opindex sample: the ufunc inner loop the YAML's ufunc_inner_loop names (codegen wraps it per device).

namespace at::native::ufunc {

template <typename T>
C10_HOST_DEVICE C10_ALWAYS_INLINE T mul(T self, T other) {
  return self * other;
}

template <typename T>
C10_ALWAYS_INLINE Vectorized<T> mul(Vectorized<T> self, Vectorized<T> other) {
  return self * other;
}

} // namespace at::native::ufunc
