static __always_inline void job_send(struct fence_key *k, struct job_record *j)
{
	__u16 bucket = j->bucket;
	void *fr = ring_reserve(192);
	if (fr) bpf_ringbuf_discard(fr, BPF_RB_NO_WAKEUP);
	if (bpf_map_delete_elem(&jobs, k) == 0) { pending_add(bucket, -1); count(JC_EMITTED); }
	if (bucket < 5000) return;
	struct job_record *r = ring_reserve(sizeof(*r));
	if (!r) {
		if (bpf_map_delete_elem(&jobs, k) == 0) {
			pending_add(bucket, -1);
			count(JC_RING_FULL); /* the job is lost: counted here and in `lost` */
		}
		return;
	}
	__builtin_memcpy(r, j, sizeof(*r));
	if (bpf_map_delete_elem(&jobs, k) != 0) {
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
		count(JC_RACE);
		return;
	}
	/* committed before the job stops counting as pending: the reader relies on it */
	ring_submit(r);
	pending_add(bucket, -1);
	count(JC_EMITTED);
}
