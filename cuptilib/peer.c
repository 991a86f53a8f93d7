/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The user's own profiler wins. CUPTI's activity API is one per process: one set of
 * buffer callbacks, one set of enabled kinds. Measured on the H100 (PyTorch 2.11): with
 * the timeline on, torch.profiler (Kineto) started in the same process recorded 0 CUDA
 * kernels. So the library watches the process's other modules call CUPTI: it points
 * their GOT entries of the calls that start a profiling session (cuptiSubscribe,
 * cuptiActivityRegisterCallbacks, cuptiActivityEnable) and end one (cuptiUnsubscribe,
 * cuptiFinalize, cuptiActivityDisable of the kernel kinds) at small wrappers. A wrapper
 * first lets the library step aside (hand its buffers over, disable its kinds: the
 * caller then starts on a clean CUPTI), then calls CUPTI itself. The library comes back
 * only after the peer ended its session and the retry period passed.
 *
 * Only GOT slots are written (JUMP_SLOT and GLOB_DAT relocations, x86-64 and AArch64),
 * never code; slots under RELRO are made writable for the one store and read-only
 * again. The wrappers call the function the dynamic linker finds for the name
 * (dlsym(RTLD_DEFAULT)), the one the caller would have reached. Modules are walked at
 * initialisation and again whenever the loaded set changes (dl_iterate_phdr's adds
 * counter); the library's own module, CUPTI and the CUDA driver are left alone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "peer.h"

#if defined(__x86_64__)
#define R_SLOT R_X86_64_JUMP_SLOT
#define R_GDAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_SLOT R_AARCH64_JUMP_SLOT
#define R_GDAT R_AARCH64_GLOB_DAT
#endif

typedef int (*fn_subscribe)(void **, void *, void *);
typedef int (*fn_unsubscribe)(void *);
typedef int (*fn_finalize)(void);
typedef int (*fn_register)(void *, void *);
typedef int (*fn_kind)(uint32_t);

static struct peer_hooks *hooks;

/* bound[i]: the libcupti function a patched slot of wrapped[i] pointed at (when it was
 * already bound there), for a libcupti not in the global scope. */
static void *bound[8];
static int wrapped_index(const char *name);

static void *real(const char *name)
{
	/* RTLD_DEFAULT from this module sees the global scope: the libcupti the peer linked;
	 * one loaded RTLD_LOCAL is reached through what the slot held before. */
	void *f = dlsym(RTLD_DEFAULT, name);
	int i = wrapped_index(name);
	return f ? f : (i >= 0 ? bound[i] : NULL);
}

static int w_subscribe(void **s, void *cb, void *ud)
{
	hooks->arrived("cuptiSubscribe");
	fn_subscribe f = real("cuptiSubscribe");
	return f ? f(s, cb, ud) : 999;
}
static int w_register(void *req, void *done)
{
	hooks->arrived("cuptiActivityRegisterCallbacks");
	fn_register f = real("cuptiActivityRegisterCallbacks");
	return f ? f(req, done) : 999;
}
static int w_enable(uint32_t kind)
{
	hooks->arrived("cuptiActivityEnable");
	fn_kind f = real("cuptiActivityEnable");
	return f ? f(kind) : 999;
}
static int w_unsubscribe(void *s)
{
	fn_unsubscribe f = real("cuptiUnsubscribe");
	int r = f ? f(s) : 999;
	hooks->left("cuptiUnsubscribe");
	return r;
}
static int w_finalize(void)
{
	fn_finalize f = real("cuptiFinalize");
	int r = f ? f() : 999;
	hooks->left("cuptiFinalize");
	return r;
}
static int w_disable(uint32_t kind)
{
	fn_kind f = real("cuptiActivityDisable");
	int r = f ? f(kind) : 999;
	if (kind == 3 /* KERNEL */ || kind == 10 /* CONCURRENT_KERNEL */)
		hooks->left("cuptiActivityDisable");
	return r;
}

static const struct {
	const char *name;
	void *wrapper;
} wrapped[] = {
	{ "cuptiSubscribe", (void *)w_subscribe },
	{ "cuptiSubscribe_v2", (void *)w_subscribe },
	{ "cuptiActivityRegisterCallbacks", (void *)w_register },
	{ "cuptiActivityEnable", (void *)w_enable },
	{ "cuptiUnsubscribe", (void *)w_unsubscribe },
	{ "cuptiFinalize", (void *)w_finalize },
	{ "cuptiActivityDisable", (void *)w_disable },
};

static int wrapped_index(const char *name)
{
	for (size_t w = 0; w < sizeof wrapped / sizeof wrapped[0]; w++)
		if (!strcmp(name, wrapped[w].name))
			return (int)w;
	return -1;
}

static int skip_module(const char *name)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	return strstr(base, "libcupti") || strstr(base, "libcuda.so") || strstr(base, "libghostdriver_cupti") ||
	       strstr(base, "linux-vdso") || strstr(base, "ld-linux");
}

static uintptr_t relocated(uintptr_t p, uintptr_t base)
{
	/* glibc relocates these d_ptr values in place; other loaders may not. */
	return p < base ? p + base : p;
}

static void store_slot(uintptr_t slot, void *value, const ElfW(Phdr) * relro, uintptr_t base)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t p = slot & ~(uintptr_t)(page - 1);
	int ro = relro && slot >= base + relro->p_vaddr && slot < base + relro->p_vaddr + relro->p_memsz;
	if (ro && mprotect((void *)p, (size_t)page, PROT_READ | PROT_WRITE))
		return;
	__atomic_store_n((void **)slot, value, __ATOMIC_RELEASE);
	if (ro)
		mprotect((void *)p, (size_t)page, PROT_READ);
}

static void patch_relocs(const ElfW(Rela) * r, size_t n, const ElfW(Sym) * symtab, const char *strtab,
			 uintptr_t base, const ElfW(Phdr) * relro)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t type = (uint32_t)ELF64_R_TYPE(r[i].r_info);
		if (type != R_SLOT && type != R_GDAT)
			continue;
		const char *name = strtab + symtab[ELF64_R_SYM(r[i].r_info)].st_name;
		if (strncmp(name, "cupti", 5))
			continue;
		for (size_t w = 0; w < sizeof wrapped / sizeof wrapped[0]; w++) {
			if (strcmp(name, wrapped[w].name))
				continue;
			uintptr_t slot = base + r[i].r_offset;
			void *was = *(void **)slot;
			Dl_info di;
			if (was != wrapped[w].wrapper && !bound[w] && dladdr(was, &di) && di.dli_fname &&
			    strstr(di.dli_fname, "libcupti"))
				bound[w] = was;
			if (*(void **)slot != wrapped[w].wrapper) {
				store_slot(slot, wrapped[w].wrapper, relro, base);
				hooks->patched++;
			}
		}
	}
}

static uintptr_t self_base;

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size, (void)data;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	if (info->dlpi_addr == self_base || skip_module(name))
		return 0;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Phdr) *relro = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		else if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO)
			relro = &info->dlpi_phdr[i];
	}
	if (!dyn)
		return 0;
	uintptr_t base = info->dlpi_addr, symtab = 0, strtab = 0, jmprel = 0, rela = 0;
	size_t pltsz = 0, relasz = 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: symtab = relocated(dyn->d_un.d_ptr, base); break;
		case DT_STRTAB: strtab = relocated(dyn->d_un.d_ptr, base); break;
		case DT_JMPREL: jmprel = relocated(dyn->d_un.d_ptr, base); break;
		case DT_PLTRELSZ: pltsz = dyn->d_un.d_val; break;
		case DT_RELA: rela = relocated(dyn->d_un.d_ptr, base); break;
		case DT_RELASZ: relasz = dyn->d_un.d_val; break;
		}
	}
	if (!symtab || !strtab)
		return 0;
	if (jmprel)
		patch_relocs((const ElfW(Rela) *)jmprel, pltsz / sizeof(ElfW(Rela)), (const ElfW(Sym) *)symtab,
			     (const char *)strtab, base, relro);
	if (rela)
		patch_relocs((const ElfW(Rela) *)rela, relasz / sizeof(ElfW(Rela)), (const ElfW(Sym) *)symtab,
			     (const char *)strtab, base, relro);
	return 0;
}

static int count_adds(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(unsigned long long *)data = info->dlpi_adds;
	return 1;
}

void peer_watch(struct peer_hooks *h)
{
#if defined(R_SLOT)
	hooks = h;
	if (!self_base) {
		Dl_info me;
		if (dladdr((void *)peer_watch, &me))
			self_base = (uintptr_t)me.dli_fbase;
	}
	unsigned long long adds = 0;
	dl_iterate_phdr(count_adds, &adds);
	if (adds == h->seen_adds)
		return;
	h->seen_adds = adds;
	dl_iterate_phdr(visit, NULL);
#else
	(void)h;
#endif
}
