#!/bin/sh
# Quick start, step 2: the whole test suite.  Installs what is missing (as
# tools/setup.sh does), then builds twice and runs every test in each:
#   build/       warnings as errors, and the shared library too, so that
#                the install test builds the example against both kinds;
#   build-asan/  AddressSanitizer and UndefinedBehaviorSanitizer, with
#                allocation-failure injection (OOMDOC_ALLOC_FAIL: the
#                alloc_fail test fails every allocation of its cases in
#                turn);
#   build-fuzz/  clang's libFuzzer build (OOMDOC_FUZZ): only the fuzz
#                targets are built, and only the coverage test runs
#                (fuzz_coverage: each target must see enough of the code
#                on its corpus); about two minutes on two cores.
# The unit tests (cmocka), the golden CLI tests, the hand-computed
# expectations, the must-not-match corpus, the man page and --help
# agreement, the documented examples, the layering check and the install
# test all run under ctest.
set -eu
cd "$(dirname "$0")/.."
sh tools/setup.sh --deps-only

jobs=$(nproc)
# Each stage says when it starts, in seconds since the suite began, so
# that a slow stage shows in the log (the budget is about 20 minutes).
t0=$(date +%s)
stage() { echo "== tools/test.sh: $1 at $(( $(date +%s) - t0 )) s"; }
stage "plain build"
cmake -S . -B build -DOOMDOC_WERROR=ON -DOOMDOC_SHARED=ON
cmake --build build -j "$jobs"
stage "plain tests"
ctest --test-dir build --output-on-failure -j "$jobs"
stage "sanitizer build"

# -O1, not the Debug type's -O0: AddressSanitizer's manual asks for -O1 or
# higher "to get a reasonable performance"
# (https://clang.llvm.org/docs/AddressSanitizer.html#usage); the CPU time
# of this stage's tests fell by a fifth, and assertions stay on.
cmake -S . -B build-asan -DOOMDOC_WERROR=ON -DOOMDOC_SANITIZE=ON \
	-DOOMDOC_ALLOC_FAIL=ON -DCMAKE_BUILD_TYPE=Debug \
	-DCMAKE_C_FLAGS_DEBUG="-g -O1"
cmake --build build-asan -j "$jobs"
stage "sanitizer tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	ctest --test-dir build-asan --output-on-failure -j "$jobs"

stage "fuzz build"
CC=clang cmake -S . -B build-fuzz -DOOMDOC_WERROR=ON -DOOMDOC_FUZZ=ON \
	-DOOMDOC_CUDA=OFF
cmake --build build-fuzz -j "$jobs" --target fuzz_programs
stage "fuzz coverage"
ctest --test-dir build-fuzz --output-on-failure -R '^fuzz_coverage$'
stage "done"
