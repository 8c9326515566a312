# pkg-config files for the installed package, one per component a consumer links
# (lib/pkgconfig/bubble.pc, bubble-pool.pc, bubble-limiter.pc, bubble-testing-core.pc,
# bubble-testing.pc, bubble-interpose.pc, bubble-instrument.pc), for projects that build without CMake (Meson, Bazel,
# Make): `g++ main.cpp $(pkg-config --cflags --libs bubble-limiter)`.
#
# bubble_pkg_config(<file> TARGET <target> DESCRIPTION <text> [REQUIRES <package>...]
#                   [CFLAGS <flag>...] [LIBS <flag>...] [DEPS <flag>...]
#                   [VARIABLES <name=value>...])
#
# Writes <file>.pc for the component <target> and installs it in ${CMAKE_INSTALL_LIBDIR}/pkgconfig.
# Its Libs are the component's archive (-l) or, for an OBJECT library, the paths of its installed
# objects, followed by the component's INTERFACE_LINK_OPTIONS and LIBS, the flags of its public
# link dependencies that have no .pc file. REQUIRES names the packages that provide its other
# public dependencies (bubble's own, or Debian's with a .pc file such as gtest). DEPS are the flags
# of its private link dependencies (-lboost_context): in Libs when the component is an archive or
# an OBJECT library, whose users link them, in Libs.private when it is a shared library. CFLAGS
# come after -I${includedir}.
#
# The file is written at configure time except for the installation prefix, which it gets when it
# is installed (`cmake --install <build> --prefix <dir>` included), so that its paths are those of
# the installed files.
function(bubble_pkg_config file)
  cmake_parse_arguments(ARG "" "TARGET;DESCRIPTION" "REQUIRES;CFLAGS;LIBS;DEPS;VARIABLES" ${ARGN})
  if(NOT TARGET ${ARG_TARGET})
    message(FATAL_ERROR "bubble_pkg_config(${file}): TARGET '${ARG_TARGET}' is not a target")
  endif()
  get_target_property(type ${ARG_TARGET} TYPE)
  set(libs "")
  if(type STREQUAL "OBJECT_LIBRARY")
    # Installed by install(TARGETS ... OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/bubble/<name>)
    # at <destination>/objects-<config>/<target>/<source relative to the target's folder>.o.
    get_target_property(name ${ARG_TARGET} EXPORT_NAME)
    get_target_property(sources ${ARG_TARGET} SOURCES)
    get_target_property(source_dir ${ARG_TARGET} SOURCE_DIR)
    get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
    if(multi_config)
      set(objects_dir "objects-@CMAKE_INSTALL_CONFIG_NAME@")
    elseif(CMAKE_BUILD_TYPE)
      set(objects_dir "objects-${CMAKE_BUILD_TYPE}")
    else()
      set(objects_dir "objects")
    endif()
    foreach(source IN LISTS sources)
      file(RELATIVE_PATH relative "${source_dir}" "${source}")
      list(APPEND libs "\${libdir}/bubble/${name}/${objects_dir}/${ARG_TARGET}/${relative}.o")
    endforeach()
  else()
    get_target_property(output_name ${ARG_TARGET} OUTPUT_NAME)
    list(APPEND libs "-L\${libdir}" "-l${output_name}")
  endif()
  get_target_property(link_options ${ARG_TARGET} INTERFACE_LINK_OPTIONS)
  if(link_options)
    list(TRANSFORM link_options REPLACE "^LINKER:" "-Wl,")
    list(APPEND libs ${link_options})
  endif()
  list(APPEND libs ${ARG_LIBS})
  set(libs_private "")
  if(type STREQUAL "SHARED_LIBRARY")
    set(libs_private ${ARG_DEPS})
  else()
    list(APPEND libs ${ARG_DEPS})
  endif()

  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(BUBBLE_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
  else()
    set(BUBBLE_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  endif()
  if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(BUBBLE_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
  else()
    set(BUBBLE_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  endif()
  set(BUBBLE_PC_PREFIX "@CMAKE_INSTALL_PREFIX@")  # replaced when installed
  set(BUBBLE_PC_NAME "${file}")
  set(BUBBLE_PC_DESCRIPTION "${ARG_DESCRIPTION}")
  list(JOIN ARG_REQUIRES ", " BUBBLE_PC_REQUIRES)
  list(JOIN ARG_CFLAGS " " cflags)
  string(STRIP "-I\${includedir} ${cflags}" BUBBLE_PC_CFLAGS)
  list(JOIN libs " " BUBBLE_PC_LIBS)
  list(JOIN libs_private " " BUBBLE_PC_LIBS_PRIVATE)
  set(BUBBLE_PC_VARIABLES "")
  foreach(variable IN LISTS ARG_VARIABLES)
    string(APPEND BUBBLE_PC_VARIABLES "${variable}\n")
  endforeach()

  set(template "${PROJECT_BINARY_DIR}/pkgconfig/${file}.pc.in")
  set(output "${PROJECT_BINARY_DIR}/pkgconfig/${file}.pc")
  configure_file("${PROJECT_SOURCE_DIR}/cmake/bubble.pc.in" "${template}" @ONLY)
  install(CODE "configure_file(\"${template}\" \"${output}\" @ONLY)")
  install(FILES "${output}" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

# The package's .pc files. Every component needs C++20 (bubble.pc's Cflags hold -std=c++20:
# a project on a later standard passes its own -std after them, and the last one counts).
# Dependencies without a .pc file in Debian (Boost.Context, RapidCheck, libbacktrace) are plain
# -l flags.
function(bubble_pkg_config_files)
  set(dl "")
  if(CMAKE_DL_LIBS)
    set(dl "-l${CMAKE_DL_LIBS}")
  endif()
  bubble_pkg_config(bubble TARGET bubble_framework
    DESCRIPTION "Deterministic testing of concurrent C++ code: the runtime, the bubble and the primitives (C++20)"
    CFLAGS -std=c++20 -pthread
    LIBS -pthread
    DEPS -lboost_context ${dl}
    VARIABLES "interpose_preload=\${libdir}/libbubble_interpose.so")
  bubble_pkg_config(bubble-pool TARGET bubble_pool REQUIRES bubble
    DESCRIPTION "bubble's bounded worker pool")
  bubble_pkg_config(bubble-limiter TARGET bubble_limiter REQUIRES bubble-pool bubble
    DESCRIPTION "bubble's rate limiter, ticket booth, token bucket and concurrency limiter")
  bubble_pkg_config(bubble-interpose TARGET bubble_interpose REQUIRES bubble
    DESCRIPTION "bubble's interposer: std threads, locks, clocks and sleeps in a bubble"
    DEPS ${dl})
  if(TARGET bubble_instrument)
    set(tsan_warning "")
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      set(tsan_warning -Wno-tsan)
    endif()
    bubble_pkg_config(bubble-instrument TARGET bubble_instrument REQUIRES bubble
      DESCRIPTION "bubble's instrumentation hooks: atomics as scheduling points, data races reported"
      CFLAGS -fsanitize=thread ${tsan_warning} -DBUBBLE_INSTRUMENTED=1
      DEPS ${dl})
  endif()
  if(TARGET bubble_testing_core)
    bubble_pkg_config(bubble-testing-core TARGET bubble_testing_core REQUIRES bubble
      DESCRIPTION "bubble's framework-neutral test exploration: plans, replays, shrinking, stacks"
      DEPS -lbacktrace)
  endif()
  if(TARGET bubble_testing)
    bubble_pkg_config(bubble-testing TARGET bubble_testing REQUIRES bubble-testing-core bubble gtest
      DESCRIPTION "bubble's GoogleTest and RapidCheck glue: BUBBLE_TEST, schedules, replays"
      LIBS -lrapidcheck)
  endif()
endfunction()
