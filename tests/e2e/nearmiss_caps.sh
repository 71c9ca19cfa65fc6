#!/bin/sh
# The near-miss search's bounds, on C++ built here (cxx/nearmiss.h): at
# most NM_MAX_EXAMINE (256) candidates are demangled per object and symbol,
# and a cut search says so ("search capped" in text, "near_truncated" in
# JSON).  A class template's members are found by a prefix that stops at
# its template arguments, so every member of Box<int> is a candidate: only
# those that spell the wanted function's own name are weighed, and the one
# near miss among 300 other members is found, uncapped.  So is ns::g(long)
# beside a struct ns::g of 300 members (a name that goes on past "g" is no
# overload of it), and std::foo(long), whose name is not nested.
# The oracles: the real loader's error (ctypes), and nm's list of what the
# library exports (each near miss named must be one of them).
. "$(dirname "$0")/lib.sh"
fixture_dir nearmiss_caps
CXX=${CXX:-c++}
python3 - "$FX" <<'PY'
import sys
fx, n = sys.argv[1], 300
old = ("namespace ns {\ntemplate <int N> struct Tag {};\nvoid f(Tag<1000>) {}\n"
       "template <class T> struct Box { void get(int); };\n"
       "template <class T> void Box<T>::get(int) {}\ntemplate struct Box<int>;\n}\n")
new = ["namespace ns {\ntemplate <int N> struct Tag {};\n"]
new += [f"void f(Tag<{i}>) {{}}\n" for i in range(n)]
new += ["template <class T> struct Box {\n"] + [f"  void m{i}();\n" for i in range(n)] + ["  void get(long);\n};\n"]
new += [f"template <class T> void Box<T>::m{i}() {{}}\n" for i in range(n)]
new += ["template <class T> void Box<T>::get(long) {}\ntemplate struct Box<int>;\n}\n"]
user = ("namespace ns {\ntemplate <int N> struct Tag {};\nvoid f(Tag<1000>);\n"
        "template <class T> struct Box { void get(int); };\n}\n"
        "void use_box() { ns::Box<int> b; b.get(1); }\nvoid use_f() { ns::f(ns::Tag<1000>()); }\n")
gold = "namespace ns { void g(int) {} }\nnamespace std { void foo(int) {} }\n"
gnew = (["namespace ns {\nstruct g {\n"] + [f"  void m{i}();\n" for i in range(n)] + ["};\n"]
        + [f"void g::m{i}() {{}}\n" for i in range(n)] + ["void g(long) {}\n}\n"]
        + ["namespace std { void foo(long) {} }\n"])
guser = "namespace ns { void g(int); }\nnamespace std { void foo(int); }\nvoid use() { ns::g(1); std::foo(1); }\n"
for name, text in (("old", old), ("new", new), ("user", user), ("gold", gold), ("gnew", gnew), ("guser", guser)):
    open(f"{fx}/{name}.cpp", "w").write("".join(text))
PY
# the user is built against the old library, which the new one replaces
mkdir -p "$FX/old" "$FX/lib"
$CXX -shared -fPIC -o "$FX/old/libbox.so" "$FX/old.cpp" -Wl,-soname,libbox.so || fail "build the old libbox.so"
$CXX -shared -fPIC -o "$FX/lib/libuser.so" "$FX/user.cpp" -L"$FX/old" -Wl,--no-as-needed -lbox \
	-Wl,-rpath,'$ORIGIN' || fail "build libuser.so"
$CXX -shared -fPIC -o "$FX/lib/libbox.so" "$FX/new.cpp" -Wl,-soname,libbox.so || fail "build the new libbox.so"
$CXX -shared -fPIC -o "$FX/old/libg.so" "$FX/gold.cpp" -Wl,-soname,libg.so || fail "build the old libg.so"
$CXX -shared -fPIC -o "$FX/lib/libguser.so" "$FX/guser.cpp" -L"$FX/old" -Wl,--no-as-needed -lg \
	-Wl,-rpath,'$ORIGIN' || fail "build libguser.so"
$CXX -shared -fPIC -o "$FX/lib/libg.so" "$FX/gnew.cpp" -Wl,-soname,libg.so || fail "build the new libg.so"

expect_contains "$(python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$FX/lib/libuser.so" 2>&1)" \
	"undefined symbol: _ZN2ns" "the real loader: libuser.so fails on an undefined ns:: symbol"

$ABISCOPE why --json "$FX/lib/libuser.so" >"$FX/why.json" 2>"$FX/why.err"
expect_eq "$?" 1 "why: exit 1 (does not load)"
$ABISCOPE why --color never "$FX/lib/libuser.so" >"$FX/why.txt" 2>&1
nm -D --defined-only "$FX/lib/libbox.so" | awk '{print $3}' >"$FX/exports.txt"

# f(Tag<1000>): 300 overloads, more than the search demangles
got=$(jq_py '[(f["cause"], f["near_truncated"], len(f["near"])) for f in j["findings"] if f["symbol"] == "_ZN2ns1fENS_3TagILi1000EEE"]' \
	<"$FX/why.json" 2>&1)
expect_eq "$got" "[('signature-changed', True, 8)]" \
	"f(Tag<1000>) among 300 overloads: signature-changed, 8 near misses kept, near_truncated"
expect_contains "$(cat "$FX/why.txt")" "more like it (search capped)" "the text says the search was capped"
bad=$(jq_py '"\n".join(n["symbol"] for f in j["findings"] for n in f.get("near") or [])' <"$FX/why.json" |
	grep -vxF -f "$FX/exports.txt")
expect_eq "$bad" "" "every near miss named is one nm lists as exported by libbox.so"

# Box<int>::get(int): 300 other members share the class's prefix
got=$(jq_py '[(f["cause"], f["near_truncated"], [n["demangled"] for n in f["near"]]) for f in j["findings"] if f["symbol"] == "_ZN2ns3BoxIiE3getEi"]' \
	<"$FX/why.json" 2>&1)
expect_eq "$got" "[('signature-changed', False, ['ns::Box<int>::get(long)'])]" \
	"Box<int>::get(int) beside 300 other members: get(long) found, the search not capped"
expect_contains "$(cat "$FX/why.txt")" "parameter 1: int -> long" "the text gives the difference"

# ns::g(int) beside struct ns::g's 300 members, std::foo(int)
expect_contains "$(python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$FX/lib/libguser.so" 2>&1)" \
	"undefined symbol: _Z" "the real loader: libguser.so fails on an undefined symbol"
$ABISCOPE why --json "$FX/lib/libguser.so" >"$FX/g.json" 2>"$FX/g.err"
got=$(jq_py '[(f["symbol"], f["cause"], f["near_truncated"], [n["symbol"] for n in f["near"]]) for f in j["findings"] if f["id"] == "undefined-symbol"]' \
	<"$FX/g.json" 2>&1)
expect_contains "$got" "('_ZN2ns1gEi', 'signature-changed', False, ['_ZN2ns1gEl'])" \
	"ns::g(int) beside a struct ns::g of 300 members: ns::g(long) found, the search not capped"
expect_contains "$got" "('_ZSt3fooi', 'signature-changed', False, ['_ZSt3fool'])" \
	"std::foo(int), a name not nested: std::foo(long) found"
nm -D --defined-only "$FX/lib/libg.so" | awk '{print $3}' >"$FX/gexports.txt"
expect_eq "$(grep -cxF -e _ZN2ns1gEl -e _ZSt3fool "$FX/gexports.txt")" 2 "nm: libg.so exports both near misses"
finish
