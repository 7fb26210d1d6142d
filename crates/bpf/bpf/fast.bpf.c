/* FAST TCP (Jin, Wei & Low, "FAST TCP: Motivation, Architecture, Algorithms, Performance",
 * INFOCOM 2004), each rule read as the simulator reads it (crates/sim/src/cc/fast.rs).
 *
 * Its window control (§3) moves the window, once per update period and not per ACK, a
 * fraction γ of the way to the window that keeps α packets queued:
 *
 *	w ← min{2w, (1 − γ)·w + γ·(baseRTT/avgRTT · w + α)}
 *
 * so at the fixed point w·(1 − baseRTT/avgRTT) = α: each flow keeps α packets queued. From an
 * empty queue the rule adds γα per update, at most doubling: that is FAST's slow start.
 * The window is kept in fixed point between updates, as the simulator keeps a real number,
 * and the kernel is given its whole part. */
#include "loss_stack.h"
#include "round.h"

PARAMS(__u64 alpha_fx; __u64 gamma_fx; __u64 update_period_rounds;);

#define FAST_NO_RTT ((__u32)~0U)
/* The kernel sends nothing with a window of zero; the simulator's sender floors at 1 too. */
#define FAST_MIN_CWND 1U

struct fast_state {
	struct loss_window window;
	__u64 cwnd_fx;        /* the window FAST last set, with its fraction */
	__u64 round_sum_us;   /* RTT samples of the round in progress */
	__u32 round_samples;
	__u32 round_end_seq;  /* round.h */
	__u32 base_rtt_us;    /* baseRTT: the least RTT seen, the propagation delay */
	__u32 avg_rtt_us;     /* mean RTT of the last round that had samples, 0 before one */
	__u32 rounds;         /* rounds since the last update */
	bool update_due;      /* this ACK ends an update period: fast_grow updates */
};

static __always_inline struct loss_window *fast_window(const struct sock *sk)
{
	return &CA_STATE(struct fast_state, sk)->window;
}

SEC("struct_ops")
void BPF_PROG(fast_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct fast_state *state = CA_STATE(struct fast_state, sk);

	loss_window_init(&state->window, sk);
	state->cwnd_fx = (__u64)tp->snd_cwnd << FRACTION_SHIFT;
	state->round_sum_us = 0;
	state->round_samples = 0;
	state->base_rtt_us = FAST_NO_RTT;
	state->avg_rtt_us = 0;
	state->rounds = 0;
	state->update_due = false;
	round_start(tp, &state->round_end_seq);
}

/* avgRTT is the mean RTT of the round just ended: with the default period of two rounds, the
 * frozen one, whose RTTs show the queue the last update made (the prototype's "update in one
 * RTT, freeze in the next"). The paper's estimation component (§3) averages RTTs over ACKs
 * instead; the simulator's mean of a round is kept here. */
static __always_inline void fast_round_ended(struct fast_state *state)
{
	if (state->round_samples)
		state->avg_rtt_us = state->round_sum_us / state->round_samples;
	state->round_sum_us = 0;
	state->round_samples = 0;
	if (++state->rounds < params.update_period_rounds)
		return;
	state->rounds = 0;
	state->update_due = state->avg_rtt_us != 0;
}

/* Every ACK: its RTT sample and whether it ends a round. The update itself waits for
 * fast_grow on the same ACK, which loss_stack.h skips in Recovery and CWR, where the loss
 * response owns the window: an update due then is dropped, as in the simulator. */
SEC("struct_ops")
void BPF_PROG(fast_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct fast_state *state = CA_STATE(struct fast_state, sk);
	__u32 rtt_us;

	state->update_due = false;
	if (rtt_sample(sample, &rtt_us)) {
		state->base_rtt_us = min(state->base_rtt_us, rtt_us);
		state->round_sum_us += rtt_us;
		state->round_samples++;
	}
	if (round_ended(tcp_sk(sk), &state->round_end_seq))
		fast_round_ended(state);
}

/* The update rule of the header comment, in fixed point. With a window below 2^32 packets
 * and RTTs below 2^32 µs no product here passes 2^64. */
static __always_inline __u64 fast_next_window(const struct fast_state *state)
{
	__u64 w = state->cwnd_fx;
	__u64 target = w * state->base_rtt_us / state->avg_rtt_us + params.alpha_fx;
	__u64 moved = ((FRACTION_ONE - params.gamma_fx) * w + params.gamma_fx * target) >>
		      FRACTION_SHIFT;

	return min(2 * w, moved);
}

static __always_inline void fast_grow(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct fast_state *state = CA_STATE(struct fast_state, sk);
	__u64 next;

	if (!state->update_due)
		return;
	state->update_due = false;
	/* A loss, a timeout or an undo set the window since: FAST goes on from that one. */
	if (state->cwnd_fx >> FRACTION_SHIFT != tp->snd_cwnd)
		state->cwnd_fx = (__u64)tp->snd_cwnd << FRACTION_SHIFT;
	next = fast_next_window(state);
	/* The window grows only while it is what limits the sender (RFC 7661 §4.1). */
	if (next >= state->cwnd_fx && !cwnd_limited(sk))
		return;
	state->cwnd_fx = next;
	tp->snd_cwnd = min(max(next >> FRACTION_SHIFT, FAST_MIN_CWND), tp->snd_cwnd_clamp);
}

/* A loss halves the window (the simulator's FAST, as Reno, RFC 5681 §3.1). */
static __always_inline __u32 fast_reduced(struct sock *sk, __u32 cwnd)
{
	return reduced(cwnd, FRACTION_ONE / 2);
}

LOSS_STACK(fast)

SEC(".struct_ops.link")
struct tcp_congestion_ops fast_ops = {
	.init = (void *)fast_init,
	.pkts_acked = (void *)fast_pkts_acked,
	.cong_control = (void *)fast_cong_control,
	.ssthresh = (void *)fast_ssthresh,
	.undo_cwnd = (void *)fast_undo_cwnd,
	.name = PLACEHOLDER_NAME,
};
