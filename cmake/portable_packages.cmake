# The portable packages (GPUMAP_PORTABLE=ON; scripts/release.sh builds them inside a Debian 11 root):
# one relocatable tarball, one .deb and one .rpm, each the whole install tree (the command, the
# C API, its header and package files, gpumap-kubelet when built) in one package, whose only
# runtime dependency is glibc at the floor (docs/install.md).  Included from cmake/install.cmake in
# place of the Debian-native split packages.
#
#   gpumap-VERSION-linux-x86_64.tar.gz   bin/ lib/ include/ share/ under one top folder; runs
#                                        wherever it is unpacked (no LD_LIBRARY_PATH)
#   gpumap_VERSION_amd64.deb             Debian 11-13, Ubuntu 20.04-24.04 (into /usr)
#   gpumap-VERSION-1.x86_64.rpm          RHEL/Rocky/Alma 9 (into /usr)
#
# Both packages put libgpumap.so.1 in /usr/lib (searched by Debian's and Ubuntu's loader; on RHEL
# the pkg-config file carries an rpath, docs/install.md) and the private files in /usr/lib/gpumap/.
set(GPUMAP_GLIBC_FLOOR "2.31" CACHE STRING "The oldest glibc the portable packages declare (tests/release check it)")
# The machine the packages are for: x86_64, or aarch64 when cross-built (scripts/release.sh --arch
# aarch64, cmake/aarch64-linux-gnu.toolchain.cmake); Debian calls them amd64 and arm64.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(GPUMAP_PACKAGE_ARCH aarch64)
  set(GPUMAP_DEB_ARCH arm64)
else()
  set(GPUMAP_PACKAGE_ARCH x86_64)
  set(GPUMAP_DEB_ARCH amd64)
endif()

if(GPUMAP_HAVE_KUBE)
  install(TARGETS gpumap_kubelet RUNTIME DESTINATION ${CMAKE_INSTALL_LIBDIR}/gpumap)
endif()
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
# Debian's copyright file (DEP-5, from LICENSE) for the .deb.
set(GPUMAP_PORTABLE_DOCS ${CMAKE_BINARY_DIR}/portable-docs/gpumap)
add_custom_command(
  OUTPUT ${GPUMAP_PORTABLE_DOCS}/copyright ${GPUMAP_PORTABLE_DOCS}/changelog.gz
  COMMAND ${CMAKE_COMMAND} -DLICENSE=${PROJECT_SOURCE_DIR}/LICENSE -DOUT=${GPUMAP_PORTABLE_DOCS} -DPACKAGE=gpumap
          -DVERSION=${PROJECT_VERSION} "-DMAINTAINER=gpumap maintainers <maintainers@users.noreply.a-seed-28be07a4.example>"
          -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -P ${PROJECT_SOURCE_DIR}/cmake/debian_docs.cmake
  DEPENDS ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/cmake/debian_docs.cmake
  COMMENT "Debian copyright and changelog of the portable package"
  VERBATIM)
add_custom_target(gpumap_portable_docs ALL DEPENDS ${GPUMAP_PORTABLE_DOCS}/copyright)
install(FILES ${GPUMAP_PORTABLE_DOCS}/copyright ${GPUMAP_PORTABLE_DOCS}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
# Linked statically on purpose (the point of these packages): said to lintian, with the reason.
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/gpumap-portable.lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME gpumap)

set(CPACK_GENERATOR "TGZ;DEB;RPM")
set(CPACK_PACKAGE_NAME gpumap)
set(CPACK_PACKAGE_VENDOR gpumap)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "gpumap maintainers <maintainers@users.noreply.a-seed-28be07a4.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "which physical GPU your code will run on")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/deb_compress_man.cmake)
# The tarball: one top folder, the install tree under it.
set(CPACK_PACKAGE_FILE_NAME gpumap-${PROJECT_VERSION}-linux-${GPUMAP_PACKAGE_ARCH})
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)
set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
# (The .deb and .rpm install into /usr, CPack's default for them; the tarball has no prefix.)

set(GPUMAP_PORTABLE_ABOUT "gpumap tells which physical GPU (nvidia-smi index, UUID, PCI bus id) each CUDA
device number refers to, given CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER,
containers, Slurm and launcher ranks; warns about every trap on the way, and
picks, leases and binds GPUs so code runs on the one you meant.
.
This is the portable build: one package with the command, libgpumap.so.1 (the
C API), its header and package files, linked statically against everything
but glibc (${GPUMAP_GLIBC_FLOOR} or later), so it installs on Debian 11-13,
Ubuntu 20.04-24.04 and RHEL 9 alike.  The NVIDIA driver is loaded at run time
when present; no CUDA context is ever created.")

# .deb
set(CPACK_DEB_COMPONENT_INSTALL OFF)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_NAME gpumap)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${GPUMAP_DEB_ARCH})
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= ${GPUMAP_GLIBC_FLOOR})")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")
# The Debian-native split packages hold the same files under the same names.
set(CPACK_DEBIAN_PACKAGE_CONFLICTS "libgpumap1, libgpumap-dev, gpumap-kubernetes")
set(CPACK_DEBIAN_PACKAGE_REPLACES "libgpumap1, libgpumap-dev, gpumap-kubernetes")
set(CPACK_DEBIAN_PACKAGE_PROVIDES "libgpumap1, libgpumap-dev")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# libgpumap.so.1 in /usr/lib: its shlibs line (a program built against it depends on this package)
# and the ldconfig trigger, as Debian's library packages have them.
set(dir ${CMAKE_BINARY_DIR}/portable-control)
file(WRITE ${dir}/shlibs "libgpumap ${GPUMAP_SOVERSION} gpumap (>= ${PROJECT_VERSION})\n")
file(WRITE ${dir}/triggers "activate-noawait ldconfig\n")
# postinst: the lease folder now, not only from the next boot (cmake/packaging/deb-postinst).
configure_file(${PROJECT_SOURCE_DIR}/cmake/packaging/deb-postinst ${dir}/postinst COPYONLY)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${dir}/shlibs ${dir}/triggers ${dir}/postinst)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "which physical GPU your code will run on (portable build)
${GPUMAP_PORTABLE_ABOUT}")

# .rpm: no automatic Requires/Provides (the simulated driver's libcuda.so.1 and libnvidia-ml.so.1
# are private and must never satisfy another package's need for the real driver).
set(CPACK_RPM_COMPONENT_INSTALL OFF)
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_NAME gpumap)
set(CPACK_RPM_PACKAGE_RELEASE 1)
set(CPACK_RPM_PACKAGE_ARCHITECTURE ${GPUMAP_PACKAGE_ARCH})
set(CPACK_RPM_PACKAGE_LICENSE "Apache-2.0")
set(CPACK_RPM_PACKAGE_GROUP "Applications/System")
# (No URL: the project documents no homepage, and a made-up one is worse than none.)
set(CPACK_RPM_POST_INSTALL_SCRIPT_FILE ${PROJECT_SOURCE_DIR}/cmake/packaging/rpm-post)
set(CPACK_RPM_PACKAGE_AUTOREQPROV OFF)
set(CPACK_RPM_PACKAGE_REQUIRES "glibc >= ${GPUMAP_GLIBC_FLOOR}")
set(CPACK_RPM_PACKAGE_DESCRIPTION "${GPUMAP_PORTABLE_ABOUT}")
# Folders other packages own (the filesystem package, systemd, the shells): never claimed.
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
  /usr/lib/systemd /usr/lib/systemd/system /usr/lib/pkgconfig /usr/lib/cmake /usr/share/man /usr/share/man/man1
  /usr/share/doc /usr/share/bash-completion /usr/share/bash-completion/completions /usr/share/zsh
  /usr/share/zsh/vendor-completions /usr/share/zsh/site-functions /usr/lib/tmpfiles.d /usr/share/fish /usr/share/fish/vendor_completions.d /usr/share/lintian
  /usr/share/lintian/overrides /usr/include)

include(CPack)
