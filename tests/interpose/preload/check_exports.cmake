# cmake -DLIBRARY=<libbubble_interpose.so> -DPROGRAM=<executable linked against bubble::framework>
#       -DNM=<nm> -P check_exports.cmake
#
# Fails unless every bubble function the shared object leaves undefined (its calls into the
# framework) is defined and exported by the program, so that preloading it into any bubble program
# resolves them all, including those of code paths a test does not run (lazy binding would only
# fail on the first call). A framework function renamed without updating the list in
# interpose/CMakeLists.txt fails here, naming it.
execute_process(COMMAND ${NM} -D --undefined-only ${LIBRARY} OUTPUT_VARIABLE needed
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIBRARY}")
endif()
execute_process(COMMAND ${NM} -D --defined-only ${PROGRAM} OUTPUT_VARIABLE provided
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${PROGRAM}")
endif()
string(REGEX MATCHALL "_Z[A-Z]*6bubble[A-Za-z0-9_]*" needed_symbols "${needed}")
list(REMOVE_DUPLICATES needed_symbols)
set(missing "")
foreach(symbol IN LISTS needed_symbols)
  string(FIND "${provided}" " ${symbol}\n" at)
  if(at EQUAL -1)
    list(APPEND missing ${symbol})
  endif()
endforeach()
list(LENGTH needed_symbols count)
if(missing)
  list(JOIN missing "\n  " text)
  message(FATAL_ERROR "${PROGRAM} does not export these symbols that ${LIBRARY} needs "
                      "(add them to bubble_interpose_framework_symbols):\n  ${text}")
endif()
message(STATUS "all ${count} bubble symbols that ${LIBRARY} needs are exported by ${PROGRAM}")
