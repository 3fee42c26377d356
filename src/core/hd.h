// SLUICE_HD marks functions shared by the CPU and the CUDA code (host and device).
#ifndef SLUICE_CORE_HD_H_
#define SLUICE_CORE_HD_H_

#if defined(__CUDACC__)
#define SLUICE_HD __host__ __device__ __forceinline__
#else
#define SLUICE_HD inline
#endif

namespace sluice::hd {

// a * b and a + b, each rounded on its own. nvcc fuses a multiply and an add into one FMA on
// the GPU (one rounding) and the host compiler does not, so code that must give the same bits
// on both sides calls these for every product and sum.
SLUICE_HD float Mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

SLUICE_HD float Add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

SLUICE_HD double Mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

SLUICE_HD double Add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

}  // namespace sluice::hd

#endif  // SLUICE_CORE_HD_H_
