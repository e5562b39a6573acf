# ptx_version.cmake: writes the PTX file INPUT to OUTPUT with its .version
# directive set to VERSION, after checking that the file targets sm_ARCH
# and that VERSION is not above the version nvcc wrote (the version only
# goes down, to what older drivers read).  Run as cmake -DINPUT=...
# -DOUTPUT=... -DVERSION=7.0 -DARCH=75 -P ptx_version.cmake.  Whether the
# instructions are valid at that version is ptxas's check, the next step
# of the build.
file(READ "${INPUT}" ptx)
string(REGEX MATCHALL "\n\\.version [0-9]+\\.[0-9]+" versions "\n${ptx}")
list(LENGTH versions n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "${INPUT}: ${n} .version directives, want one")
endif()
string(REGEX REPLACE "\n\\.version " "" have "${versions}")
if(VERSION VERSION_GREATER have)
  message(FATAL_ERROR "${INPUT}: PTX ISA ${have}; ${VERSION} is newer")
endif()
if(NOT ptx MATCHES "\n\\.target sm_${ARCH}[\n ,]")
  message(FATAL_ERROR "${INPUT}: no .target sm_${ARCH}")
endif()
string(REGEX REPLACE "\n\\.version [0-9]+\\.[0-9]+" "\n.version ${VERSION}"
  ptx "${ptx}")
file(WRITE "${OUTPUT}" "${ptx}")
