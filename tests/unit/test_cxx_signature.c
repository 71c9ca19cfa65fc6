/* Unit tests: demangled C++ signatures taken apart and compared (src/cxx/signature.h).
 * The inputs are real __cxa_demangle output, produced here from mangled names. */
#include "unit.h"
#include "cxx/demangle.h"
#include "cxx/signature.h"

static struct arena A;

static struct cxx_sig parse_mangled(const char *mangled)
{
	const char *d = cxx_demangle(&A, mangled);
	struct cxx_sig s;
	cxx_sig_parse(&A, d, strlen(d), &s);
	return s;
}

static struct cxx_sig parse_text(const char *text)
{
	struct cxx_sig s;
	cxx_sig_parse(&A, text, strlen(text), &s);
	return s;
}

static void parts(void)
{
	struct cxx_sig s = parse_mangled("_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib");
	CHECK(s.parsed, "c10_cuda_check_implementation parses");
	CHECK_INT(s.npart, 3, "three name parts");
	CHECK_STR(cxx_sig_scope(&A, &s, s.npart - 1), "c10::cuda", "scope");
	CHECK_STR(cxx_sig_basename(&s), "c10_cuda_check_implementation", "basename");
	CHECK_INT(s.nparam, 5, "five parameters");
	CHECK_STR(s.param[1], "char const*", "parameter 2 text");
	CHECK_STR(s.param[3], "int", "parameter 4 text");
	CHECK_STR(s.quals, "", "no qualifiers");
	CHECK(s.ret == NULL, "no return type for a non-template function");

	s = parse_mangled("_ZNK2at10TensorBase14const_data_ptrIiLi0EEEPKT_v");
	CHECK(s.parsed, "template member parses");
	CHECK_STR(s.ret, "int const*", "return type of a template function");
	CHECK_STR(s.part[2].name, "const_data_ptr", "template name");
	CHECK_STR(s.part[2].targs, "<int, 0>", "template arguments text");
	CHECK_INT(s.part[2].ntarg, 2, "two template arguments");
	CHECK_STR(s.part[2].targ[1], "0", "second template argument");
	CHECK_INT(s.nparam, 0, "no parameters");
	CHECK_STR(s.quals, "const", "const member function");

	s = parse_mangled("_ZStlsIcSt11char_traitsIcEERSt13basic_ostreamIT_T0_ES6_PKc");
	CHECK(s.parsed, "operator<< with template arguments parses");
	CHECK_STR(s.part[1].name, "operator<<", "operator<< name");
	CHECK_STR(s.part[1].targs, "<char, std::char_traits<char> >", "operator<< template arguments");
	CHECK_INT(s.nparam, 2, "operator<< parameters");
	CHECK_STR(s.ret, "std::basic_ostream<char, std::char_traits<char> >&", "operator<< return type");

	s = parse_mangled("_ZN3fooltERKS_");
	CHECK(s.parsed && str_eq(s.part[1].name, "operator<"), "operator< is a name, not a bracket");
	s = parse_mangled("_ZN3fooclEv");
	CHECK(s.parsed && str_eq(s.part[1].name, "operator()") && s.nparam == 0, "operator() and its empty parameters");
	s = parse_mangled("_ZNK3foocviEv");
	CHECK(s.parsed && str_eq(s.part[1].name, "operator int") && s.is_function, "conversion operator");
	s = parse_mangled("_ZnwmRKSt9nothrow_t");
	CHECK(s.parsed && str_eq(s.part[0].name, "operator new") && s.nparam == 2, "operator new");
	s = parse_mangled("_ZNKR1A1fEv");
	CHECK_STR(s.quals, "const &", "ref-qualified member");

	s = parse_mangled("_ZTVN3c105ErrorE");
	CHECK(s.parsed && s.special && str_eq(s.special, "vtable for"), "vtable is a special symbol");
	CHECK_STR(cxx_sig_qualified(&A, &s), "c10::Error", "vtable entity");
	CHECK(!s.is_function, "a vtable is not a function");

	s = parse_mangled("_ZN3c105ErrorC2ENS_14SourceLocationESs");
	CHECK(cxx_sig_is_structor(&s), "a constructor is recognised");
	s = parse_mangled("_ZNK3c1010TensorImpl4nameB5cxx11Ev");
	CHECK(s.parsed && str_eq(s.part[2].name, "name") && s.part[2].abi_tag &&
		      str_eq(s.part[2].abi_tag, "[abi:cxx11]"),
	      "ABI tag split from the name");
	s = parse_mangled("_ZN12_GLOBAL__N_13fooEv");
	CHECK(s.parsed && str_eq(s.part[0].name, "(anonymous namespace)"), "anonymous namespace");
	s = parse_mangled("_ZZ3foovE1x");
	CHECK(s.parsed && !s.is_function && s.npart == 2, "a local static is an entity, not a function");
	s = parse_mangled("_Z3fooPFviE");
	CHECK(s.parsed && s.nparam == 1 && str_eq(s.param[0], "void (*)(int)"), "function pointer parameter");
	s = parse_text("foo(int) [clone .cold]");
	CHECK(s.parsed && s.is_function && s.nparam == 1, "GCC clone suffix");
}

static void hostile(void)
{
	struct cxx_sig s;
	CHECK(cxx_sig_parse(&A, "", 0, &s) != ST_OK && !s.parsed, "empty text");
	CHECK(cxx_sig_parse(&A, "f(((((", 6, &s) != ST_OK && !s.parsed, "unbalanced brackets");
	CHECK(cxx_sig_parse(&A, "a))(b", 5, &s) != ST_OK, "closing bracket first");
	char deep[400];
	size_t n = 0;
	deep[n++] = 'f';
	for (int i = 0; i < 150; i++)
		deep[n++] = '<';
	for (int i = 0; i < 150; i++)
		deep[n++] = '>';
	CHECK(cxx_sig_parse(&A, deep, n, &s) != ST_OK && !s.parsed, "nesting beyond the limit");
	char many[400];
	n = 0;
	many[n++] = 'f';
	many[n++] = '(';
	for (int i = 0; i < 100; i++) {
		many[n++] = 'x';
		many[n++] = ',';
	}
	many[n++] = ')';
	CHECK(cxx_sig_parse(&A, many, n, &s) != ST_OK, "too many parameters");
	/* not NUL-terminated: only len bytes are read */
	const char buf[4] = { 'f', '(', ')', 'X' };
	CHECK(cxx_sig_parse(&A, buf, 3, &s) == ST_OK && s.is_function, "reads only len bytes");
	CHECK(cxx_sig_parse(&A, "operator", 8, &s) == ST_OK, "a bare operator keyword");
	CHECK(cxx_sig_parse(&A, "operator ", 9, &s) != ST_OK || s.parsed, "operator and a space");
}

static void diffs(void)
{
	struct cxx_sig w = parse_mangled("_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib");
	struct cxx_sig h = parse_mangled("_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb");
	struct cxx_diff d;
	cxx_sig_diff(&A, &w, &h, &d);
	CHECK_INT(d.rel, CXX_REL_SIGNATURE, "int -> unsigned int is a signature change");
	CHECK_INT(d.nline, 1, "one difference");
	CHECK_STR(d.nline ? d.line[0] : NULL, "parameter 4: int -> unsigned int", "names the parameter");

	h = parse_mangled("_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jbPNS0_19CUDAErrorLogCaptureE");
	cxx_sig_diff(&A, &w, &h, &d);
	CHECK_INT(d.nline, 2, "a changed and an added parameter");
	CHECK_STR(d.nline > 1 ? d.line[1] : NULL, "parameter 6 added: c10::cuda::CUDAErrorLogCapture*",
		  "an added parameter");
	cxx_sig_diff(&A, &h, &w, &d);
	CHECK_STR(d.nline > 1 ? d.line[1] : NULL, "parameter 6 removed: c10::cuda::CUDAErrorLogCapture*",
		  "a removed parameter");

	w = parse_mangled("_ZN3c105ErrorC2ENS_14SourceLocationESs");
	h = parse_mangled("_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");
	cxx_sig_diff(&A, &w, &h, &d);
	CHECK_INT(d.rel, CXX_REL_CXX11_ABI, "std::string vs __cxx11 is the CXX11 ABI");
	CHECK_STR(d.nline ? d.line[0] : NULL, "std::string flavour: _GLIBCXX_USE_CXX11_ABI=0 -> 1",
		  "names the flavours");
	CHECK_INT(cxx_abi_macro_value(cxx_abi_flavour_of(w.text)), 0, "old flavour");
	CHECK_INT(cxx_abi_macro_value(cxx_abi_flavour_of(h.text)), 1, "new flavour");
	CHECK_INT(cxx_abi_flavour_of("std::string_view foo(int)"), CXX_ABI_NONE, "string_view is not std::string");
	CHECK_INT(cxx_abi_flavour_of("c10::TensorImpl::name[abi:cxx11]() const"), CXX_ABI_NEW, "abi tag is the new flavour");

	w = parse_mangled("_ZNK2at10TensorBase14const_data_ptrIiLi0EEEPKT_v");
	h = parse_mangled("_ZNK2at10TensorBase14const_data_ptrIfLi0EEEPKT_v");
	cxx_sig_diff(&A, &w, &h, &d);
	CHECK_INT(d.rel, CXX_REL_TEMPLATE, "another instantiation is a template change");
	CHECK_STR(d.nline ? d.line[0] : NULL, "template arguments: <int, 0> -> <float, 0>", "names the arguments");

	w = parse_text("c10::cuda::SetDevice(int)");
	h = parse_text("c10::cuda::impl::SetDevice(int)");
	cxx_sig_diff(&A, &w, &h, &d);
	CHECK_INT(d.rel, CXX_REL_SCOPE, "same name elsewhere is a scope change");
	CHECK_STR(d.nline ? d.line[0] : NULL, "scope: c10::cuda -> c10::cuda::impl", "names both scopes");

	w = parse_text("ns::f(std::string&)");
	h = parse_text("ns::f(std::string const&)");
	cxx_sig_diff(&A, &w, &h, &d);
	CHECK_STR(d.nline ? d.line[0] : NULL, "parameter 1: std::string& -> std::string const& (const added)",
		  "constness named");
	h = parse_text("ns::f(std::string&&)");
	cxx_sig_diff(&A, &w, &h, &d);
	CHECK_STR(d.nline ? d.line[0] : NULL,
		  "parameter 1: std::string& -> std::string&& (by lvalue reference -> by rvalue reference)",
		  "reference kind named");
	h = parse_text("ns::f(std::string&) const");
	cxx_sig_diff(&A, &w, &h, &d);
	CHECK_STR(d.nline ? d.line[0] : NULL, "qualifiers: (none) -> const", "member constness named");
	h = parse_text("ns::g(std::string&)");
	cxx_sig_diff(&A, &w, &h, &d);
	CHECK_INT(d.rel, CXX_REL_UNRELATED, "another name is unrelated");
	cxx_sig_diff(&A, &w, &w, &d);
	CHECK_INT(d.rel, CXX_REL_SAME, "the same text");
}

/* One spelling of std::string: each pattern wherever it starts, and the
 * characters that begin a pattern without being one copied as they are. */
static void unify(void)
{
	CHECK_STR(cxx_abi_unify(&A, "f(std::__cxx11::basic_string<char, std::char_traits<char>, "
				    "std::allocator<char> > const&)"),
		  "f(std::string const&)", "the new std::string");
	CHECK_STR(cxx_abi_unify(&A, "f(std::basic_string<char, std::char_traits<char>, std::allocator<char> >)"),
		  "f(std::string)", "the old std::string");
	CHECK_STR(cxx_abi_unify(&A, "std::__cxx11::list<int, std::allocator<int> >::size() const"),
		  "std::list<int, std::allocator<int> >::size() const", "another __cxx11 class");
	CHECK_STR(cxx_abi_unify(&A, "name[abi:cxx11]()"), "name()", "an ABI tag");
	CHECK_STR(cxx_abi_unify(&A, "s::str(sss, [5], std)"), "s::str(sss, [5], std)",
		  "'s' and '[' that start no pattern");
	CHECK_STR(cxx_abi_unify(&A, "std::__cxx11::"), "std::", "a pattern at the very end");
	CHECK_STR(cxx_abi_unify(&A, "x std::__cxx1"), "x std::__cxx1", "a pattern cut short");
	CHECK_STR(cxx_abi_unify(&A, ""), "", "nothing");

	/* special names (typeinfo, vtables) are compared as whole texts: the
	 * two std::list flavours' typeinfo differ in the ABI alone */
	struct cxx_sig w = parse_mangled("_ZTINSt7__cxx114listIiSaIiEEE");
	struct cxx_sig h = parse_mangled("_ZTISt4listIiSaIiEE");
	struct cxx_diff d;
	cxx_sig_diff(&A, &w, &h, &d);
	CHECK_INT(d.rel, CXX_REL_CXX11_ABI, "typeinfo of the other std::list flavour");
	h = parse_mangled("_ZTISt6vectorIiSaIiEE");
	cxx_sig_diff(&A, &w, &h, &d);
	CHECK_INT(d.rel, CXX_REL_UNRELATED, "typeinfo of another class");
	/* texts the parser gives up on are compared whole, too */
	w = parse_text("f(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >");
	h = parse_text("f(std::string");
	CHECK(!w.parsed && !h.parsed, "an unclosed parameter list is not parsed");
	cxx_sig_diff(&A, &w, &h, &d);
	CHECK_INT(d.rel, CXX_REL_CXX11_ABI, "unparsed texts that differ in the ABI alone");
	h = parse_text("g(std::string");
	cxx_sig_diff(&A, &w, &h, &d);
	CHECK_INT(d.rel, CXX_REL_UNRELATED, "unparsed texts that differ otherwise");
}

int main(void)
{
	arena_init(&A);
	parts();
	hostile();
	diffs();
	unify();
	arena_release(&A);
	return unit_done();
}
