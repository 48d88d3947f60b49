# ctest install_embedding: what an embedding app goes through, outside the source tree.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... [-DSANITIZE=ON] -P embedding_test.cmake
# 1. install the existing build into a temporary prefix; 2. copy apps/examples/orchestrate.cpp
# into a temporary directory with a 10-line CMakeLists.txt; 3. configure it against the prefix,
# build and run it; 4. remove both directories, whatever happened.
string(RANDOM LENGTH 10 _tag)
set(ROOT "/tmp/troupe-embed-${_tag}")
set(PREFIX "${ROOT}/prefix")
set(APP "${ROOT}/app")
file(MAKE_DIRECTORY ${APP})

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 300)
  if(NOT rc EQUAL 0)
    file(REMOVE_RECURSE ${ROOT})
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
configure_file(${SOURCE_DIR}/apps/examples/orchestrate.cpp ${APP}/orchestrate.cpp COPYONLY)
file(WRITE ${APP}/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.25)
project(embed LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
find_package(troupe 0.1 CONFIG REQUIRED)
add_executable(orchestrate orchestrate.cpp)
target_link_libraries(orchestrate PRIVATE troupe::runtime)
]=])
set(_flags)
if(SANITIZE)
  # The installed libraries were built with ASan + UBSan: the app links their runtimes too.
  set(_flags -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined)
endif()
step("configure" ${CMAKE_COMMAND} -S ${APP} -B ${APP}/build -DCMAKE_PREFIX_PATH=${PREFIX}
     -DCMAKE_BUILD_TYPE=Release ${_flags})
step("build" ${CMAKE_COMMAND} --build ${APP}/build)
step("run" ${APP}/build/orchestrate)
file(REMOVE_RECURSE ${ROOT})
if(NOT step_output MATCHES "blobs: completed after [0-9]+ steps")
  message(FATAL_ERROR "orchestrate ran but did not report a completed job:\n${step_output}")
endif()
message(STATUS "embedding app built against ${PREFIX} and ran:\n${step_output}")
