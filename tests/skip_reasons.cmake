# skip_reasons.cmake: why tests were skipped, printed after ctest's summary. CTest shows
# nothing a skipped test prints, so a test that skips also writes its reason to DIR/<test>.txt
# (the file GEMM_TEST_SKIP_REASON_FILE names, see tests/CMakeLists.txt). ctest runs this
# (CTestCustom.cmake) with MODE=clear before the tests, so that only this run's reasons are
# shown, and with MODE=print after them.
# usage: cmake -DDIR=<folder> -DMODE=clear|print -P skip_reasons.cmake
if(MODE STREQUAL "clear")
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
  return()
endif()
file(GLOB reason_files "${DIR}/*.txt")
if(NOT reason_files)
  return()
endif()
list(SORT reason_files)
set(text "Why tests were skipped:\n")
foreach(file IN LISTS reason_files)
  get_filename_component(test "${file}" NAME_WLE)
  file(READ "${file}" reason)
  string(STRIP "${reason}" reason)
  string(APPEND text "  ${test}: ${reason}\n")
endforeach()
# On stdout, where ctest's summary is (message() would write to stderr).
execute_process(COMMAND "${CMAKE_COMMAND}" -E echo_append "${text}")
