#include "core/arena.h"

#include <sys/mman.h>

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	size_t map_len;	/* the mapping the block heads, for munmap */
	_Alignas(16) unsigned char mem[];
};

/*
 * Small allocations share one stream of 2 MiB blocks, each a huge page
 * where the kernel has one to give (MADV_HUGEPAGE: one page fault per
 * block instead of 512; a scan's tables, maps and strings were half its
 * page faults).  A request over ARENA_ONE_OFF gets a block of its own,
 * mapped page by page, so that the pages nothing writes (most of a
 * per-symbol table of a large library) are never touched.  Every block
 * is fresh anonymous memory from mmap(): zero, and never memset.
 */
#define ARENA_DEFAULT_BLOCK ((size_t)2 << 20)
#define ARENA_ONE_OFF ((size_t)64 << 10)
#define PAGE_SIZE_MIN ((size_t)4096)

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
	a->block_size = ARENA_DEFAULT_BLOCK - sizeof(struct arena_block);
	a->total = 0;
}

void arena_release(struct arena *a)
{
	/* the records of maps live in the blocks: all freed before them */
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
		munmap(b, b->map_len);
		b = next;
	}
	a->head = NULL;
	a->total = 0;
}

/* A block of the stream (one_off 0), or one for one_off bytes; NULL when
 * the kernel gives no memory. */
static struct arena_block *new_block(size_t one_off)
{
	size_t len;
	if (one_off) {
		if (!size_add(one_off, sizeof(struct arena_block) + PAGE_SIZE_MIN - 1, &len))
			return NULL;
		len &= ~(PAGE_SIZE_MIN - 1);
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		struct arena_block *b = p;
		b->size = len - sizeof *b;
		b->map_len = len;
		return b;
	}
	/* twice the size, then the aligned half kept: a huge page must start
	 * on a 2 MiB boundary */
	len = ARENA_DEFAULT_BLOCK;
	uint8_t *p = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	uint8_t *aligned = (uint8_t *)(((uintptr_t)p + len - 1) & ~(uintptr_t)(len - 1));
	if (aligned > p)
		munmap(p, (size_t)(aligned - p));
	if (p + 2 * len > aligned + len)
		munmap(aligned + len, (size_t)(p + 2 * len - (aligned + len)));
	(void)madvise(aligned, len, MADV_HUGEPAGE);
	struct arena_block *b = (struct arena_block *)aligned;
	b->size = len - sizeof *b;
	b->map_len = len;
	return b;
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
	if (!b || b->size - b->used < need || need > ARENA_ONE_OFF) {
		struct arena_block *nb = new_block(need > ARENA_ONE_OFF ? need : 0);
		if (!nb)
			out_of_memory(need);
		if (b && nb->size != a->block_size) {
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
