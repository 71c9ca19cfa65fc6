# Seeds for fuzz_escape (sourced by tests/fuzz/corpus.sh): hostile names as
# they come in METADATA, DT_NEEDED and file names: Latin-1, a lone
# continuation byte, an overlong slash, a surrogate, U+FFFE, controls, an
# escape sequence, markup, quotes, and valid text in several scripts.
es="$corp/.escape-src"
mkdir -p "$es"
printf 'caf\351-1.0\0lib\377\376.so.1\0\200lone\0\300\257overlong\0\355\240\200surrogate\0\357\277\276fffe\0' >"$es/bytes"
printf '\033[2J\033]0;pwned\007\r\n\t\001\037\177\0<a href="x">&amp;</a>\0'"'"'quote'"'"' "dq"\0' >"$es/controls"
printf 'numpy\0torch-2.10.0+cu130\0\346\227\245\346\234\254\350\252\236\0\360\237\230\200\0\342\200\256rtl\0' >"$es/valid"
seed fuzz_escape "$es"/*
