# ctest script: install sluice into a prefix, build examples/cpp with find_package(sluice),
# run it on 12 generated JPEGs and check what it prints.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${MAKE_IMAGES} ${WORK_DIR}/data 12)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/cpp -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/train_loop ${WORK_DIR}/data 5)
message(STATUS "example output:\n${OUT}")
foreach(expected "12 images in 2 classes, 3 batches per epoch" "epoch 0: 3 batches, 12 images"
                 "epoch 1: 3 batches, 12 images" "0 skipped")
  string(FIND "${OUT}" "${expected}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "expected '${expected}' in the example's output")
  endif()
endforeach()
