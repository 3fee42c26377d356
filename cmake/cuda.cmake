# The CUDA path: compiled when nvcc is found (and SLUICE_WITH_CUDA is ON), for sm_80 and sm_90
# plus PTX, with the CUDA runtime linked statically so one build runs with or without a GPU.
# nvJPEG is loaded at run time (dlopen); only its header is needed here: from the CUDA toolkit
# where it has one, else from the PyPI package nvidia-nvjpeg (nvidia/cu13/include/nvjpeg.h).
#
# Sets SLUICE_CUDA (ON/OFF) and, when ON, SLUICE_NVJPEG_INCLUDE_DIR, SLUICE_NVJPEG_LIB_HINT and
# SLUICE_FFNVCODEC_INCLUDE_DIR
# (the wheel's library folder, tried after the system's libnvjpeg.so.13/.12).
set(SLUICE_CUDA OFF)
if(NOT SLUICE_WITH_CUDA)
  return()
endif()
include(CheckLanguage)
if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(STATUS "sluice: no CUDA compiler found; building the CPU path only")
  return()
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 80-real 90-real 90-virtual)
endif()
set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
set(CMAKE_CUDA_STANDARD 20)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)

find_package(Python 3.9 COMPONENTS Interpreter)
set(_nvjpeg_hints ${CUDAToolkit_INCLUDE_DIRS})
if(Python_EXECUTABLE)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
      "import nvidia, os; print(';'.join(os.path.join(p, 'cu13') for p in nvidia.__path__))"
    OUTPUT_VARIABLE _nv_roots OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  foreach(_r IN LISTS _nv_roots)
    list(APPEND _nvjpeg_hints ${_r}/include)
    if(EXISTS ${_r}/lib/libnvjpeg.so.13)
      set(SLUICE_NVJPEG_LIB_HINT ${_r}/lib)
    endif()
  endforeach()
endif()
find_path(SLUICE_NVJPEG_INCLUDE_DIR nvjpeg.h HINTS ${_nvjpeg_hints} NO_DEFAULT_PATH)
if(NOT SLUICE_NVJPEG_INCLUDE_DIR)
  message(FATAL_ERROR "sluice: nvcc found but not nvjpeg.h; `pip install nvidia-nvjpeg` "
                      "(scripts/install_deps.sh does) or configure with -DSLUICE_WITH_CUDA=OFF")
endif()
# NVDEC (video) is loaded at run time from the driver; FFmpeg's ffnvcodec headers declare it.
find_path(SLUICE_FFNVCODEC_INCLUDE_DIR ffnvcodec/dynlink_nvcuvid.h)
if(NOT SLUICE_FFNVCODEC_INCLUDE_DIR)
  message(FATAL_ERROR "sluice: nvcc found but not ffnvcodec/dynlink_nvcuvid.h (Debian: libffmpeg-nvenc-dev; "
                      "scripts/install_deps.sh installs it) or configure with -DSLUICE_WITH_CUDA=OFF")
endif()
set(SLUICE_CUDA ON)
message(STATUS "sluice: CUDA path ON (${CMAKE_CUDA_ARCHITECTURES}), nvjpeg.h in ${SLUICE_NVJPEG_INCLUDE_DIR}")
