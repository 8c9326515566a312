# bubble_set_warnings(<target>): the project's warning flags, -Werror when BUBBLE_WERROR is ON.
function(bubble_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    # g++ 12 reports false -Wrestrict warnings inside libstdc++'s operator+(const char*, string&&)
    # at -O2 and above (GCC bug 105329, fixed in g++ 13).
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(BUBBLE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
