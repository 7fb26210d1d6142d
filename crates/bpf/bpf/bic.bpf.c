/* BIC (Xu, Harfoush & Rhee, "Binary Increase Congestion Control for Fast, Long Distance
 * Networks", INFOCOM 2004): after a loss at W_max the window searches back towards W_max by
 * bisection, in steps of at most S_max and at least S_min a round trip, then probes beyond it,
 * slowly and then faster. Below `low_window` it is Reno.
 *
 * The constants mean what the simulator's crates/sim/src/cc/bic.rs makes of them: each round
 * closes 1/B of the distance to W_max in whole packets, S_min = B/`smooth_part`, and the
 * probing above W_max mirrors the search. Increases are per round trip, spent per packet
 * acknowledged (RFC 3465 §2.1), so delayed ACKs change nothing. */
#include "loss_stack.h"

PARAMS(__u64 beta_fx; __u64 max_increment_fx; __u64 low_window_fx; __u64 smooth_part_fx;
       __u64 fast_convergence; __u64 initial_ssthresh;);

/* The search divisor: the simulator closes a quarter of the distance to W_max a round. */
#define BIC_B 4

struct bic_state {
	struct loss_window window;
	__u64 owed_fx; /* increase credit not yet a whole packet */
	__u64 w_max_fx; /* where the last loss happened, after fast convergence; 0 before any */
};

static __always_inline struct bic_state *bic(const struct sock *sk)
{
	return CA_STATE(struct bic_state, sk);
}

static __always_inline struct loss_window *bic_window(const struct sock *sk)
{
	return &bic(sk)->window;
}

/* S_min, the increase a round next to W_max (INFOCOM 2004, binary search increase). */
static __always_inline __u64 bic_min_increment(void)
{
	return (BIC_B * FRACTION_ONE * FRACTION_ONE) / params.smooth_part_fx;
}

/* Binary search increase (INFOCOM 2004): each round a step towards W_max, no more than S_max
 * (additive increase while far away) and no less than S_min (a plateau near W_max). The paper
 * jumps to the midpoint; the simulator's step is 1/B of the distance, in whole packets, so
 * within 2B of W_max the step is already S_min. */
static __always_inline __u64 bic_binary_search(__u64 below_fx)
{
	__u64 step = (below_fx / BIC_B) >> FRACTION_SHIFT;

	if ((step << FRACTION_SHIFT) > params.max_increment_fx)
		return params.max_increment_fx;
	if (step <= 1)
		return bic_min_increment();
	return step << FRACTION_SHIFT;
}

/* Max probing (INFOCOM 2004, slow start): past W_max the growth mirrors the search, S_min
 * while within B of it, then a growing share of the excess, then S_max. */
static __always_inline __u64 bic_max_probing(__u64 above_fx)
{
	if (above_fx < BIC_B * FRACTION_ONE)
		return bic_min_increment();
	if (above_fx < params.max_increment_fx * (BIC_B - 1))
		return above_fx / (BIC_B - 1);
	return params.max_increment_fx;
}

/* Packets to add over the next round trip in congestion avoidance, never more than one per
 * packet acknowledged (the pace of slow start). */
static __always_inline __u64 bic_increase(const struct tcp_sock *tp, const struct bic_state *ca)
{
	__u64 cwnd_fx = (__u64)tp->snd_cwnd << FRACTION_SHIFT;
	__u64 per_round;

	/* Up to low_window BIC is Reno, +1 a round (INFOCOM 2004, low_window). */
	if (cwnd_fx <= params.low_window_fx)
		return FRACTION_ONE;
	if (cwnd_fx < ca->w_max_fx)
		per_round = bic_binary_search(ca->w_max_fx - cwnd_fx);
	else
		per_round = bic_max_probing(cwnd_fx - ca->w_max_fx);
	return min(per_round, cwnd_fx);
}

SEC("struct_ops")
void BPF_PROG(bic_init, struct sock *sk)
{
	struct bic_state *ca = bic(sk);

	ca->owed_fx = 0;
	ca->w_max_fx = 0;
	if (params.initial_ssthresh != PARAM_ABSENT)
		tcp_sk(sk)->snd_ssthresh = params.initial_ssthresh;
	loss_window_init(&ca->window, sk);
}

static __always_inline void bic_grow(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bic_state *ca = bic(sk);

	acked = growth_credit(sk, acked, acked);
	if (!acked)
		return;
	grow_by(tp, &ca->owed_fx, acked * bic_increase(tp, ca));
}

/* A loss: W_max is where it happened, lowered by fast convergence when the flow is losing
 * ground, so that it releases bandwidth to a newcomer (INFOCOM 2004, fast convergence); the
 * window keeps β of itself, or half up to low_window, as Reno (INFOCOM 2004, low_window). */
static __always_inline __u32 bic_reduced(struct sock *sk, __u32 cwnd)
{
	__u64 cwnd_fx = (__u64)cwnd << FRACTION_SHIFT;
	struct bic_state *ca = bic(sk);

	if (params.fast_convergence && cwnd_fx < ca->w_max_fx)
		ca->w_max_fx = ((__u64)cwnd * (FRACTION_ONE + params.beta_fx)) >> 1;
	else
		ca->w_max_fx = cwnd_fx;
	return reduced(cwnd, cwnd_fx <= params.low_window_fx ? FRACTION_ONE / 2 : params.beta_fx);
}

/* After a timeout the window starts again from one packet, far below any W_max worth
 * searching for: the simulator forgets it and probes from scratch. */
SEC("struct_ops")
void BPF_PROG(bic_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Loss)
		bic(sk)->w_max_fx = 0;
}

LOSS_STACK(bic)

SEC(".struct_ops.link")
struct tcp_congestion_ops bic_ops = {
	.init = (void *)bic_init,
	.cong_control = (void *)bic_cong_control,
	.ssthresh = (void *)bic_ssthresh,
	.set_state = (void *)bic_set_state,
	.undo_cwnd = (void *)bic_undo_cwnd,
	.name = PLACEHOLDER_NAME,
};
