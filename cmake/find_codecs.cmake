# libspng and libwebp as imported targets, found by header and library name (no pkg-config
# needed; CMAKE_PREFIX_PATH points at non-system installs).
foreach(lib spng webp)
  if(lib STREQUAL "spng")
    set(header spng.h)
  else()
    set(header webp/decode.h)
  endif()
  find_path(SLUICE_${lib}_INCLUDE_DIR ${header})
  find_library(SLUICE_${lib}_LIBRARY ${lib})
  if(NOT SLUICE_${lib}_INCLUDE_DIR OR NOT SLUICE_${lib}_LIBRARY)
    message(FATAL_ERROR "lib${lib} not found (Debian/Ubuntu: apt-get install lib${lib}-dev)")
  endif()
  add_library(sluice::${lib} UNKNOWN IMPORTED)
  set_target_properties(sluice::${lib} PROPERTIES
    IMPORTED_LOCATION ${SLUICE_${lib}_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${SLUICE_${lib}_INCLUDE_DIR})
  message(STATUS "lib${lib}: ${SLUICE_${lib}_LIBRARY}")
endforeach()
