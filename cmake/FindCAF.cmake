# CAF 0.17.6 (Debian's libcaf-dev) ships no CMake config: this find module makes the imported
# targets CAF::core, CAF::io and CAF::openssl (TLS on the middleman) by hand. The build includes it, and the installed troupe package
# carries it, so an embedding app finds CAF the same way. The version check makes a silent
# upgrade to 0.18/1.x (different APIs: send, request, inspect, type registration) fail loudly.
find_package(Threads REQUIRED)
find_path(CAF_INCLUDE_DIR caf/config.hpp)
find_library(CAF_CORE_LIBRARY caf_core)
find_library(CAF_IO_LIBRARY caf_io)
find_library(CAF_OPENSSL_LIBRARY caf_openssl)
if(CAF_INCLUDE_DIR)
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_ver REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX MATCH "[0-9]+" CAF_VERSION_NUM "${_caf_ver}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF REQUIRED_VARS CAF_INCLUDE_DIR CAF_CORE_LIBRARY
                                  CAF_IO_LIBRARY CAF_OPENSSL_LIBRARY CAF_VERSION_NUM)
if(CAF_FOUND AND NOT CAF_VERSION_NUM EQUAL 1706)
  message(FATAL_ERROR "Troupe targets CAF 0.17.6 (CAF_VERSION 1706); found ${CAF_VERSION_NUM}. "
                      "Port actors/common/caf_compat.hpp before changing this check.")
endif()
if(CAF_FOUND AND NOT TARGET CAF::core)
  add_library(CAF::core UNKNOWN IMPORTED)
  set_target_properties(CAF::core PROPERTIES IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}" INTERFACE_LINK_LIBRARIES Threads::Threads)
  add_library(CAF::io UNKNOWN IMPORTED)
  set_target_properties(CAF::io PROPERTIES IMPORTED_LOCATION "${CAF_IO_LIBRARY}"
    INTERFACE_LINK_LIBRARIES CAF::core)
  find_package(OpenSSL REQUIRED)
  add_library(CAF::openssl UNKNOWN IMPORTED)
  set_target_properties(CAF::openssl PROPERTIES IMPORTED_LOCATION "${CAF_OPENSSL_LIBRARY}"
    INTERFACE_LINK_LIBRARIES "CAF::io;OpenSSL::SSL")
endif()
