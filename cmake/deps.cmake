# Third-party dependencies, all from Debian packages (tools/packages.txt).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(ZLIB REQUIRED)
find_package(spdlog REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json REQUIRED)

# CAF 0.17.6 ships no CMake config: imported targets by hand, with a version check so that a
# silent upgrade to 0.18/1.x (different APIs: send, request, inspect, type registration) fails loudly.
find_path(CAF_INCLUDE_DIR caf/config.hpp REQUIRED)
find_library(CAF_CORE_LIBRARY caf_core REQUIRED)
find_library(CAF_IO_LIBRARY caf_io REQUIRED)
file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_ver REGEX "^#define CAF_VERSION [0-9]+")
string(REGEX MATCH "[0-9]+" CAF_VERSION_NUM "${_caf_ver}")
if(NOT CAF_VERSION_NUM EQUAL 1706)
  message(FATAL_ERROR "Troupe targets CAF 0.17.6 (CAF_VERSION 1706); found ${CAF_VERSION_NUM}. "
                      "Port actors/caf_compat.hpp before changing this check.")
endif()
add_library(CAF::core UNKNOWN IMPORTED)
set_target_properties(CAF::core PROPERTIES IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}" INTERFACE_LINK_LIBRARIES Threads::Threads)
add_library(CAF::io UNKNOWN IMPORTED)
set_target_properties(CAF::io PROPERTIES IMPORTED_LOCATION "${CAF_IO_LIBRARY}"
  INTERFACE_LINK_LIBRARIES CAF::core)

# ZeroMQ (C library from pkg-config; cppzmq is header-only) and msgpack (header-only).
pkg_check_modules(ZMQ REQUIRED IMPORTED_TARGET libzmq)
find_path(CPPZMQ_INCLUDE_DIR zmq.hpp REQUIRED)
find_path(MSGPACK_INCLUDE_DIR msgpack.hpp REQUIRED)
add_library(troupe_zmq INTERFACE)
target_include_directories(troupe_zmq INTERFACE ${CPPZMQ_INCLUDE_DIR} ${MSGPACK_INCLUDE_DIR})
target_link_libraries(troupe_zmq INTERFACE PkgConfig::ZMQ)
target_compile_definitions(troupe_zmq INTERFACE MSGPACK_NO_BOOST)

# OpenBLAS: link libopenblas itself (not the libblas alternative) so thread control is available.
find_library(OPENBLAS_LIBRARY NAMES openblas REQUIRED)
find_path(OPENBLAS_INCLUDE_DIR cblas.h PATHS /usr/include/x86_64-linux-gnu/openblas-pthread
          /usr/include/openblas REQUIRED)
add_library(troupe_blas INTERFACE)
target_include_directories(troupe_blas INTERFACE ${OPENBLAS_INCLUDE_DIR})
target_link_libraries(troupe_blas INTERFACE ${OPENBLAS_LIBRARY})

find_path(DOCTEST_INCLUDE_DIR doctest/doctest.h REQUIRED)

# CUDA: enabled whenever nvcc is found, so CI compiles the CUDA sources on any machine that has
# the toolkit; kernels run only where a GPU is.
option(TROUPE_CUDA "Build CUDA sources when nvcc is found" ON)
set(TROUPE_HAVE_CUDA OFF)
if(TROUPE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(TROUPE_HAVE_CUDA ON)
  endif()
endif()
message(STATUS "troupe: CUDA backends ${TROUPE_HAVE_CUDA}")
