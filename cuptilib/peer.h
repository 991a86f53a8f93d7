/* SPDX-License-Identifier: Apache-2.0 */
/* The user's own profiler wins (peer.c): the hooks the library gives the GOT wrappers. */
#ifndef GD_PEER_H
#define GD_PEER_H

struct peer_hooks {
	/* Another module starts a CUPTI session (called before CUPTI sees the call). */
	void (*arrived)(const char *call);
	/* It ended one (called after CUPTI returned). */
	void (*left)(const char *call);
	unsigned long long seen_adds; /* dl_iterate_phdr's adds at the last walk */
	unsigned long patched;        /* GOT slots pointed at a wrapper */
};

/* peer_watch walks the loaded modules again if the set changed since the last walk. */
void peer_watch(struct peer_hooks *h);

#endif
