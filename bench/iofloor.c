/*
 * iofloor.c: the I/O floor of an abiscope run over a corpus.
 *
 *   iofloor [--repeat N] [--ranges] LIST
 *
 * For every object in LIST (one path per line) it parses the file with
 * abiscope's own ELF reader and lists the byte ranges abiscope reads from
 * it: the ELF header, program headers, section headers and their name
 * table, the dynamic segment and PT_INTERP, the dynamic string and symbol
 * tables, the version tables (versym, verdef, verneed), the GNU and SysV
 * hash tables, and the relocation tables (less the leading DT_RELACOUNT /
 * DT_RELCOUNT relative entries, which the loader model skips unread).
 * These are upper bounds of what a check touches: symbol lookups only
 * visit the hash chains and names they need.  Overlapping ranges are
 * merged.
 *
 * Then it times reading exactly those ranges with pread() into one buffer
 * (open, pread each range, close; every file, one thread), N times, and
 * prints one line of key=value figures: objects, file bytes, needed bytes
 * (and rounded out to 4 KiB pages, what the kernel actually moves), ranges,
 * and the read time of each repetition with their median.  Run it after
 * dropping the page cache for the cold floor, warm for the warm floor.
 *
 * --walk DIR also times listing every directory under DIR with readdir()
 * alone (no stat): the least any tool must do to find a tree's objects,
 * part of the floor of `abiscope check DIR`.
 *
 * --fatbin adds what a CUDA listing reads (src/cuda/fatbin.h, registered
 * fatbins): each fatbin header, each entry header, the .nvFatBinSegment
 * wrappers; never a payload.
 *
 * --cold evicts the files from the page cache (POSIX_FADV_DONTNEED, then
 * drop_caches when permitted) after computing the ranges and before the
 * timed walk and reads; use it with --repeat 1.
 *
 * --ranges prints every range (path, offset, length, what) instead.
 *
 * It links libabiscope.a; the parsing happens before the timed reads.
 */
#include "core/fs.h"
#include "cuda/fatbin.h"
#include "elf/elf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096u

struct range {
	uint64_t off, len;
	const char *what;
};

struct file_ranges {
	char *path;
	uint64_t size;
	struct range *r;
	size_t n, cap;
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void add(struct file_ranges *f, uint64_t off, uint64_t len, const char *what)
{
	if (len == 0 || off >= f->size)
		return;
	if (len > f->size - off)
		len = f->size - off;
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 32;
		struct range *nr = realloc(f->r, f->cap * sizeof *nr);
		if (!nr) {
			fprintf(stderr, "iofloor: out of memory\n");
			exit(2);
		}
		f->r = nr;
	}
	f->r[f->n].off = off;
	f->r[f->n].len = len;
	f->r[f->n].what = what;
	f->n++;
}

static void add_window(struct file_ranges *f, const struct elf_file *ef, struct bytes w,
		       const char *what)
{
	if (w.len && w.data >= ef->raw.data && w.data < ef->raw.data + ef->raw.len)
		add(f, (uint64_t)(w.data - ef->raw.data), w.len, what);
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Sorts and merges overlapping or touching ranges. */
static void merge(struct file_ranges *f)
{
	if (f->n < 2)
		return;
	qsort(f->r, f->n, sizeof *f->r, cmp_range);
	size_t k = 0;
	for (size_t i = 1; i < f->n; i++) {
		struct range *last = &f->r[k];
		if (f->r[i].off <= last->off + last->len) {
			uint64_t end = f->r[i].off + f->r[i].len;
			if (end > last->off + last->len)
				last->len = end - last->off;
		} else {
			f->r[++k] = f->r[i];
		}
	}
	f->n = k + 1;
}

static void reltab_ranges(struct file_ranges *f, const struct elf_file *ef,
			  const struct elf_reltab *t, uint64_t skip, const char *what)
{
	if (!t->data.len)
		return;
	uint64_t ent = t->rela ? (ef->is64 ? 24 : 12) : (ef->is64 ? 16 : 8);
	struct bytes w = t->data;
	uint64_t cut = skip * ent;
	if (cut >= w.len)
		return;
	w.data += cut;
	w.len -= cut;
	add_window(f, ef, w, what);
}

/* The fatbin headers and entry headers a CUDA listing reads (payloads
 * are never touched), and the .nvFatBinSegment wrappers. */
static void fatbin_ranges(struct file_ranges *f, struct arena *a, const struct elf_file *ef)
{
	struct fatbin_set set;
	fatbin_set_init(&set);
	fatbin_scan_elf(a, ef, FATBIN_SCAN_REGISTERED, &set);
	for (size_t i = 0; i < set.nfatbin; i++)
		add(f, set.fatbin[i].offset, 16, "fatbin");
	for (size_t i = 0; i < set.nentry; i++)
		add(f, set.entry[i].offset, set.entry[i].header_size ? set.entry[i].header_size : 64,
		    "fatbin");
	const struct elf_section *w = elf_section_by_name(ef, ".nvFatBinSegment");
	if (w && w->type != SHT_NOBITS_)
		add(f, w->offset, w->size, "fatbin");
}

/* The ranges abiscope's reader and loader model read from one ELF file. */
static void elf_ranges(struct file_ranges *f, const struct elf_file *ef)
{
	const struct bytes *b = &ef->raw;
	uint64_t phoff = 0, shoff = 0;
	add(f, 0, ef->is64 ? 64 : 52, "ehdr");
	if (ef->is64) {
		bytes_u64(b, 32, &phoff);
		bytes_u64(b, 40, &shoff);
	} else {
		uint32_t v;
		bytes_u32(b, 28, &v);
		phoff = v;
		bytes_u32(b, 32, &v);
		shoff = v;
	}
	add(f, phoff, (uint64_t)ef->nseg * ef->phentsize, "phdrs");
	if (shoff)
		add(f, shoff, (uint64_t)ef->nsec * ef->shentsize, "shdrs");
	for (size_t i = 0; i < ef->nsec; i++) {
		const struct elf_section *s = &ef->sec[i];
		if (s->type == 3 /* SHT_STRTAB */ && s->name && str_eq(s->name, ".shstrtab"))
			add(f, s->offset, s->size, "shstrtab");
		/* version tables, located the way the loader finds them (DT_VERDEF,
		 * DT_VERNEED point at these sections in every linker's output) */
		if (s->type == 0x6ffffffd || s->type == 0x6ffffffe)
			add(f, s->offset, s->size, s->type == 0x6ffffffd ? "verdef" : "verneed");
	}
	for (size_t i = 0; i < ef->nseg; i++) {
		const struct elf_segment *s = &ef->seg[i];
		if (s->type == PT_DYNAMIC_)
			add(f, s->offset, s->filesz, "dynamic");
		else if (s->type == PT_INTERP_)
			add(f, s->offset, s->filesz, "interp");
	}
	add_window(f, ef, ef->dynstr, "dynstr");
	add_window(f, ef, ef->dynsym, "dynsym");
	add_window(f, ef, ef->versym, "versym");
	if (ef->has_gnu_hash) {
		/* header and bloom words precede the buckets */
		struct bytes head = ef->gnu_bloom;
		head.data -= 16;
		head.len += 16;
		add_window(f, ef, head, "gnu_hash");
		add_window(f, ef, ef->gnu_buckets, "gnu_hash");
		uint64_t nchain = ef->nsyms > ef->gnu_symoffset ? ef->nsyms - ef->gnu_symoffset : 0;
		struct bytes chain = ef->gnu_chain;
		if (chain.len > nchain * 4)
			chain.len = nchain * 4;
		add_window(f, ef, chain, "gnu_hash");
	}
	if (ef->has_sysv_hash) {
		struct bytes head = ef->sysv_bucket;
		head.data -= 8;
		head.len += 8;
		add_window(f, ef, head, "hash");
		add_window(f, ef, ef->sysv_chain, "hash");
	}
	reltab_ranges(f, ef, &ef->rel, ef->jmprel_is_rela ? 0 : ef->relcount, "rel");
	reltab_ranges(f, ef, &ef->rela, ef->jmprel_is_rela ? ef->relacount : 0, "rela");
	reltab_ranges(f, ef, &ef->jmprel, 0, "jmprel");
}

static bool collect(const struct fsview *fs, const char *path, struct file_ranges *f,
		    bool fatbin)
{
	memset(f, 0, sizeof *f);
	f->path = strdup(path);
	struct mapped_file mf;
	struct diag d;
	diag_clear(&d);
	if (fs_map(fs, path, &mf, &d) != ST_OK) {
		fprintf(stderr, "iofloor: %s\n", d.msg);
		return false;
	}
	f->size = mf.len;
	struct arena a;
	arena_init(&a);
	struct elf_file ef;
	if (elf_parse(&a, bytes_make(mf.data, mf.len, false), path, &ef, &d) == ST_OK) {
		elf_ranges(f, &ef);
		if (fatbin)
			fatbin_ranges(f, &a, &ef);
	} else
		add(f, 0, 64, "ehdr");	/* what the loader's probe reads */
	arena_release(&a);
	fs_unmap(&mf);
	merge(f);
	return true;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Lists every directory under path with readdir() alone (d_type, no stat):
 * the least any tool must do to find the objects of a tree. */
static void walk_tree(const char *path, uint64_t *dirs, uint64_t *entries, int depth)
{
	DIR *d = opendir(path);
	if (!d)
		return;
	(*dirs)++;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		(*entries)++;
		if (de->d_type == DT_DIR && depth < 64) {
			char sub[8192];
			int n = snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
			if (n > 0 && (size_t)n < sizeof sub)
				walk_tree(sub, dirs, entries, depth + 1);
		}
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	const char *list = NULL;
	int repeat = 5;
	bool show = false;
	const char *walk = NULL;
	bool cold = false, fatbin = false;
	for (int i = 1; i < argc; i++) {
		if (str_eq(argv[i], "--repeat") && i + 1 < argc)
			repeat = (int)strtol(argv[++i], NULL, 10);
		else if (str_eq(argv[i], "--ranges"))
			show = true;
		else if (str_eq(argv[i], "--cold"))
			cold = true;
		else if (str_eq(argv[i], "--fatbin"))
			fatbin = true;
		else if (str_eq(argv[i], "--walk") && i + 1 < argc)
			walk = argv[++i];
		else if (!list)
			list = argv[i];
		else
			list = NULL, i = argc;
	}
	if (!list || repeat < 1 || repeat > 1000) {
		fprintf(stderr, "usage: iofloor [--repeat N] [--ranges] [--walk DIR] [--cold] [--fatbin] LIST\n");
		return 2;
	}
	struct fsview fs;
	fs_init(&fs, NULL);
	FILE *lf = fopen(list, "r");
	if (!lf) {
		perror(list);
		return 2;
	}
	size_t n = 0, cap = 0;
	struct file_ranges *files = NULL;
	char line[8192];
	while (fgets(line, sizeof line, lf)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0])
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			struct file_ranges *nf = realloc(files, cap * sizeof *nf);
			if (!nf)
				return 2;
			files = nf;
		}
		if (collect(&fs, line, &files[n], fatbin))
			n++;
	}
	fclose(lf);

	uint64_t file_bytes = 0, need = 0, need_pages = 0, biggest = 0;
	size_t nranges = 0;
	for (size_t i = 0; i < n; i++) {
		file_bytes += files[i].size;
		uint64_t last_page = UINT64_MAX;
		for (size_t k = 0; k < files[i].n; k++) {
			const struct range *r = &files[i].r[k];
			if (show)
				printf("%s\t%llu\t%llu\t%s\n", files[i].path, (unsigned long long)r->off,
				       (unsigned long long)r->len, r->what);
			need += r->len;
			uint64_t first = r->off / PAGE, end = (r->off + r->len + PAGE - 1) / PAGE;
			if (first == last_page)
				first++;
			if (end > first)
				need_pages += (end - first) * PAGE;
			last_page = end - 1;
			if (r->len > biggest)
				biggest = r->len;
			nranges++;
		}
	}
	if (show)
		return 0;
	uint8_t *buf = malloc(biggest ? biggest : 1);
	double *t = calloc((size_t)repeat, sizeof *t);
	if (!buf || !t)
		return 2;
	uint64_t sum = 0;
	for (int rep = 0; rep < repeat; rep++) {
		double t0 = now_ms();
		for (size_t i = 0; i < n; i++) {
			int fd = open(files[i].path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			if (fd < 0)
				continue;
			for (size_t k = 0; k < files[i].n; k++) {
				ssize_t got = pread(fd, buf, files[i].r[k].len, (off_t)files[i].r[k].off);
				if (got > 0)
					sum += buf[got - 1];
			}
			close(fd);
		}
		t[rep] = now_ms() - t0;
	}
	if (cold) {
		/* The ranges were computed from the files: evict them again. */
		for (size_t i = 0; i < n; i++) {
			int fd = open(files[i].path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			if (fd >= 0) {
				posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
				close(fd);
			}
		}
		sync();
		FILE *dc = fopen("/proc/sys/vm/drop_caches", "w");
		if (dc) {
			fputs("3\n", dc);
			fclose(dc);
		}
	}
	double walk_ms = 0;
	uint64_t ndirs = 0, nentries = 0;
	if (walk) {
		double *wt = calloc((size_t)repeat, sizeof *wt);
		if (!wt)
			return 2;
		for (int rep = 0; rep < repeat; rep++) {
			ndirs = nentries = 0;
			double t0 = now_ms();
			walk_tree(walk, &ndirs, &nentries, 0);
			wt[rep] = now_ms() - t0;
		}
		qsort(wt, (size_t)repeat, sizeof *wt, cmp_double);
		walk_ms = wt[repeat / 2];
		free(wt);
	}
	double times[1000];
	memcpy(times, t, (size_t)repeat * sizeof *t);
	qsort(times, (size_t)repeat, sizeof *times, cmp_double);
	printf("objects=%zu file_bytes=%llu need_bytes=%llu need_page_bytes=%llu ranges=%zu "
	       "read_ms=%.3f first_ms=%.3f walk_dirs=%llu walk_entries=%llu walk_ms=%.3f "
	       "checksum=%llu\n",
	       n, (unsigned long long)file_bytes, (unsigned long long)need,
	       (unsigned long long)need_pages, nranges, times[repeat / 2], t[0],
	       (unsigned long long)ndirs, (unsigned long long)nentries, walk_ms,
	       (unsigned long long)(sum & 0xff));
	free(buf);
	free(t);
	for (size_t i = 0; i < n; i++) {
		free(files[i].path);
		free(files[i].r);
	}
	free(files);
	return 0;
}
