# seeds for fuzz_pytext: real metadata and source files of this machine's
# python, and a built demo environment when there is one
site=$(ls -d /root/.pyenv/versions/*/lib/python3*/site-packages 2>/dev/null | head -1)
[ -n "$site" ] || site=/usr/lib/python3/dist-packages
seed fuzz_pytext $(ls "$site"/*.dist-info/RECORD 2>/dev/null | head -5) \
	$(ls "$site"/*.dist-info/METADATA 2>/dev/null | head -5)
demo=${here}/../../demo/build
if [ -d "$demo" ]; then
	seed fuzz_pytext "$demo/venv/lib/python3.11/site-packages/torch/__init__.py" \
		"$demo/venv/pyvenv.cfg" "$demo/venv/lib/python3.11/site-packages/torch/version.py"
fi
mkdir -p "$corp/fuzz_pytext"
printf 'ImportError: /a/site-packages/x/_C.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n' >"$corp/fuzz_pytext/importerror"
printf "x.so: version \`GLIBCXX_3.4.32' not found (required by /a/b.so)\n" >"$corp/fuzz_pytext/version"
printf 'Traceback (most recent call last):\n  File "/v/lib/python3.11/site-packages/sgl_kernel/__init__.py", line 5\nImportError: libnvrtc.so.13: cannot open shared object file\n' >"$corp/fuzz_pytext/traceback"
