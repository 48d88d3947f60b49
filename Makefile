# Front door. `make demo` and `make test` each install what is missing, build, then run.
BUILD   ?= build
SANITIZE_BUILD ?= build-sanitize
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 600
JOBS    ?= $(shell nproc)
CMAKE_BUILD_TYPE ?= Release
# Ninja where it is installed (tools/packages.txt lists it): a clean build on two cores takes
# about a minute less than with Makefiles. A build directory keeps the generator it was made
# with, so -G is passed only to a directory that has no cache yet.
GENERATOR ?= $(if $(shell command -v ninja),Ninja,Unix Makefiles)
generator_for = $(if $(wildcard $(1)/CMakeCache.txt),,-G "$(GENERATOR)")
DEMO_CONFIG ?= config/fashion_mlp.yaml

.PHONY: all build deps configure test bench soak sanitize fuzz-build fuzz fuzz-ci demo format \
        format-check bench-deps clean

all: build

deps:
	@tools/install-deps.sh tools/packages.txt

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(call generator_for,$(BUILD)) -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE)

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The default suite asserts behaviour only; tests that measure speed or time carry the ctest
# label `perf` and run with `make bench`; long runs carry `soak` (`make soak`).
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600 -LE 'perf|cluster|soak'

bench: build
	cd $(BUILD) && ctest --output-on-failure --timeout 600 -L perf

soak: build
	cd $(BUILD) && ctest --output-on-failure --timeout 1800 -L soak

# The default suite again, built with ASan + UBSan in its own directory. Any sanitizer report
# fails the test that made it; tools/ubsan.supp and tools/lsan.supp list what is CAF's own, with
# the reason. LeakSanitizer unwinds with frame pointers (fast): with the slow unwinder at every
# allocation, a TLS handshake between two sanitized processes stalled past CAF's connection
# timeout, so the suppressions name CAF's and OpenSSL's libraries rather than deep frames.
SANITIZE_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$(CURDIR)/tools/ubsan.supp \
  LSAN_OPTIONS=suppressions=$(CURDIR)/tools/lsan.supp:fast_unwind_on_malloc=1

# -O1 -g1 (line tables) rather than RelWithDebInfo's -O2 -g: reports still name file and line,
# and the instrumented build takes about half the compile time (job.cpp: 36 s against 80 s).
SANITIZE_FLAGS = -O1 -g1 -DNDEBUG

sanitize: deps
	cmake -S . -B $(SANITIZE_BUILD) $(call generator_for,$(SANITIZE_BUILD)) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTROUPE_SANITIZE=ON \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(SANITIZE_FLAGS)" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$(SANITIZE_FLAGS)"
	cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	cd $(SANITIZE_BUILD) && $(SANITIZE_ENV) ctest --output-on-failure -j $(JOBS) --timeout 1200 -LE 'perf|cluster|soak'

# The fuzz targets of tests/fuzz as libFuzzer binaries (clang, ASan + UBSan) in their own
# directory, each run for FUZZ_SECONDS on a working corpus under $(FUZZ_BUILD)/corpus
# (tools/fuzz.sh). `make test` only replays the committed inputs.
fuzz-build: deps
	cmake -S . -B $(FUZZ_BUILD) $(call generator_for,$(FUZZ_BUILD)) \
	  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DTROUPE_FUZZ=ON -DTROUPE_CUDA=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz

fuzz: fuzz-build
	tools/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

fuzz-ci:
	$(MAKE) fuzz FUZZ_SECONDS=20

demo: build
	$(BUILD)/troupe run $(DEMO_CONFIG) --report $(BUILD)/demo-report.json

# Packages for the comparison benchmarks (PyTorch, OpenMPI); not needed by `make test`.
bench-deps: deps
	@tools/install-deps.sh tools/bench-packages.txt

format:
	find core data models devices collectives policies actors service apps tests \
	  \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -print0 | xargs -0 -r clang-format -i

format-check:
	find core data models devices collectives policies actors service apps tests \
	  \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -print0 | xargs -0 -r clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD)
