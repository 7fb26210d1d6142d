/* AIMD(a, b): Reno with its two constants free, +a packets per RTT in congestion avoidance and
 * cwnd·(1 − b) on a congestion event (Floyd, Handley & Padhye 2000; GridDT, Ravot et al.,
 * PFLDnet 2003); slow start and ACK counting as RFC 5681 §3.1 and RFC 3465. */
#include "loss_stack.h"

PARAMS(__u64 a_fx; __u64 b_fx; __u64 abc; __u64 abc_limit;);

struct aimd_state {
	struct loss_window window;
	__u64 owed_fx; /* additive-increase credit not yet a whole packet */
};

static __always_inline struct aimd_state *aimd(const struct sock *sk)
{
	return CA_STATE(struct aimd_state, sk);
}

static __always_inline struct loss_window *aimd_window(const struct sock *sk)
{
	return &aimd(sk)->window;
}

SEC("struct_ops")
void BPF_PROG(aimd_init, struct sock *sk)
{
	loss_window_init(aimd_window(sk), sk);
	aimd(sk)->owed_fx = 0;
}

static __always_inline void aimd_grow(struct sock *sk, __u32 acked)
{
	/* RFC 3465 counts packets acknowledged; without it an ACK counts once. */
	__u32 credit = params.abc ? acked : 1;

	credit = growth_credit(sk, credit, params.abc ? params.abc_limit : credit);
	if (!credit)
		return;
	grow_by(tcp_sk(sk), &aimd(sk)->owed_fx, credit * params.a_fx);
}

static __always_inline __u32 aimd_reduced(struct sock *sk, __u32 cwnd)
{
	return reduced(cwnd, FRACTION_ONE - params.b_fx);
}

LOSS_STACK(aimd)

SEC(".struct_ops.link")
struct tcp_congestion_ops aimd_ops = {
	.init = (void *)aimd_init,
	.cong_control = (void *)aimd_cong_control,
	.ssthresh = (void *)aimd_ssthresh,
	.undo_cwnd = (void *)aimd_undo_cwnd,
	.name = PLACEHOLDER_NAME,
};
