/* AIMD(a, b): Reno with its two constants free, +a packets per RTT in congestion avoidance and
 * cwnd·(1 − b) on a congestion event (Floyd, Handley & Padhye 2000; GridDT, Ravot et al.,
 * PFLDnet 2003); slow start and ACK counting as RFC 5681 §3.1 and RFC 3465. */
#include "common.h"

PARAMS(__u64 a_fx; __u64 b_fx; __u64 abc; __u64 abc_limit;);

struct aimd_state {
	__u64 owed_fx; /* additive-increase credit not yet a whole packet */
};

SEC("struct_ops")
void BPF_PROG(aimd_init, struct sock *sk)
{
	CA_STATE(struct aimd_state, sk)->owed_fx = 0;
}

SEC("struct_ops")
void BPF_PROG(aimd_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct aimd_state *state = CA_STATE(struct aimd_state, sk);
	/* RFC 3465 counts packets acknowledged; without it an ACK counts once. */
	__u32 credit = params.abc ? acked : 1;

	if (!acked)
		return;
	credit = growth_credit(sk, credit, params.abc ? params.abc_limit : credit);
	if (!credit)
		return;
	grow_by(tp, &state->owed_fx, credit * params.a_fx);
}

SEC("struct_ops")
__u32 BPF_PROG(aimd_ssthresh, struct sock *sk)
{
	return reduced(tcp_sk(sk)->snd_cwnd, FRACTION_ONE - params.b_fx);
}

SEC("struct_ops")
__u32 BPF_PROG(aimd_undo_cwnd, struct sock *sk)
{
	return window_before_reduction(sk);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops aimd_ops = {
	.init = (void *)aimd_init,
	.cong_avoid = (void *)aimd_cong_avoid,
	.ssthresh = (void *)aimd_ssthresh,
	.undo_cwnd = (void *)aimd_undo_cwnd,
	.name = PLACEHOLDER_NAME,
};
