# Helpers of the tests of abiscope's own wheels, pywheel.sh and
# pywheel_aarch64.sh (sourced after lib.sh).
# cxx_fixture DIR: cons.so needs ns::take(..., int) from libprov.so, which
# exports ns::take(..., unsigned int); both signatures nest templates
# (std::vector<std::vector<int> >, a std::map of std::string): its
# explanation prints them as the binary's demangler does, and libstdc++'s is
# not LLVM's (of 1.4 million names from torch environments, LLVM 14's
# llvm-cxxfilt printed 36% otherwise: clones, lambdas, spacing).
cxx_fixture() {
	mkdir -p "$1"
	cat >"$1/prov.cc" <<'CC'
#include <map>
#include <string>
#include <vector>
namespace ns {
template <class T> struct box { T v; };
unsigned take(const std::vector<std::vector<int>> &a, std::map<std::string, std::vector<long>> &m, unsigned n) { return a.size() + m.size() + n; }
int apply(box<box<std::vector<std::pair<int, double>>>> *b, int (*f)(const char *)) { return b ? f("x") : 0; }
}
CC
	sed 's/unsigned n) {.*/int n);/; s/\(int (\*f)(const char \*)\)) {.*/\1);/' "$1/prov.cc" >"$1/cons.cc"
	printf 'int use(void) {\n\tstd::vector<std::vector<int>> a; std::map<std::string, std::vector<long>> m;\n\treturn ns::take(a, m, 1) + ns::apply(nullptr, nullptr);\n}\n' >>"$1/cons.cc"
	${CXX:-g++} -shared -fPIC -o "$1/libprov.so" "$1/prov.cc" &&
		${CXX:-g++} -shared -fPIC -o "$1/cons.so" "$1/cons.cc" -L"$1" -lprov -Wl,-rpath,'$ORIGIN'
}
