# uninstall.cmake: removes what the last `cmake --install` of this build tree installed, as
# listed in its install_manifest.txt, and the folders named gemm it leaves empty (the
# headers', the CMake package's, the BLAS alternative's); shared folders such as lib or
# include stay. Files that are already gone are passed over; a file that cannot be removed
# fails the target with its path.
# usage: cmake -DMANIFEST=<build>/install_manifest.txt -P uninstall.cmake
if(NOT EXISTS "${MANIFEST}")
  message(FATAL_ERROR "uninstall: ${MANIFEST} not found: nothing was installed from this build tree "
                      "(cmake --install writes it)")
endif()
file(STRINGS "${MANIFEST}" installed)
set(folders "")
set(removed 0)
foreach(path IN LISTS installed)
  if(IS_SYMLINK "${path}" OR EXISTS "${path}")
    file(REMOVE "${path}")
    if(IS_SYMLINK "${path}" OR EXISTS "${path}")
      message(FATAL_ERROR "uninstall: cannot remove ${path} (permissions? install into /usr/local takes root)")
    endif()
    math(EXPR removed "${removed} + 1")
    message(STATUS "Removed: ${path}")
  endif()
  get_filename_component(folder "${path}" DIRECTORY)
  list(APPEND folders "${folder}")
endforeach()
list(REMOVE_DUPLICATES folders)
# Deepest first, so that a gemm folder inside another empties before its parent is looked at.
list(SORT folders ORDER DESCENDING)
foreach(folder IN LISTS folders)
  get_filename_component(name "${folder}" NAME)
  file(GLOB left LIST_DIRECTORIES true "${folder}/*")
  if(name STREQUAL "gemm" AND IS_DIRECTORY "${folder}" AND NOT left)
    file(REMOVE_RECURSE "${folder}")
    message(STATUS "Removed folder: ${folder}")
  endif()
endforeach()
message(STATUS "uninstall: ${removed} files removed")
