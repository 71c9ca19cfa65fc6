# seeds for fuzz_torchabi: the real index (data/torch/abi.idx) and its head,
# so mutations reach both the tables and the symbol groups
mkdir -p "$corp/fuzz_torchabi"
idx=$here/../../data/torch/abi.idx
if [ -f "$idx" ]; then
	head -c 4096 "$idx" >"$corp/fuzz_torchabi/head"
	python3 "$here/../../tools/torch_index.py" --index "$idx" sample "$corp/fuzz_torchabi/sample" 2>/dev/null || true
fi
