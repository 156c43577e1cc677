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
# One line per reason, naming every test that gave it: "  gpu, gpu.epilogue_trace: no CUDA device".
# Reasons are kept in variables of their own, not a list: they may hold semicolons.
set(count 0)
foreach(file IN LISTS reason_files)
  get_filename_component(test "${file}" NAME_WLE)
  file(READ "${file}" reason)
  string(STRIP "${reason}" reason)
  set(found -1)
  if(count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(at RANGE ${last})
      if("${reason_${at}}" STREQUAL "${reason}")
        set(found ${at})
      endif()
    endforeach()
  endif()
  if(found EQUAL -1)
    set(reason_${count} "${reason}")
    set(tests_${count} "${test}")
    math(EXPR count "${count} + 1")
  else()
    string(APPEND tests_${found} ", ${test}")
  endif()
endforeach()
set(text "Why tests were skipped:\n")
math(EXPR last "${count} - 1")
foreach(at RANGE ${last})
  string(APPEND text "  ${tests_${at}}: ${reason_${at}}\n")
endforeach()
# On stdout, where ctest's summary is (message() would write to stderr).
execute_process(COMMAND "${CMAKE_COMMAND}" -E echo_append "${text}")
