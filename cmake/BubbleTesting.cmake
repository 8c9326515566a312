# bubble_add_test(<name> LABELS <label>... SOURCES <file>... LIBS <target>...)
# Builds one GoogleTest executable and registers each of its tests with CTest, labelled so that
# `ctest -L system` picks the system-runtime tests (run under ThreadSanitizer in CI).
function(bubble_add_test name)
  cmake_parse_arguments(ARG "" "" "LABELS;SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  bubble_set_warnings(${name})
  gtest_discover_tests(${name}
    DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS "${ARG_LABELS}")
  if("system" IN_LIST ARG_LABELS)
    add_dependencies(bubble_system_tests ${name})
  endif()
endfunction()

# bubble_add_component_tests(<component>): the test executables of tests/<component>/.
#   system/*_test.cpp -> <component>_system_tests, label `system` (system runtime; TSan in CI)
#   *_test.cpp        -> <component>_tests, label `bubble` (in bubbles, or no runtime at all)
function(bubble_add_component_tests component)
  file(GLOB system_sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/system/*_test.cpp")
  file(GLOB bubble_sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*_test.cpp")
  if(system_sources)
    bubble_add_test(${component}_system_tests LABELS system ${component}
      SOURCES ${system_sources} LIBS bubble::${component})
  endif()
  if(bubble_sources)
    bubble_add_test(${component}_tests LABELS bubble ${component}
      SOURCES ${bubble_sources} LIBS bubble::${component} bubble::testing rapidcheck)
  endif()
endfunction()
