# Helpers for the wheel suites, wheel.sh and wheelmem.sh (sourced after
# lib.sh and fixture_dir).
#   wheel_env      $E, a venv-shaped environment over python3 on PATH (its
#                  version in pyvenv.cfg and in the site-packages folder),
#                  with $SP/torch/lib and $FX/src made; sets pybin, pyver,
#                  SP and suffix (the interpreter's EXT_SUFFIX)
#   c10 OUT LINE_TYPE [C++]   a libc10.so (SONAME libc10.so) defining
#                  c10::cuda::c10_cuda_check_implementation(int, const char *,
#                  const char *, LINE_TYPE line, bool), and C++ (more
#                  definitions inside c10::cuda) when given
CXX=${CXX:-c++}

wheel_env() {
	pybin=$(command -v python3)
	E=$FX/env
	SP=$E/lib/python3.11/site-packages
	mkdir -p "$E/bin" "$SP/torch/lib" "$FX/src"
	ln -sf "$pybin" "$E/bin/python3"
	pyver=$("$pybin" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	printf 'home = %s\ninclude-system-site-packages = false\nversion = %s.0\n' "$(dirname "$pybin")" "$pyver" \
		>"$E/pyvenv.cfg"
	[ "$pyver" = 3.11 ] || { mv "$E/lib/python3.11" "$E/lib/python$pyver"; SP=$E/lib/python$pyver/site-packages; }
	suffix=$("$pybin" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
}

c10() {
	{
		printf 'namespace c10 { namespace cuda {\n'
		printf 'void c10_cuda_check_implementation(int e, const char *f, const char *fn, %s line, bool a)\n' "$2"
		printf '{ (void)e; (void)f; (void)fn; (void)line; (void)a; }\n'
		[ -z "${3:-}" ] || printf '%s\n' "$3"
		printf '} }\n'
	} >"$FX/src/c10.cpp"
	$CXX -shared -fPIC -o "$1" "$FX/src/c10.cpp" -Wl,-soname,libc10.so
}
