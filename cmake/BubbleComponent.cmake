# bubble_add_component(<name> [PUBLIC_DEPS <target>...] [PRIVATE_DEPS <target>...] [INCLUDE_DIRS <dir>...])
#
# Defines the library bubble_<name> with the alias bubble::<name> (exported as bubble::<name>) from
# include/ and the .cpp files under src/ (its subfolders too) of the calling directory: public headers under include/bubble/, so code
# includes <bubble/...> both in-tree and installed. Adds install rules when BUBBLE_INSTALL is ON.
function(bubble_add_component name)
  cmake_parse_arguments(ARG "" "" "PUBLIC_DEPS;PRIVATE_DEPS;INCLUDE_DIRS" ${ARGN})
  set(target bubble_${name})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp")
  if(sources)
    add_library(${target} ${sources})
    set(public PUBLIC)
    target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
    target_link_libraries(${target} PRIVATE ${ARG_PRIVATE_DEPS})
    bubble_set_warnings(${target})
  else()
    # A header-only component.
    add_library(${target} INTERFACE)
    set(public INTERFACE)
  endif()
  add_library(bubble::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME ${target})
  target_compile_features(${target} ${public} cxx_std_20)
  target_include_directories(${target} ${public}
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  foreach(dir IN LISTS ARG_INCLUDE_DIRS)
    target_include_directories(${target} ${public} $<BUILD_INTERFACE:${dir}>)
  endforeach()
  target_link_libraries(${target} ${public} ${ARG_PUBLIC_DEPS})
  if(BUBBLE_INSTALL)
    install(TARGETS ${target} EXPORT bubbleTargets
            ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
            LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
    install(DIRECTORY include/bubble DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endfunction()
