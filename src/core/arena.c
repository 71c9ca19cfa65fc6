#include "core/arena.h"

#include <sys/mman.h>

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	_Alignas(16) unsigned char mem[];
};

#define ARENA_DEFAULT_BLOCK (256u * 1024u)

struct arena_map {
	struct arena_map *next;
	void *p;
	size_t size;	/* 0: adopted from malloc(), freed, not unmapped */
};

/* The library never prints: a program that wants a message on
 * exhaustion defines arena_out_of_memory() (the CLI does); this weak
 * default only stops. */
__attribute__((weak)) void arena_out_of_memory(size_t size)
{
	(void)size;
	abort();
}

static void out_of_memory(size_t size)
{
	arena_out_of_memory(size);
	abort();	/* in case the program's handler returns */
}

void arena_init(struct arena *a)
{
	a->head = NULL;
	a->maps = NULL;
	a->block_size = ARENA_DEFAULT_BLOCK;
	a->total = 0;
}

void arena_release(struct arena *a)
{
	for (struct arena_map *m = a->maps; m; m = m->next) {
		if (m->size)
			munmap(m->p, m->size);
		else
			free(m->p);
	}
	a->maps = NULL;
	struct arena_block *b = a->head;
	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
	a->total = 0;
}

void *arena_alloc(struct arena *a, size_t size)
{
	size_t need;
	if (!size_add(size, 15, &need))
		out_of_memory(size);
	need &= ~(size_t)15;
	if (need == 0)
		need = 16;
	struct arena_block *b = a->head;
	if (!b || b->size - b->used < need) {
		size_t bsize = need > a->block_size / 4 ? need : a->block_size;
		size_t alloc;
		if (!size_add(bsize, sizeof(*b), &alloc))
			out_of_memory(size);
		/* zeroed by calloc, which for blocks this large takes fresh pages
		 * from the kernel: memory handed out is never reused, so it is
		 * zero without a memset, and pages nothing writes (most of a
		 * per-symbol table of a large library) are never touched */
		struct arena_block *nb = calloc(1, alloc);
		if (!nb)
			out_of_memory(alloc);
		nb->used = 0;
		nb->size = bsize;
		if (b && bsize != a->block_size) {
			/* A big one-off block goes behind the current block so
			 * the current one keeps serving small requests. */
			nb->next = b->next;
			b->next = nb;
		} else {
			nb->next = b;
			a->head = nb;
		}
		b = nb;
	}
	void *p = b->mem + b->used;
	b->used += need;
	a->total += need;
	return p;
}

void *arena_alloc_untouched(struct arena *a, size_t size)
{
	size_t len = size ? size : 1;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		out_of_memory(size);
	struct arena_map *m = arena_alloc(a, sizeof *m);
	m->p = p;
	m->size = len;
	m->next = a->maps;
	a->maps = m;
	return p;
}

void arena_adopt(struct arena *a, void *p)
{
	if (!p)
		return;
	struct arena_map *m = arena_alloc(a, sizeof *m);
	m->p = p;
	m->size = 0;
	m->next = a->maps;
	a->maps = m;
}

void *arena_calloc(struct arena *a, size_t n, size_t size)
{
	size_t total;
	if (!size_mul(n, size, &total))
		out_of_memory(SIZE_MAX);
	return arena_alloc(a, total);
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *arena_vprintf(struct arena *a, const char *fmt, va_list ap)
{
	/* most results are short paths: formatted once into the stack, and
	 * formatted again only when they do not fit */
	char small[256];
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(small, sizeof small, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return arena_strdup(a, "");
	char *p = arena_alloc(a, (size_t)n + 1);
	if ((size_t)n < sizeof small)
		memcpy(p, small, (size_t)n + 1);
	else
		vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *arena_join(struct arena *a, const char *x, const char *sep, const char *y)
{
	size_t size = strlen(x) + strlen(sep) + strlen(y) + 1;
	char *p = arena_alloc(a, size);
	str_join(p, size, x, sep, y);	/* the one length-checked copy */
	return p;
}

char *arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = arena_vprintf(a, fmt, ap);
	va_end(ap);
	return p;
}

void *arena_grow(struct arena *a, const void *old, size_t old_n, size_t new_n, size_t elem)
{
	void *p = arena_calloc(a, new_n, elem);
	if (old && old_n)
		memcpy(p, old, MIN(old_n, new_n) * elem);
	return p;
}

void ptrvec_push(struct arena *a, struct ptrvec *v, void *p)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 8;
		v->item = arena_grow(a, v->item, v->n, cap, sizeof(void *));
		v->cap = cap;
	}
	v->item[v->n++] = p;
}

bool ptrvec_contains(const struct ptrvec *v, const void *p)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->item[i] == p)
			return true;
	return false;
}
