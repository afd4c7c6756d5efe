# gradtune as an installed package:
#   cmake --install build --prefix P
# puts in P
#   lib/libgradtune.a                  every compiled kernel, dispatch and one Halide runtime
#   include/gradtune/*.h               the public headers (C++17)
#   lib/cmake/gradtune/                gradtuneConfig.cmake, gradtuneConfigVersion.cmake and the
#                                      exported target gradtune::gradtune (find_package(gradtune))
#   lib/pkgconfig/gradtune.pc          for pkg-config --cflags --libs gradtune
#   bin/gradtune                       the command line (GRADTUNE_BUILD_TOOLS)
# Users need neither Halide nor any of the build's other dependencies: the
# target carries its threads and dl usage requirements, and C++17.
# tests/package/package_test.sh builds consumers of both kinds against an
# install.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GRADTUNE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/gradtune"
    CACHE STRING "Where gradtuneConfig.cmake is installed, under the prefix")
mark_as_advanced(GRADTUNE_INSTALL_CMAKEDIR)

install(TARGETS gradtune EXPORT gradtuneTargets
        ARCHIVE COMPONENT gradtune_Development
        FILE_SET HEADERS COMPONENT gradtune_Development)
install(EXPORT gradtuneTargets
        DESTINATION "${GRADTUNE_INSTALL_CMAKEDIR}"
        NAMESPACE gradtune::
        COMPONENT gradtune_Development)

configure_package_config_file(
    "${CMAKE_CURRENT_LIST_DIR}/gradtuneConfig.cmake.in" "${PROJECT_BINARY_DIR}/gradtuneConfig.cmake"
    INSTALL_DESTINATION "${GRADTUNE_INSTALL_CMAKEDIR}")
# 0.x: a minor version may change the API.
write_basic_package_version_file(
    "${PROJECT_BINARY_DIR}/gradtuneConfigVersion.cmake" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/gradtuneConfig.cmake" "${PROJECT_BINARY_DIR}/gradtuneConfigVersion.cmake"
        DESTINATION "${GRADTUNE_INSTALL_CMAKEDIR}"
        COMPONENT gradtune_Development)

# gradtune.pc, relocatable: its prefix is found from where the file lies.
set(_pc_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
file(RELATIVE_PATH GRADTUNE_PC_TO_PREFIX "/${_pc_dir}" "/")
string(REGEX REPLACE "/$" "" GRADTUNE_PC_TO_PREFIX "${GRADTUNE_PC_TO_PREFIX}")
configure_file("${CMAKE_CURRENT_LIST_DIR}/gradtune.pc.in" "${PROJECT_BINARY_DIR}/gradtune.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/gradtune.pc" DESTINATION "${_pc_dir}" COMPONENT gradtune_Development)

if (GRADTUNE_BUILD_TOOLS)
    # Runs ops, lists variants and reads records anywhere; `tune` compiles
    # candidates with this build tree's generator, so it tunes from here.
    install(TARGETS gradtune_cli RUNTIME COMPONENT gradtune_Runtime)
endif ()
