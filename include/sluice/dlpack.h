// The DLPack exchange ABI (https://dmlc.github.io/dlpack/latest/): the unversioned
// DLManagedTensor form that PyTorch, NumPy, JAX and CuPy all accept, and the versioned form of
// DLPack 1.0 (DLManagedTensorVersioned, whose flags say whether the consumer may write).
//
// If the official <dlpack/dlpack.h> was included first, its definitions are used; otherwise the
// ABI types are declared here with the same names and layout (DLPack 0.8, and 1.0's versioned
// form unless that header declared it).
#ifndef SLUICE_DLPACK_H_
#define SLUICE_DLPACK_H_

#include <stdint.h>

#ifndef DLPACK_VERSION
#define DLPACK_VERSION 80
#define DLPACK_EXTERN_C extern "C"

extern "C" {
typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
} DLDataTypeCode;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // NULL means compact row-major
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;
}  // extern "C"
#endif  // DLPACK_VERSION

#ifndef DLPACK_MAJOR_VERSION
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 0
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
extern "C" {
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
}  // extern "C"
#endif  // DLPACK_MAJOR_VERSION

#endif  // SLUICE_DLPACK_H_
