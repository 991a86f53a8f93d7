static __always_inline void job_send(struct fence_key *k, struct job_record *j)
{
	__u16 bucket = j->bucket;
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
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	pending_add(bucket, -1);
	count(JC_EMITTED);
}
