#!/bin/sh
# Builds testdata/threadctx.c into $1 in every TLS shape the thread-context tests use
# (threadctx_test.go): the executable's own static TLS; a library linked at start-up with
# TLS descriptors and with initial-exec; a dlopen()ed library with traditional general-
# dynamic and with TLS descriptors. CTX_CC picks the compiler (default gcc;
# aarch64-linux-gnu-gcc for the arm64 guest, scripts/test-arm64.sh) and CTX_ARCH the TLS
# dialect flags (x86_64 or aarch64; default: this machine's). The programs find their
# libraries beside themselves (RUNPATH $ORIGIN), so the directory can be copied.
set -eu
out=$1
src=$(cd "$(dirname "$0")" && pwd)/threadctx.c
cc=${CTX_CC:-gcc}
case ${CTX_ARCH:-$(uname -m)} in
x86_64) desc=-mtls-dialect=gnu2 gd=-mtls-dialect=gnu ;;
aarch64) desc=-mtls-dialect=desc gd=-mtls-dialect=trad ;;
*) echo "build_threadctx.sh: no TLS dialect flags for ${CTX_ARCH:-$(uname -m)}" >&2; exit 1 ;;
esac
"$cc" -O1 -pthread -DCTX_IN_EXE -rdynamic -o "$out/exe" "$src"
"$cc" -O1 -fPIC -shared "$desc" -DCTX_LIB -o "$out/libctx_desc.so" "$src"
"$cc" -O1 -fPIC -shared -ftls-model=initial-exec -DCTX_LIB -o "$out/libctx_ie.so" "$src"
"$cc" -O1 -fPIC -shared "$gd" -DCTX_LIB -o "$out/libctx_gd.so" "$src"
for lib in desc ie; do
	"$cc" -O1 -pthread -o "$out/app_$lib" "$src" -Wl,--no-as-needed -L"$out" -l"ctx_$lib" -Wl,-rpath,'$ORIGIN'
done
"$cc" -O1 -pthread -o "$out/app_dlopen" "$src" -ldl
