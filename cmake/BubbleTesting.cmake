# How many schedules each BUBBLE_TEST explores under the `explore` label (random and PCT, see
# docs/TESTING.md). A cache variable, so a long soak can ask for more.
set(BUBBLE_EXPLORE_SCHEDULES 200 CACHE STRING
  "Schedules explored per BUBBLE_TEST by the CTest tests labelled explore")

# bubble_bubble_test_filter(<out-var> <source>...): a GoogleTest filter naming every
# BUBBLE_TEST(Suite, Name) and BUBBLE_TEST_F(Fixture, Name) (and their BUBBLE_STD_ forms) defined at
# the start of a line in the sources (the arguments may be wrapped over several lines), or "" if
# there is none. CMake re-runs when one of the sources changes, so the filter follows the tests.
function(bubble_bubble_test_filter out)
  set(names "")
  set(space "[ \t\r\n]*")
  set(word "[A-Za-z0-9_]+")
  foreach(source IN LISTS ARGN)
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${path}")
    file(READ "${path}" text)
    string(REGEX MATCHALL "\nBUBBLE_(STD_)?TEST(_F)?\\(${space}${word}${space},${space}${word}${space}\\)"
      uses "\n${text}")
    foreach(use IN LISTS uses)
      string(REGEX REPLACE "[ \t\r\n]" "" use "${use}")
      string(REGEX REPLACE "^BUBBLE_(STD_)?TEST(_F)?\\((${word}),(${word})\\)$" "\\3.\\4" name "${use}")
      list(APPEND names "${name}")
    endforeach()
  endforeach()
  list(JOIN names ":" filter)
  set(${out} "${filter}" PARENT_SCOPE)
endfunction()

# bubble_add_test(<name> LABELS <label>... SOURCES <file>... LIBS <target>...)
# Builds one GoogleTest executable and registers each of its tests with CTest, labelled so that
# `ctest -L system` picks the system-runtime tests (run under ThreadSanitizer in CI).
#
# An executable labelled `bubble` also registers each of its BUBBLE_TESTs a second time, as
# `explore/<Suite>.<Name>` with the label `explore` (and the component's label), run with
# BUBBLE_SCHEDULES=${BUBBLE_EXPLORE_SCHEDULES}: the same body under that many random and PCT
# schedules instead of fifo alone. Plain TESTs ignore the variable and are not registered again.
function(bubble_add_test name)
  cmake_parse_arguments(ARG "" "" "LABELS;SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES UNITY_BUILD ${BUBBLE_UNITY_BUILD})  # see CMakeLists.txt
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  bubble_set_warnings(${name})
  gtest_discover_tests(${name}
    DISCOVERY_MODE PRE_TEST
    TEST_LIST ${name}_TESTS)
  set(label_lists "${name}_TESTS")
  set(label_values "${ARG_LABELS}")
  if("bubble" IN_LIST ARG_LABELS)
    bubble_bubble_test_filter(filter ${ARG_SOURCES})
    if(filter)
      set(explore_labels "${ARG_LABELS}")
      list(REMOVE_ITEM explore_labels bubble)
      list(APPEND explore_labels explore)
      gtest_discover_tests(${name}
        DISCOVERY_MODE PRE_TEST
        TEST_PREFIX "explore/"
        TEST_FILTER "${filter}"
        TEST_LIST ${name}_EXPLORE_TESTS
        PROPERTIES ENVIRONMENT "BUBBLE_SCHEDULES=${BUBBLE_EXPLORE_SCHEDULES}")
      list(APPEND label_lists "${name}_EXPLORE_TESTS")
      list(JOIN explore_labels "\\;" explore_value)
      list(JOIN ARG_LABELS "\\;" value)
      set(label_values "${value};${explore_value}")
    else()
      list(JOIN ARG_LABELS "\\;" label_values)
    endif()
  else()
    list(JOIN ARG_LABELS "\\;" label_values)
  endif()
  # Labels are set by a CTest script that runs after discovery: gtest_discover_tests (CMake 3.25)
  # flattens a list given in PROPERTIES, so `LABELS "bubble;pool"` would keep only the first.
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake")
  set(text "")
  foreach(list_name labels IN ZIP_LISTS label_lists label_values)
    string(APPEND text
      "foreach(test IN LISTS ${list_name})\n"
      "  set_tests_properties(\"\${test}\" PROPERTIES LABELS \"${labels}\")\n"
      "endforeach()\n")
  endforeach()
  file(WRITE "${script}" "${text}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
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
