# One library per folder, and one ctest entry per `*.test.cpp` beside the code (doctest).
#
#   troupe_component(NAME DIR [DEPS targets...])
#
# Sources are globbed with CONFIGURE_DEPENDS so adding a file needs no CMake edit. Files under a
# `cuda/` sub-folder and `*.cu` are built only when CUDA is enabled; files under a `fuzz/`
# sub-folder are fuzz targets, built by cmake/fuzz.cmake (each defines the same entry point).
set(TROUPE_WARNINGS -Wall -Wextra)
# Nothing here reads errno after a math call; without this, std::sqrt blocks vectorisation of
# the optimizer loops (they run on the critical path of every synchronous step).
add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fno-math-errno>)

# Test executables compile at -Og: a test file's own code is set-up and assertions, while the
# code under test is the libraries', optimized as configured. Most of a test file's compile time
# is CAF's and doctest's templates, which -Og builds in about 60% of -O3's time (measured on
# actors/tasks/task_manager.test.cpp: 12.7 s against 21.7 s); over all the test files that was most
# of a minute and a half of a clean build on two cores.
set(TROUPE_TEST_OPTIMIZE $<$<NOT:$<CONFIG:Debug>>:-Og>)

add_library(troupe_doctest_main OBJECT ${CMAKE_SOURCE_DIR}/cmake/doctest_main.cpp)
target_include_directories(troupe_doctest_main PUBLIC ${DOCTEST_INCLUDE_DIR})

function(troupe_component name dir)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB_RECURSE _all CONFIGURE_DEPENDS ${dir}/*.cpp ${dir}/*.cu)
  set(_srcs)
  set(_tests)
  foreach(f ${_all})
    # Matched below the source root only: a checkout may itself sit under a folder named fuzz.
    file(RELATIVE_PATH _in_tree ${CMAKE_SOURCE_DIR} ${f})
    if(_in_tree MATCHES "(^|/)fuzz/")
      continue()
    elseif(f MATCHES "\\.test\\.cpp$")
      list(APPEND _tests ${f})
    elseif(f MATCHES "/cuda/" OR f MATCHES "\\.cu$")
      if(TROUPE_HAVE_CUDA)
        list(APPEND _srcs ${f})
      endif()
    else()
      list(APPEND _srcs ${f})
    endif()
  endforeach()
  if(_srcs)
    add_library(${name} STATIC ${_srcs})
    target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}>
                                              $<INSTALL_INTERFACE:include/troupe>)
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${TROUPE_WARNINGS}>)
    target_link_libraries(${name} PUBLIC ${ARG_DEPS})
    if(TROUPE_HAVE_CUDA)
      target_compile_definitions(${name} PUBLIC TROUPE_HAVE_CUDA=1)
      set_target_properties(${name} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
    endif()
  else()
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}>
                                                 $<INSTALL_INTERFACE:include/troupe>)
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
  endif()
  foreach(t ${_tests})
    file(RELATIVE_PATH _rel ${CMAKE_SOURCE_DIR} ${t})
    string(REGEX REPLACE "\\.test\\.cpp$" "" _id ${_rel})
    string(REPLACE "/" "_" _id ${_id})
    add_executable(test_${_id} ${t} $<TARGET_OBJECTS:troupe_doctest_main>)
    target_include_directories(test_${_id} PRIVATE ${DOCTEST_INCLUDE_DIR})
    target_compile_options(test_${_id} PRIVATE ${TROUPE_WARNINGS} ${TROUPE_TEST_OPTIMIZE})
    target_link_libraries(test_${_id} PRIVATE ${name})
    add_test(NAME ${_id} COMMAND test_${_id} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
    # A test file whose assertions measure speed or time says so on a line of its own,
    # `// ctest-label: perf`: it runs with `make bench` (ctest -L perf), never in `make test`.
    # `// ctest-label: soak` marks the long runs (ctest -L soak), also outside `make test`;
    # `// ctest-label: browser` the tests that drive Chromium (in `make test`).
    file(STRINGS ${t} _extra REGEX "^// ctest-label: (perf|soak|browser)$")
    set(_labels ${dir})
    foreach(_line ${_extra})
      string(REGEX REPLACE "^// ctest-label: " "" _label ${_line})
      list(APPEND _labels ${_label})
    endforeach()
    set_tests_properties(${_id} PROPERTIES LABELS "${_labels}" TIMEOUT 600)
  endforeach()
endfunction()
