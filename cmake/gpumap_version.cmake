# Run at every build (cmake -P): writes OUT from TEMPLATE with the git commit of SOURCE_DIR,
# touching OUT only when the commit changed, so nothing recompiles otherwise.
#   -DSOURCE_DIR=... -DTEMPLATE=... -DOUT=...  [-DGPUMAP_GIT_COMMIT=... [-DGPUMAP_GIT_COMMIT_DATE=YYYY-MM-DD]]
#   [-DGIT_EXECUTABLE=...]
# GPUMAP_GIT_COMMIT set by the packager wins (a release tarball has no .git); outside a git
# checkout of this very source tree the commit is "unknown".
set(GPUMAP_COMMIT unknown)
set(GPUMAP_COMMIT_DATE "")
if(GPUMAP_GIT_COMMIT)
  set(GPUMAP_COMMIT "${GPUMAP_GIT_COMMIT}")
  # Its date as `git log -1 --format=%cs` gives it (what --version prints after the hash).
  if(GPUMAP_GIT_COMMIT_DATE MATCHES "^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]$")
    set(GPUMAP_COMMIT_DATE "${GPUMAP_GIT_COMMIT_DATE}")
  endif()
elseif(GIT_EXECUTABLE)
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse --show-toplevel
                  OUTPUT_VARIABLE top RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  # Only this tree's own repository counts, not one that happens to contain an unpacked tarball.
  if(rc EQUAL 0)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${SOURCE_DIR}" src)
  endif()
  if(rc EQUAL 0 AND top STREQUAL src)
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" log -1 --format=%H%n%cs
                    OUTPUT_VARIABLE out RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0 AND out MATCHES "^([0-9a-f]+)\n([0-9-]+)$")
      set(GPUMAP_COMMIT "${CMAKE_MATCH_1}")
      set(GPUMAP_COMMIT_DATE "${CMAKE_MATCH_2}")
      # --no-optional-locks: never take index.lock while the user runs git alongside the build.
      execute_process(COMMAND "${GIT_EXECUTABLE}" --no-optional-locks -C "${SOURCE_DIR}" status --porcelain
                              --untracked-files=no
                      OUTPUT_VARIABLE dirty RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(rc EQUAL 0 AND NOT dirty STREQUAL "")
        string(APPEND GPUMAP_COMMIT "-dirty")
      endif()
    endif()
  endif()
endif()
configure_file("${TEMPLATE}" "${OUT}" @ONLY)
