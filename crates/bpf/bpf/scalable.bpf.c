/* Scalable TCP (Kelly, "Scalable TCP: improving performance in highspeed wide area networks",
 * CCR 33(2), 2003): multiplicative increase and decrease, so a flow recovers from a loss in
 * the same number of RTTs at every window. Below `low_window` it grows as Reno (RFC 5681
 * §3.1); slow start and ACK counting as RFC 5681 §3.1 and RFC 3465. The parameters and the
 * decrease at every window are the simulator's (crates/sim/src/cc/scalable.rs). */
#include "loss_stack.h"

PARAMS(__u64 a_fx; __u64 b_fx; __u64 low_window;);

struct scalable_state {
	struct loss_window window;
	__u64 owed_fx; /* increase credit not yet a whole packet */
};

static __always_inline struct scalable_state *scalable(const struct sock *sk)
{
	return CA_STATE(struct scalable_state, sk);
}

static __always_inline struct loss_window *scalable_window(const struct sock *sk)
{
	return &scalable(sk)->window;
}

SEC("struct_ops")
void BPF_PROG(scalable_init, struct sock *sk)
{
	loss_window_init(scalable_window(sk), sk);
	scalable(sk)->owed_fx = 0;
}

/* Credit for `acked` packets in grow_by's units (a window's worth adds one packet). */
static __always_inline __u64 scalable_credit(const struct tcp_sock *tp, __u32 acked)
{
	/* Below the low window: RFC 5681 §3.1's 1/cwnd per packet, one packet per window. */
	if (tp->snd_cwnd < params.low_window)
		return (__u64)acked * FRACTION_ONE;
	/* Kelly 2003 §2: cwnd += a per packet acknowledged, a·cwnd of credit each. */
	return (__u64)acked * params.a_fx * tp->snd_cwnd;
}

static __always_inline void scalable_grow(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	acked = growth_credit(sk, acked, acked);
	if (!acked)
		return;
	grow_by(tp, &scalable(sk)->owed_fx, scalable_credit(tp, acked));
}

/* Kelly 2003 §2: cwnd − ⌈b·cwnd⌉ on a congestion event, which is (1 − b)·cwnd truncated;
 * at every window, as the simulator's. */
static __always_inline __u32 scalable_reduced(struct sock *sk, __u32 cwnd)
{
	return reduced(cwnd, FRACTION_ONE - params.b_fx);
}

LOSS_STACK(scalable)

SEC(".struct_ops.link")
struct tcp_congestion_ops scalable_ops = {
	.init = (void *)scalable_init,
	.cong_control = (void *)scalable_cong_control,
	.ssthresh = (void *)scalable_ssthresh,
	.undo_cwnd = (void *)scalable_undo_cwnd,
	.name = PLACEHOLDER_NAME,
};
