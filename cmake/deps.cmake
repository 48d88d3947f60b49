# Third-party dependencies, all from Debian packages (tools/packages.txt).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(ZLIB REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(spdlog REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(SQLite3 REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)

# CAF 0.17.6 ships no CMake config: cmake/FindCAF.cmake (installed with the package too).
list(APPEND CMAKE_MODULE_PATH ${CMAKE_CURRENT_LIST_DIR})
find_package(CAF REQUIRED)

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
