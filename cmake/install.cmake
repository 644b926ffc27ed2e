# `cmake --install build [--prefix PREFIX]`, the `uninstall` target and the Debian package (CPack).
#
# Layout (GNUInstallDirs, relative to PREFIX):
#   bin/gpumap                                  static libstdc++, needs only glibc
#   LIBDIR/gpumap/sim/libnvidia-ml.so.1, libcuda.so.1   the simulated driver (private, not on the
#                                               loader path; the real driver is dlopen'ed, never linked)
#   share/gpumap/hosts/*.json                   bundled simulated hosts
#   share/man/man1/gpumap.1                     generated from the command table
#   share/bash-completion/completions/gpumap    (or what pkg-config's bash-completion says)
#   share/zsh/vendor-completions/_gpumap        under a .../usr prefix (Debian's zsh looks there),
#                                               share/zsh/site-functions/_gpumap elsewhere
#   share/fish/vendor_completions.d/gpumap.fish
#   share/doc/gpumap/README.md, docs/*.md
#   lib/systemd/system/gpumap-serve.service    `gpumap serve`, disabled (docs/metrics.md)
#   lib/python3/dist-packages/gpumap           under a .../usr prefix, lib/python3.X/dist-packages
#                                               elsewhere (the Python package)
#   LIBDIR/gpumap/gpumap-kubelet                the kubelet's pod-resources reader (gRPC), when built
#                                               (GPUMAP_KUBERNETES); gpumap looks for it there
#
#   share/doc/PACKAGE/copyright, changelog.gz   per Debian package (generated: cmake/debian_docs.cmake)
#
# The C API (libgpumap.so, gpumap-probe, header, CMake package config, pkg-config file) has its
# rules in CMakeLists.txt beside the library; the uninstall target takes them from the install
# manifest.  Each rule names its COMPONENT, one Debian package each (CPACK_DEB_COMPONENT_INSTALL):
#   gpumap          the command, its man page and completion, the simulated hosts and driver, the docs
#   libgpumap1      libgpumap.so.1 and its gpumap-probe helper
#   libgpumapdev    (package libgpumap-dev) the header, libgpumap.so, CMake and pkg-config files
#   python3gpumap   (package python3-gpumap) the Python package over libgpumap.so.1
#   gpumapkubernetes (package gpumap-kubernetes) gpumap-kubelet, only when it is built: gRPC and
#                   protobuf stay out of the other four packages (a node that is not in Kubernetes
#                   never installs them)
# A rule without one belongs to gpumap.

set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME gpumap)
install(TARGETS gpumap RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_BINARY_DIR}/sim/libnvidia-ml.so.1 ${CMAKE_BINARY_DIR}/sim/libcuda.so.1
        DESTINATION ${GPUMAP_INSTALL_SIM_DIR})
install(FILES ${GPUMAP_HOSTS} DESTINATION ${GPUMAP_INSTALL_HOSTS_DIR})
install(FILES ${GPUMAP_MAN} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# `gpumap serve` as a systemd service, shipped disabled (no maintainer script enables or starts it;
# docs/metrics.md).  Under a .../usr prefix Debian's /usr/lib/systemd/system, else PREFIX/lib/systemd/system.
install(FILES contrib/systemd/gpumap-serve.service contrib/systemd/gpumap-serve.socket DESTINATION lib/systemd/system)
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

# zsh: the folder depends on the prefix given at install time, so it is chosen then.
install(CODE "
  if(CMAKE_INSTALL_PREFIX MATCHES \"(^|/)usr/?$\")
    set(gpumap_zsh_dir \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions\")
  else()
    set(gpumap_zsh_dir \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/zsh/site-functions\")
  endif()
  file(INSTALL DESTINATION \"\${gpumap_zsh_dir}\" TYPE FILE FILES \"${GPUMAP_ZSH_COMPLETION}\")
")

# fish: its vendor folder (what fish's pkg-config file calls completionsdir).
install(FILES ${GPUMAP_FISH_COMPLETION} DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)

# Python: the pure-Python package over libgpumap.so.1, where the prefix's python3 looks (Debian:
# /usr/lib/python3/dist-packages; under another prefix lib/python3.X/dist-packages).  From there it
# finds the library three folders up (PREFIX/lib/libgpumap.so.1).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
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

# Each Debian package's /usr/share/doc/PACKAGE/: copyright (DEP-5, from LICENSE) and changelog.gz.
set(GPUMAP_DEB_PACKAGES gpumap libgpumap1 libgpumap-dev python3-gpumap)
set(GPUMAP_DEB_COMPONENTS gpumap libgpumap1 libgpumapdev python3gpumap)
if(GPUMAP_HAVE_KUBE)
  install(TARGETS gpumap_kubelet RUNTIME DESTINATION ${CMAKE_INSTALL_LIBDIR}/gpumap COMPONENT gpumapkubernetes)
  list(APPEND GPUMAP_DEB_PACKAGES gpumap-kubernetes)
  list(APPEND GPUMAP_DEB_COMPONENTS gpumapkubernetes)
endif()
set(CPACK_PACKAGE_CONTACT "gpumap maintainers <maintainers@users.noreply.a-seed-28be07a4.example>")
foreach(pkg comp IN ZIP_LISTS GPUMAP_DEB_PACKAGES GPUMAP_DEB_COMPONENTS)
  set(docs ${CMAKE_BINARY_DIR}/debian-docs/${pkg})
  add_custom_command(
    OUTPUT ${docs}/copyright ${docs}/changelog.gz
    COMMAND ${CMAKE_COMMAND} -DLICENSE=${PROJECT_SOURCE_DIR}/LICENSE -DOUT=${docs} -DPACKAGE=${pkg}
            -DVERSION=${PROJECT_VERSION} -DMAINTAINER=${CPACK_PACKAGE_CONTACT} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
            -P ${PROJECT_SOURCE_DIR}/cmake/debian_docs.cmake
    DEPENDS ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/cmake/debian_docs.cmake
    COMMENT "Debian copyright and changelog of ${pkg}"
    VERBATIM)
  list(APPEND GPUMAP_DEB_DOCS ${docs}/copyright ${docs}/changelog.gz)
  install(FILES ${docs}/copyright ${docs}/changelog.gz DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${pkg} COMPONENT ${comp}
          EXCLUDE_FROM_ALL)
endforeach()
add_custom_target(gpumap_debian_docs ALL DEPENDS ${GPUMAP_DEB_DOCS})

# The Debian packages: `cpack --config build/CPackConfig.cmake -B build/package` (installs into /usr),
# one per component above.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpumap)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${GPUMAP_DEB_COMPONENTS})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Dependencies from the ELF files themselves (glibc only); the driver is dlopen'ed: no dependency.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Debian policy: man pages gzip -9n compressed.
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/deb_compress_man.cmake)
# (CPack indents each line of a description by one space and writes an empty line as " .".)
set(GPUMAP_DEB_ABOUT "gpumap tells which physical GPU (nvidia-smi index, UUID, PCI bus id) each CUDA
device number refers to, given CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER,
containers, Slurm and launcher ranks; warns about every trap on the way, and
picks, leases and binds GPUs so code runs on the one you meant.")

set(CPACK_DEBIAN_GPUMAP_PACKAGE_NAME gpumap)
set(CPACK_DEBIAN_GPUMAP_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_GPUMAP_PACKAGE_SUGGESTS "bash-completion, python3-gpumap")
if(GPUMAP_HAVE_KUBE)
  set(CPACK_DEBIAN_GPUMAP_PACKAGE_SUGGESTS "bash-completion, python3-gpumap, gpumap-kubernetes")
endif()
set(CPACK_DEBIAN_GPUMAP_DESCRIPTION "which physical GPU your code will run on
${GPUMAP_DEB_ABOUT}

It loads the NVIDIA driver (libnvidia-ml.so.1, libcuda.so.1) at run time when
present and never creates a CUDA context.  Bundled simulated hosts
(--simulate) work without a driver.")

set(CPACK_DEBIAN_LIBGPUMAP1_PACKAGE_NAME libgpumap1)
set(CPACK_DEBIAN_LIBGPUMAP1_PACKAGE_SECTION libs)
# Simulated hosts (the library's "simulate" option) are the gpumap package's.
set(CPACK_DEBIAN_LIBGPUMAP1_PACKAGE_SUGGESTS "gpumap (= ${PROJECT_VERSION})")
# Its shlibs file and the ldconfig trigger, written here: CPack's GENERATE_SHLIBS is for every
# package at once and would also claim the gpumap package's fake libnvidia-ml.so.1 and libcuda.so.1
# (private, but with their real sonames); CPack's own postinst/postrm would call ldconfig, which
# Debian replaced by the trigger (lintian: maintscript-calls-ldconfig), so ours do nothing else.
set(dir ${CMAKE_BINARY_DIR}/debian-control/libgpumap1)
file(WRITE ${dir}/shlibs "libgpumap ${GPUMAP_SOVERSION} libgpumap1 (>= ${PROJECT_VERSION})\n")
file(WRITE ${dir}/triggers "activate-noawait ldconfig\n")
foreach(script postinst postrm)
  file(WRITE ${dir}/${script} "#!/bin/sh\n# libgpumap1 ${script}: ldconfig runs from the trigger (triggers); nothing else to do.\nset -e\nexit 0\n")
endforeach()
set(CPACK_DEBIAN_LIBGPUMAP1_PACKAGE_CONTROL_EXTRA ${dir}/shlibs ${dir}/triggers ${dir}/postinst ${dir}/postrm)
set(CPACK_DEBIAN_LIBGPUMAP1_DESCRIPTION "which physical GPU your code runs on - shared library
${GPUMAP_DEB_ABOUT}

This package holds libgpumap.so.1, the C API, and its CUDA probe helper.")

set(CPACK_DEBIAN_LIBGPUMAPDEV_PACKAGE_NAME libgpumap-dev)
set(CPACK_DEBIAN_LIBGPUMAPDEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_LIBGPUMAPDEV_PACKAGE_DEPENDS "libgpumap1 (= ${PROJECT_VERSION})")
# Lintian overrides: the .pc file is in /usr/lib/pkgconfig, not the multiarch folder (the build is
# laid out for any prefix, and the Python package finds the library relative to itself), and
# libgpumap1's maintainer scripts are empty (above).
# (Each override says why in cmake/debian/PACKAGE.lintian-overrides.)
foreach(pkg comp IN ZIP_LISTS GPUMAP_DEB_PACKAGES GPUMAP_DEB_COMPONENTS)
  if(EXISTS ${PROJECT_SOURCE_DIR}/cmake/debian/${pkg}.lintian-overrides)
    install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/${pkg}.lintian-overrides
            DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME ${pkg} COMPONENT ${comp} EXCLUDE_FROM_ALL)
  endif()
endforeach()
set(CPACK_DEBIAN_LIBGPUMAPDEV_DESCRIPTION "which physical GPU your code runs on - development files
${GPUMAP_DEB_ABOUT}

This package holds the C header, the CMake package (find_package(gpumap))
and the pkg-config file.")

set(CPACK_DEBIAN_PYTHON3GPUMAP_PACKAGE_NAME python3-gpumap)
set(CPACK_DEBIAN_PYTHON3GPUMAP_PACKAGE_SECTION python)
set(CPACK_DEBIAN_PYTHON3GPUMAP_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_PYTHON3GPUMAP_PACKAGE_DEPENDS "python3:any, libgpumap1 (>= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_PYTHON3GPUMAP_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/debian/prerm)
set(CPACK_DEBIAN_PYTHON3GPUMAP_DESCRIPTION "which physical GPU your code runs on - Python 3 package
${GPUMAP_DEB_ABOUT}

This package holds the Python 3 package gpumap (pin, devices, verify,
diagnose), over libgpumap.so.1.")
set(CPACK_DEBIAN_GPUMAPKUBERNETES_PACKAGE_NAME gpumap-kubernetes)
set(CPACK_DEBIAN_GPUMAPKUBERNETES_PACKAGE_SECTION utils)
# gRPC and protobuf come from the ELF file (shlibdeps); gpumap runs it and reads its answer.
set(CPACK_DEBIAN_GPUMAPKUBERNETES_PACKAGE_DEPENDS "gpumap (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_GPUMAPKUBERNETES_DESCRIPTION "which physical GPU your code runs on - Kubernetes pod view
${GPUMAP_DEB_ABOUT}

This package holds gpumap-kubelet, which asks the kubelet's pod-resources API
(gRPC) which pods hold which GPUs, so that gpumap ps, top, pods and metrics
name each GPU process's pod, namespace and container and check it against its
allocation.  Without it gpumap still reads pods from cgroups, by UID.")
include(CPack)
