# The libFuzzer targets (SLUICE_SANITIZE=fuzz): one executable per parser of untrusted bytes,
# each next to the code it exercises. `make fuzz` builds them, writes the seed corpus
# (scripts/make_fuzz_corpus.py) and runs each for a short time; docs/fuzzing.md has the rest.
set(SLUICE_FUZZ_TARGETS jpeg_cpu png webp exif decoder)
foreach(name ${SLUICE_FUZZ_TARGETS})
  add_executable(fuzz_${name} ${PROJECT_SOURCE_DIR}/src/codec/${name}_fuzz.cc)
  target_compile_options(fuzz_${name} PRIVATE ${SLUICE_WARNINGS})
  target_link_libraries(fuzz_${name} PRIVATE sluice_static)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
endforeach()
