# What `cmake --install build [--prefix DIR]` lays out (docs/cpp-api.md):
#   bin/attn                                  the command line
#   lib/libattn.so.*, lib/libattn.a           the library (the floors up to the API)
#   include/attn/*.h                          the public API, the only headers installed
#   lib/cmake/attn/                           find_package(attn CONFIG) -> attn::attn (shared)
#   lib/pkgconfig/attn.pc                     pkg-config --cflags --libs attn [--static]
# (lib/ is GNUInstallDirs' libdir: lib/x86_64-linux-gnu under the prefix /usr.)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS attn RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS attn_shared attn_static EXPORT attnTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/attn DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/attn/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attn)

# CMake: only the shared library is exported (its dependencies stay private to it); a static
# link takes its dependencies from pkg-config --static.
set(ATTN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/attn)
install(EXPORT attnTargets NAMESPACE attn:: DESTINATION ${ATTN_CMAKE_DIR} FILE attnTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/attnConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/attnConfig.cmake INSTALL_DESTINATION ${ATTN_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/attnConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/attnConfig.cmake ${PROJECT_BINARY_DIR}/attnConfigVersion.cmake
        DESTINATION ${ATTN_CMAKE_DIR})

# pkg-config: relocatable (the prefix is found from the .pc file's own folder).
file(RELATIVE_PATH ATTN_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)

set(ATTN_PC_REQUIRES_PRIVATE "sentencepiece sword librsvg-2.0 cairo libcrypto icu-uc icu-i18n gumbo libzip libxml-2.0")
if(ATTN_MPI)
  string(APPEND ATTN_PC_REQUIRES_PRIVATE " ompi-c")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/attn.pc.in ${PROJECT_BINARY_DIR}/attn.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/attn.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The documents a user of the library or the package reads, and the example program.
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/cpp-api.md ${PROJECT_SOURCE_DIR}/docs/python.md
              ${PROJECT_SOURCE_DIR}/docs/model-format.md ${PROJECT_SOURCE_DIR}/docs/config.md
              ${PROJECT_SOURCE_DIR}/docs/serve.md ${PROJECT_SOURCE_DIR}/docs/attention-format.md
              ${PROJECT_SOURCE_DIR}/docs/alignment.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/examples/translate.cpp ${PROJECT_SOURCE_DIR}/examples/CMakeLists.txt
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# The Debian package (scripts/package, from a build configured with the prefix /usr):
# attn_VERSION_amd64.deb with everything above; its dependencies on Debian's shared libraries are
# found by dpkg-shlibdeps, the Python package's named here.
set(CPACK_PACKAGE_NAME attn)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "attn developers <attn@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Transformer machine translation (Attention Is All You Need): train, translate, score, serve; C++ and Python")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= 3.11), python3 (<< 3.12), python3-numpy, libexttextcat-data")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libdnnl-dev, libsentencepiece-dev, pkg-config")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
