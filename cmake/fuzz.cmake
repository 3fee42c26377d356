# The libFuzzer targets (SLUICE_SANITIZE=fuzz): one executable per parser of untrusted bytes,
# each next to the code it exercises (src/<dir>/<name>_fuzz.cc). `make fuzz` builds them, writes
# the seed corpus (scripts/make_fuzz_corpus.py) and runs each for a short time; docs/fuzzing.md
# has the rest.
set(SLUICE_FUZZ_TARGETS codec/jpeg_cpu codec/png codec/webp codec/exif codec/decoder io/webdataset core/json_field)
foreach(target ${SLUICE_FUZZ_TARGETS})
  get_filename_component(name ${target} NAME)
  add_executable(fuzz_${name} ${PROJECT_SOURCE_DIR}/src/${target}_fuzz.cc)
  target_compile_options(fuzz_${name} PRIVATE ${SLUICE_WARNINGS})
  target_link_libraries(fuzz_${name} PRIVATE sluice_static)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
endforeach()
