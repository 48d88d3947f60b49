# Fuzz targets: tests/fuzz/NAME.cpp, one per input that reaches Troupe from a file or the
# network, each defining LLVMFuzzerTestOneInput (tests/fuzz/README.md).
#
# Every build links each target with tests/fuzz/replay_main.cpp as fuzz_replay_NAME and runs it
# over the committed inputs, tests/fuzz/corpus/NAME and tests/fuzz/regressions/NAME (ctest
# fuzz_replay_NAME, label `fuzz`, part of `make test` and `make sanitize`): seconds, with the
# normal compiler. With -DTROUPE_FUZZ=ON and clang the targets are also built as libFuzzer
# binaries, fuzz_NAME (`make fuzz`). Each of those compiles the few project sources it needs
# itself, with the sanitizers, rather than linking the libraries: on 2 cores the six targets
# build in about a minute, where the whole tree takes about 10 minutes without instrumentation.
option(TROUPE_FUZZ "build the libFuzzer targets of tests/fuzz (needs clang)" OFF)
if(TROUPE_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "TROUPE_FUZZ needs clang (-DCMAKE_CXX_COMPILER=clang++): libFuzzer is "
                      "clang's; the compiler is ${CMAKE_CXX_COMPILER_ID}")
endif()

set(TROUPE_FUZZ_DIR ${CMAKE_SOURCE_DIR}/tests/fuzz)
# Any report is a crash: a recoverable UBSan report would only be printed, and the fuzzer would
# go on as if the input had passed.
set(TROUPE_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
# Re-globbed at build time, so that a new regressions/NAME folder is replayed without a manual
# re-configure.
file(GLOB TROUPE_FUZZ_REGRESSION_DIRS LIST_DIRECTORIES true CONFIGURE_DEPENDS
     ${TROUPE_FUZZ_DIR}/regressions/*)
if(TROUPE_FUZZ)
  add_custom_target(fuzz)
endif()

#   troupe_fuzz_target(NAME SOURCES files... LIBS targets... REPLAY_LIBS targets...)
#
# SOURCES: the project sources the libFuzzer binary compiles itself; LIBS: what those and the
# target's own file include and link (third-party); REPLAY_LIBS: the Troupe libraries that hold
# SOURCES, for the replay.
function(troupe_fuzz_target name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;REPLAY_LIBS" ${ARGN})
  set(_main ${TROUPE_FUZZ_DIR}/${name}.cpp)

  add_executable(fuzz_replay_${name} ${_main} ${TROUPE_FUZZ_DIR}/replay_main.cpp)
  target_compile_options(fuzz_replay_${name} PRIVATE ${TROUPE_WARNINGS})
  target_include_directories(fuzz_replay_${name} PRIVATE ${CMAKE_SOURCE_DIR})
  target_link_libraries(fuzz_replay_${name} PRIVATE ${ARG_REPLAY_LIBS} ${ARG_LIBS})
  set(_inputs ${TROUPE_FUZZ_DIR}/corpus/${name})
  if(${TROUPE_FUZZ_DIR}/regressions/${name} IN_LIST TROUPE_FUZZ_REGRESSION_DIRS)
    list(APPEND _inputs ${TROUPE_FUZZ_DIR}/regressions/${name})
  endif()
  add_test(NAME fuzz_replay_${name} COMMAND fuzz_replay_${name} ${_inputs})
  set_tests_properties(fuzz_replay_${name} PROPERTIES LABELS fuzz TIMEOUT 300)

  if(TROUPE_FUZZ)
    add_executable(fuzz_${name} EXCLUDE_FROM_ALL ${_main} ${ARG_SOURCES})
    target_compile_options(fuzz_${name} PRIVATE ${TROUPE_WARNINGS} ${TROUPE_FUZZ_FLAGS})
    target_link_options(fuzz_${name} PRIVATE ${TROUPE_FUZZ_FLAGS})
    target_include_directories(fuzz_${name} PRIVATE ${CMAKE_SOURCE_DIR})
    target_link_libraries(fuzz_${name} PRIVATE ${ARG_LIBS})
    add_dependencies(fuzz fuzz_${name})
  endif()
endfunction()

troupe_fuzz_target(config_yaml
  SOURCES core/config_load.cpp core/config_yaml.cpp core/job_rules.cpp core/dependency_cycle.cpp
          core/idx_files.cpp
  LIBS yaml-cpp
  REPLAY_LIBS troupe_core)
troupe_fuzz_target(checkpoint
  SOURCES core/checkpoint.cpp
  REPLAY_LIBS troupe_core)
troupe_fuzz_target(store_wire
  LIBS troupe_zmq
  REPLAY_LIBS troupe_core)
troupe_fuzz_target(frame_header
  SOURCES collectives/frame_header.cpp
  LIBS troupe_zmq
  REPLAY_LIBS troupe_collectives)
troupe_fuzz_target(control_messages
  LIBS CAF::core
  REPLAY_LIBS troupe_actors)
troupe_fuzz_target(http_request
  SOURCES service/http_api.cpp core/http_server.cpp core/request_deadlines.cpp core/secret.cpp
          core/tls_log.cpp
          service/api_backend.cpp
          core/launcher_env.cpp ${TROUPE_DASHBOARD_CPP}
  LIBS PkgConfig::HTTPLIB nlohmann_json::nlohmann_json OpenSSL::SSL OpenSSL::Crypto Threads::Threads
  REPLAY_LIBS troupe_service)

# The binary seeds of tests/fuzz/corpus (checkpoints, packed store messages and headers,
# serialised control messages), written by the project's own writers. Not built by default:
#   cmake --build build --target fuzz_make_seeds && build/fuzz_make_seeds tests/fuzz/corpus
add_executable(fuzz_make_seeds EXCLUDE_FROM_ALL ${TROUPE_FUZZ_DIR}/make_seeds.cpp)
target_compile_options(fuzz_make_seeds PRIVATE ${TROUPE_WARNINGS})
target_link_libraries(fuzz_make_seeds PRIVATE troupe_actors)
