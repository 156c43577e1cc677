# install_paths.cmake: how installed files find each other under whatever prefix
# `cmake --install --prefix` is given: RUNPATHs and the prefix written into gemm.pc.

# Sets OUT to the path from install folder FROM to install folder TO (each relative to the
# prefix, as the CMAKE_INSTALL_<dir> variables usually are, or absolute), "." when they are
# the same folder. When one is relative and the other absolute, the path between them
# depends on the prefix chosen at install time, and OUT is set to "".
function(gemm_relative_install_path out from to)
  if(IS_ABSOLUTE "${from}" AND IS_ABSOLUTE "${to}")
    file(RELATIVE_PATH path "${from}" "${to}")
  elseif(NOT IS_ABSOLUTE "${from}" AND NOT IS_ABSOLUTE "${to}")
    file(RELATIVE_PATH path "/prefix/${from}" "/prefix/${to}")
  else()
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  string(REGEX REPLACE "/+$" "" path "${path}")
  if(path STREQUAL "")
    set(path .)
  endif()
  set(${out} "${path}" PARENT_SCOPE)
endfunction()

# Gives TARGET, installed into DIR, a RUNPATH that finds gemm's libraries in
# CMAKE_INSTALL_LIBDIR: $ORIGIN-relative, so that the installed tree works under any prefix
# and wherever it is moved. Only when DIR and the libdir do not keep their distance across
# prefixes (one of them absolute) is the libdir written as an absolute path.
function(gemm_set_install_rpath target dir)
  gemm_relative_install_path(path "${dir}" "${CMAKE_INSTALL_LIBDIR}")
  if(path STREQUAL ".")
    set(rpath "$ORIGIN")
  elseif(path)
    set(rpath "$ORIGIN/${path}")
  else()
    set(rpath "${CMAKE_INSTALL_FULL_LIBDIR}")
  endif()
  set_property(TARGET ${target} PROPERTY INSTALL_RPATH "${rpath}")
endfunction()

# Sets GEMM_PC_PREFIX, GEMM_PC_LIBDIR and GEMM_PC_INCLUDEDIR for gemm.pc. The prefix is
# found from where pkg-config found the file (${pcfiledir}), so the file is right under any
# install prefix. An absolute libdir puts gemm.pc in the same folder whatever the prefix,
# so there the configure-time prefix is the only one to be had.
function(gemm_set_pc_dirs)
  gemm_relative_install_path(up "${CMAKE_INSTALL_LIBDIR}/pkgconfig" ".")
  if(up)
    set(GEMM_PC_PREFIX "\${pcfiledir}/${up}" PARENT_SCOPE)
  else()
    set(GEMM_PC_PREFIX "${CMAKE_INSTALL_PREFIX}" PARENT_SCOPE)
  endif()
  foreach(kind LIBDIR INCLUDEDIR)
    if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
      set(GEMM_PC_${kind} "${CMAKE_INSTALL_${kind}}" PARENT_SCOPE)
    else()
      set(GEMM_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}" PARENT_SCOPE)
    endif()
  endforeach()
endfunction()
