# Front door. `make demo` and `make test` each install what is missing, build, then run.
BUILD   ?= build
JOBS    ?= $(shell nproc)
CMAKE_BUILD_TYPE ?= Release
DEMO_CONFIG ?= config/fashion_mlp.yaml

.PHONY: all build deps configure test bench demo format format-check bench-deps clean

all: build

deps:
	@tools/install-deps.sh tools/packages.txt

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE)

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The default suite asserts behaviour only; tests that measure speed or time carry the ctest
# label `perf` and run with `make bench`.
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600 -LE perf

bench: build
	cd $(BUILD) && ctest --output-on-failure --timeout 600 -L perf

demo: build
	$(BUILD)/troupe run $(DEMO_CONFIG) --report $(BUILD)/demo-report.json

# Packages for the comparison benchmarks (PyTorch, OpenMPI); not needed by `make test`.
bench-deps: deps
	@tools/install-deps.sh tools/bench-packages.txt

format:
	find core data models devices collectives policies actors apps tests \
	  \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' \) -print0 | xargs -0 -r clang-format -i

format-check:
	find core data models devices collectives policies actors apps tests \
	  \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' \) -print0 | xargs -0 -r clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD)
