# SPDX-License-Identifier: Apache-2.0
# Installs ember from EMBER_SOURCE_DIR into a fresh prefix, then configures, builds and runs a
# consumer project that uses find_package(ember CONFIG REQUIRED) and ember::ember.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

step(${CMAKE_COMMAND} -S ${EMBER_SOURCE_DIR} -B ${WORK_DIR}/ember-build -DCMAKE_INSTALL_PREFIX=${prefix}
     -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_EXAMPLES=OFF -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER})
step(${CMAKE_COMMAND} --install ${WORK_DIR}/ember-build)
if(NOT EXISTS ${prefix}/include/ember/ember.hpp)
  message(FATAL_ERROR "install did not write include/ember/ember.hpp")
endif()
step(${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/project -B ${WORK_DIR}/consumer-build
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER})
step(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build)
step(${WORK_DIR}/consumer-build/consumer)
if(NOT last_output MATCHES "consumer: ok")
  message(FATAL_ERROR "consumer printed: ${last_output}")
endif()
message(STATUS "consumer: ok")
