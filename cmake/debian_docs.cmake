# Writes OUT/copyright and OUT/changelog.gz for the Debian package PACKAGE (cmake -P, from
# cmake/install.cmake).  copyright: the machine-readable format (DEP-5) with the licence LICENSE
# holds, which must be the Apache License 2.0 (Debian ships its text: common-licenses/Apache-2.0).
# changelog.gz: one entry for VERSION (a native package: changelog.gz, gzip -9n), dated by the
# checkout's last commit (SOURCE_DATE_EPOCH when set), so two builds of one commit are identical.
foreach(v LICENSE OUT PACKAGE VERSION MAINTAINER SOURCE_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "debian_docs.cmake: -D${v}=... is missing")
  endif()
endforeach()
file(READ "${LICENSE}" text LIMIT 400)
if(NOT text MATCHES "Apache License[ \n]+Version 2\\.0, January 2004")
  message(FATAL_ERROR "${LICENSE} is not the Apache License 2.0: the Debian copyright file would be wrong")
endif()

set(epoch "$ENV{SOURCE_DATE_EPOCH}")
if(epoch STREQUAL "")
  execute_process(COMMAND git -C "${SOURCE_DIR}" log -1 --format=%ct OUTPUT_VARIABLE epoch
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR epoch STREQUAL "")
    set(epoch 0)
  endif()
endif()
set(ENV{SOURCE_DATE_EPOCH} "${epoch}")
string(TIMESTAMP year "%Y" UTC)
string(TIMESTAMP date "%a, %d %b %Y %H:%M:%S +0000" UTC)

file(MAKE_DIRECTORY "${OUT}")
file(WRITE "${OUT}/copyright" "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: gpumap
Upstream-Contact: ${MAINTAINER}

Files: *
Copyright: ${year} gpumap maintainers
License: Apache-2.0

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the \"License\"); you may not
 use this software except in compliance with the License. You may obtain a
 copy of the License at
 .
 http://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an \"AS IS\" BASIS, WITHOUT
 WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
 License for the specific language governing permissions and limitations
 under the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0 can
 be found in \"/usr/share/common-licenses/Apache-2.0\".
")

file(WRITE "${OUT}/changelog" "${PACKAGE} (${VERSION}) unstable; urgency=medium

  * gpumap ${VERSION}.

 -- ${MAINTAINER}  ${date}
")
file(REMOVE "${OUT}/changelog.gz")
execute_process(COMMAND gzip -9n "${OUT}/changelog" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip -9n ${OUT}/changelog failed")
endif()
