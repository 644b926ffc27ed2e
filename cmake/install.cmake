# `cmake --install build [--prefix PREFIX]`, the `uninstall` target and (portable build) the packages.
#
# Layout (GNUInstallDirs, relative to PREFIX):
#   bin/gpumap                                  static libstdc++, needs only glibc
#   LIBDIR/gpumap/sim/libnvidia-ml.so.1, libcuda.so.1   the simulated driver (private, not on the
#                                               loader path; the real driver is dlopen'ed, never linked)
#   share/gpumap/hosts/*.json                   bundled simulated hosts
#   share/man/man1/gpumap.1                     generated from the command table
#   share/bash-completion/completions/gpumap    (or what pkg-config's bash-completion says)
#   share/zsh/site-functions/_gpumap           (RHEL's zsh looks there) and, under a .../usr prefix,
#   share/zsh/vendor-completions/_gpumap        (where Debian's zsh looks)
#   share/fish/vendor_completions.d/gpumap.fish
#   share/doc/gpumap/README.md, docs/*.md
#   lib/systemd/system/gpumap-serve.service    `gpumap serve`, disabled (docs/metrics.md)
#   lib/tmpfiles.d/gpumap.conf                  the lease folder, root-owned 1777 at boot (docs/launch.md)
#   lib/python3/dist-packages/gpumap           under a .../usr prefix, lib/python3.X/dist-packages
#                                               elsewhere (the Python package)
#   LIBDIR/gpumap/gpumap-kubelet                the kubelet's pod-resources reader (gRPC), when built
#                                               (GPUMAP_KUBERNETES); gpumap looks for it there
#
#
# The C API (libgpumap.so, gpumap-probe, header, CMake package config, pkg-config file) has its
# rules in CMakeLists.txt beside the library; the uninstall target takes them from the install
# manifest.  The packages are the portable build's (cmake/portable_packages.cmake).

set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME gpumap)
install(TARGETS gpumap RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_BINARY_DIR}/sim/libnvidia-ml.so.1 ${CMAKE_BINARY_DIR}/sim/libcuda.so.1
        DESTINATION ${GPUMAP_INSTALL_SIM_DIR})
install(FILES ${GPUMAP_HOSTS} DESTINATION ${GPUMAP_INSTALL_HOSTS_DIR})
install(FILES ${GPUMAP_MAN_INSTALLED} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# `gpumap serve` as a systemd service, shipped disabled (no maintainer script enables or starts it;
# docs/metrics.md).  Under a .../usr prefix Debian's /usr/lib/systemd/system, else PREFIX/lib/systemd/system.
install(FILES contrib/systemd/gpumap-serve.service contrib/systemd/gpumap-serve.socket DESTINATION lib/systemd/system)
# The lease folder, root-owned and sticky from boot (systemd-tmpfiles; docs/launch.md, "Leases").
install(FILES contrib/systemd/gpumap-leases.tmpfiles DESTINATION lib/tmpfiles.d RENAME gpumap.conf)
# Prometheus's recording rules and alerts (rule_files: in prometheus.yml; docs/metrics.md).
install(FILES contrib/prometheus/gpumap-rules.yml contrib/prometheus/gpumap-alerts.yml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/gpumap/prometheus)
install(FILES contrib/grafana/gpumap-dashboard.json DESTINATION ${CMAKE_INSTALL_DATADIR}/gpumap/grafana)  # docs/metrics.md
file(GLOB GPUMAP_DOCS CONFIGURE_DEPENDS docs/*.md)
install(FILES ${GPUMAP_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# bash: the folder bash-completion's pkg-config file names, made relative to its prefix.
set(GPUMAP_BASH_COMPLETION_DIR "" CACHE STRING "Where to install the bash completion (relative to the prefix)")
if(NOT GPUMAP_BASH_COMPLETION_DIR)
  set(GPUMAP_BASH_COMPLETION_DIR ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_get_variable(bc_dir bash-completion completionsdir)
    pkg_get_variable(bc_prefix bash-completion prefix)
    if(bc_dir AND bc_prefix AND bc_dir MATCHES "^${bc_prefix}/(.+)$")
      set(GPUMAP_BASH_COMPLETION_DIR ${CMAKE_MATCH_1})
    endif()
  endif()
endif()
install(FILES ${GPUMAP_BASH_COMPLETION} DESTINATION ${GPUMAP_BASH_COMPLETION_DIR})

# zsh: the folder depends on the prefix given at install time, so it is chosen then.  Under /usr
# both: Debian's zsh looks in vendor-completions, RHEL's (the .rpm's) only in site-functions.
install(CODE "
  set(gpumap_zsh_dirs \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/zsh/site-functions\")
  if(CMAKE_INSTALL_PREFIX MATCHES \"(^|/)usr/?$\")
    list(APPEND gpumap_zsh_dirs \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions\")
  endif()
  foreach(gpumap_zsh_dir IN LISTS gpumap_zsh_dirs)
    file(INSTALL DESTINATION \"\${gpumap_zsh_dir}\" TYPE FILE FILES \"${GPUMAP_ZSH_COMPLETION}\")
  endforeach()
")

# fish: its vendor folder (what fish's pkg-config file calls completionsdir).
install(FILES ${GPUMAP_FISH_COMPLETION} DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)

# Python: the pure-Python package over libgpumap.so.1, where the prefix's python3 looks (Debian:
# /usr/lib/python3/dist-packages; under another prefix lib/python3.X/dist-packages).  From there it
# finds the library three folders up (PREFIX/lib/libgpumap.so.1).
find_package(Python3 COMPONENTS Interpreter QUIET)
# (Not in the portable packages: their Python package is the wheel, scripts/release.sh.)
if(Python3_FOUND AND NOT GPUMAP_PORTABLE)
  install(CODE "
    if(CMAKE_INSTALL_PREFIX MATCHES \"(^|/)usr/?$\")
      set(gpumap_py_dir \"\${CMAKE_INSTALL_PREFIX}/lib/python3/dist-packages\")
    else()
      set(gpumap_py_dir \"\${CMAKE_INSTALL_PREFIX}/lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/dist-packages\")
    endif()
    file(INSTALL DESTINATION \"\${gpumap_py_dir}\" TYPE DIRECTORY FILES \"${PROJECT_SOURCE_DIR}/python/gpumap\"
         PATTERN __pycache__ EXCLUDE)
  " COMPONENT python3gpumap)
endif()

# `cmake --build build --target uninstall`: removes what the last `cmake --install build` put
# there (build/install_manifest.txt), then the folders of gpumap's own that are left empty.
add_custom_target(uninstall
  COMMAND ${CMAKE_COMMAND} -DMANIFEST=${CMAKE_BINARY_DIR}/install_manifest.txt
          -P ${PROJECT_SOURCE_DIR}/cmake/uninstall.cmake
  VERBATIM)

# The packages (.deb, .rpm, tarball) are made from the portable build only (scripts/release.sh,
# cmake/portable_packages.cmake): one package whose only dependency is glibc.  A native build has
# no CPack configuration; it installs with `cmake --install` (docs/install.md).
if(GPUMAP_PORTABLE)
  include(${PROJECT_SOURCE_DIR}/cmake/portable_packages.cmake)
elseif(GPUMAP_HAVE_KUBE)
  install(TARGETS gpumap_kubelet RUNTIME DESTINATION ${CMAKE_INSTALL_LIBDIR}/gpumap)
endif()
