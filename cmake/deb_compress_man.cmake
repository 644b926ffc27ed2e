# CPack pre-build script: gzip -9n the man pages in the staging tree (Debian policy 12.1).
file(GLOB_RECURSE staged LIST_DIRECTORIES false "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*")
list(FILTER staged INCLUDE REGEX "/share/man/man[1-9]/[^/]+\\.[1-9]$")
foreach(p IN LISTS staged)
  execute_process(COMMAND gzip -9nf "${p}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${p} failed")
  endif()
endforeach()
