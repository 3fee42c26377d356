// SLUICE_HD marks functions shared by the CPU and the CUDA code (host and device).
#ifndef SLUICE_CORE_HD_H_
#define SLUICE_CORE_HD_H_

#if defined(__CUDACC__)
#define SLUICE_HD __host__ __device__ __forceinline__
#else
#define SLUICE_HD inline
#endif

#endif  // SLUICE_CORE_HD_H_
