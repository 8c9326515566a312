# bubble_set_warnings(<target>): the project's warning flags, -Werror when BUBBLE_WERROR is ON.
function(bubble_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(BUBBLE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
