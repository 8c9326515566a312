# With BUBBLE_BUILD_FUZZERS, everything built in this project is instrumented for libFuzzer
# (-fsanitize=fuzzer-no-link) on top of BUBBLE_SANITIZER=address (ASan + UBSan), and tests/fuzz
# links each harness with libFuzzer's main. clang only: the fuzz preset sets both.
if(BUBBLE_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "BUBBLE_BUILD_FUZZERS needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(NOT BUBBLE_SANITIZER STREQUAL "address")
    message(FATAL_ERROR
      "BUBBLE_BUILD_FUZZERS needs BUBBLE_SANITIZER=address, not '${BUBBLE_SANITIZER}'")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
