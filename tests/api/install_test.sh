#!/bin/sh
# The installed tree as another project sees it (CTest: InstalledTreeBuildsTheExample):
#   install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR SERVE_MODEL_DIR CXX [CXXFLAGS]
# installs BUILD_DIR into WORK_DIR/prefix, checks that the headers installed are include/attn's,
# builds examples/translate.cpp against the prefix three ways (CMake's find_package; pkg-config's
# shared library; pkg-config --static with libattn.a) and checks that each program translates the
# model's dev sentences exactly as the installed `attn translate` does.
set -eu
build=$1 source=$2 work=$3 fixture=$4 cxx=$5 cxxflags=${6:-}
model=$fixture/model input=$fixture/dev.src
fail() { echo "install_test: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log" || { cat "$work/install.log"; fail "cmake --install failed"; }

# Exactly the public headers (and the configured version.h).
(cd "$source/include" && ls attn/*.h; echo attn/version.h) | sort > "$work/headers.expected"
(cd "$prefix/include" && find . -type f | sed 's|^\./||') | sort > "$work/headers.installed"
diff "$work/headers.expected" "$work/headers.installed" || fail "installed headers differ from include/attn/"

pc=$(find "$prefix" -name attn.pc)
[ -n "$pc" ] || fail "no attn.pc under $prefix"
libdir=$(dirname "$(dirname "$pc")")
[ -f "$libdir/libattn.a" ] || fail "no libattn.a in $libdir"
[ -f "$libdir/cmake/attn/attnConfig.cmake" ] || fail "no cmake/attn/attnConfig.cmake in $libdir"

"$prefix/bin/attn" translate -q -m "$model" -i "$input" -o "$work/expected.txt"
[ -s "$work/expected.txt" ] || fail "attn translate wrote nothing"

check() {  # name program [environment]
  name=$1
  shift
  env "$@" "$model" < "$input" > "$work/$name.txt" || fail "$name: the example program failed"
  cmp "$work/expected.txt" "$work/$name.txt" || fail "$name: translations differ from attn translate's"
  echo "install_test: $name: $(wc -l < "$work/$name.txt") translations as attn translate's"
}

# 1. CMake: find_package(attn CONFIG) -> attn::attn.
cmake -S "$source/examples" -B "$work/find_package" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CXX_FLAGS="$cxxflags" \
  > "$work/find_package.log" 2>&1 || { cat "$work/find_package.log"; fail "configuring the example failed"; }
cmake --build "$work/find_package" >> "$work/find_package.log" 2>&1 || {
  cat "$work/find_package.log"
  fail "building the example with find_package failed"
}
ldd "$work/find_package/translate" | grep -q "libattn.so" || fail "find_package: the program does not use libattn.so"
check find_package "$work/find_package/translate"

# 2. pkg-config, the shared library.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
"$cxx" -O1 $cxxflags "$source/examples/translate.cpp" $(pkg-config --cflags --libs attn) -o "$work/pkg_shared" ||
  fail "building the example with pkg-config failed"
check pkg_config_shared LD_LIBRARY_PATH="$libdir" "$work/pkg_shared"

# 3. pkg-config --static, libattn.a.
"$cxx" -O1 $cxxflags "$source/examples/translate.cpp" $(pkg-config --cflags attn) "$libdir/libattn.a" \
  $(pkg-config --static --libs attn | sed 's/-lattn\b//') -o "$work/pkg_static" ||
  fail "building the example with pkg-config --static failed"
if ldd "$work/pkg_static" | grep -q "libattn.so"; then fail "pkg_static: linked libattn.so, not libattn.a"; fi
check pkg_config_static "$work/pkg_static"

# 4. The Python package as installed (when the build has it).
module=$(find "$prefix" -name "_attn*.so" | head -1)
if [ -n "$module" ]; then
  site=$(dirname "$(dirname "$module")")
  preload=""
  case "$cxxflags" in  # an instrumented module in an uninstrumented interpreter: ASan's runtime first,
    *sanitize=address*)  # libstdc++ beside it (for ASan's __cxa_throw; python does not link it)
      preload="LD_PRELOAD=$("$cxx" -print-file-name=libasan.so):$(readlink -f "$("$cxx" -print-file-name=libstdc++.so)")"
      preload="$preload ASAN_OPTIONS=detect_leaks=0" ;;
  esac
  env $preload PYTHONPATH="$site" /usr/bin/python3 - "$model" "$input" "$work/python.txt" <<'PY'
import sys, attn
model, input, out = sys.argv[1:]
assert attn.__file__.startswith(sys.path[1]), (attn.__file__, sys.path[:3])
lines = open(input, encoding="utf-8").read().splitlines()
open(out, "w", encoding="utf-8").write("".join(r.text + "\n" for r in attn.Translator(model).translate(lines)))
PY
  [ -s "$work/python.txt" ] || fail "import attn from the installed tree failed"
  cmp "$work/expected.txt" "$work/python.txt" || fail "python: translations differ from attn translate's"
  echo "install_test: python: import attn from $site translates as attn translate"
fi
