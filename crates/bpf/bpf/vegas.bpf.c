/* TCP Vegas (Brakmo & Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
 * Internet", IEEE JSAC 13(8), 1995), each rule read as the simulator reads it
 * (crates/sim/src/cc/vegas.rs), so that one scenario means one thing in both.
 *
 * Once per round trip (§III-B) Vegas compares the rate it expects, cwnd/BaseRTT with BaseRTT
 * the least RTT seen, with the rate it gets, and so estimates the packets it keeps queued:
 * fewer than α, the window grows a packet in the next round; more than β, it shrinks one;
 * in between it holds. In slow start (§III-C) the same estimate above γ ends slow start.
 * Where the simulator's reading departs from the paper's text, the comment says so. */
#include "loss_stack.h"
#include "round.h"

PARAMS(__u64 alpha_fx; __u64 beta_fx; __u64 gamma_fx;);

/* Vegas's own decrease never takes the window below two packets (the simulator's floor). */
#define VEGAS_MIN_CWND 2U
/* A round with fewer RTT samples than this is a round of delayed ACKs, too few to judge
 * the queue by: Reno decides instead (the simulator's MIN_ROUND_SAMPLES). */
#define VEGAS_MIN_ROUND_SAMPLES 3U
#define VEGAS_NO_RTT ((__u32)~0U)

struct vegas_state {
	struct loss_window window;
	__u64 owed_fx;        /* Reno's additive-increase credit not yet a whole packet */
	__u32 base_rtt_us;    /* BaseRTT: the least RTT seen (§III-B) */
	__u32 round_min_us;   /* least RTT of the round in progress */
	__u32 round_samples;  /* RTT samples in the round in progress */
	__u32 round_end_seq;  /* round.h */
	__u32 ended_min_us;   /* the round this ACK ended, for vegas_grow on the same ACK */
	__u32 ended_samples;
	bool ended;           /* this ACK ended a round */
};

static __always_inline struct loss_window *vegas_window(const struct sock *sk)
{
	return &CA_STATE(struct vegas_state, sk)->window;
}

static __always_inline bool vegas_open(const struct sock *sk)
{
	return ca_state(sk) == TCP_CA_Open;
}

static __always_inline void vegas_new_round(struct vegas_state *state)
{
	state->round_min_us = VEGAS_NO_RTT;
	state->round_samples = 0;
}

/* BaseRTT is measured again from scratch: also after an idle period, when the path may
 * have changed. */
static __always_inline void vegas_reset(struct vegas_state *state)
{
	state->base_rtt_us = VEGAS_NO_RTT;
	vegas_new_round(state);
}

SEC("struct_ops")
void BPF_PROG(vegas_init, struct sock *sk)
{
	struct vegas_state *state = CA_STATE(struct vegas_state, sk);

	loss_window_init(&state->window, sk);
	state->owed_fx = 0;
	state->ended = false;
	vegas_reset(state);
	round_start(tcp_sk(sk), &state->round_end_seq);
}

/* Reno's growth (RFC 5681 §3.1): what Vegas falls back on when it cannot judge a round.
 * Slow start only below ssthresh: above it every packet acknowledged is a 1/cwnd. */
static __always_inline void vegas_reno_increase(struct tcp_sock *tp, struct vegas_state *state,
						__u32 acked)
{
	if (in_slow_start(tp))
		acked = slow_start(tp, acked, acked);
	if (acked)
		grow_by(tp, &state->owed_fx, (__u64)acked * FRACTION_ONE);
}

/* The once-per-round decision from `rtt_us`, the least RTT of the round just ended. The
 * paper's Diff is (Expected − Actual)·BaseRTT = cwnd·(RTT − BaseRTT)/RTT packets (§III-B);
 * the simulator divides by BaseRTT instead and keeps the whole part, so it holds the window
 * while 2 ≤ ⌊diff⌋ ≤ 4 by default. The least RTT of the round, not its mean, filters out
 * the delay the receiver's delayed ACKs add. */
static __always_inline void vegas_adjust(struct sock *sk, struct vegas_state *state, __u32 rtt_us,
					 __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 base = state->base_rtt_us;
	__u32 cwnd = tp->snd_cwnd;
	__u64 queued_fx = ((__u64)cwnd * (rtt_us - base) / base) << FRACTION_SHIFT;

	if (in_slow_start(tp) && queued_fx > params.gamma_fx) {
		/* §III-C: slow start ends once more than γ packets queue. The simulator also cuts
		 * the window to the rate achieved, cwnd·BaseRTT/RTT, plus the packet its
		 * truncation loses. */
		__u32 achieved = (__u64)cwnd * base / rtt_us + 1;

		tp->snd_cwnd = min(cwnd, achieved);
		tp->snd_ssthresh = min(tp->snd_ssthresh, tp->snd_cwnd);
	} else if (in_slow_start(tp)) {
		/* §III-C doubles the window every other round only; the simulator grows it on
		 * every ACK, as Reno does, so it doubles every round. */
		if (cwnd_limited(sk))
			vegas_reno_increase(tp, state, acked);
	} else if (queued_fx > params.beta_fx) {
		/* §III-B: too much queued, a packet less in the next round. */
		tp->snd_cwnd = cwnd - 1;
		tp->snd_ssthresh = min(tp->snd_ssthresh, tp->snd_cwnd);
	} else if (queued_fx < params.alpha_fx && cwnd_limited(sk)) {
		/* §III-B: too little queued, a packet more, if the window is what limits. */
		tp->snd_cwnd = min(cwnd + 1, tp->snd_cwnd_clamp);
	}
	tp->snd_cwnd = max(tp->snd_cwnd, VEGAS_MIN_CWND);
}

/* Every ACK: its RTT sample, and whether it ends a round. Vegas runs only in the Open state,
 * where every RTT is of a packet sent once; any other state starts the round afresh. */
SEC("struct_ops")
void BPF_PROG(vegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct vegas_state *state = CA_STATE(struct vegas_state, sk);
	__u32 rtt_us;

	if (rtt_sample(sample, &rtt_us)) {
		state->base_rtt_us = min(state->base_rtt_us, rtt_us);
		if (vegas_open(sk)) {
			state->round_min_us = min(state->round_min_us, rtt_us);
			state->round_samples++;
		}
	}
	if (!vegas_open(sk))
		vegas_new_round(state);
	state->ended = round_ended(tcp_sk(sk), &state->round_end_seq);
	if (state->ended) {
		state->ended_min_us = state->round_min_us;
		state->ended_samples = state->round_samples;
		vegas_new_round(state);
	}
}

static __always_inline void vegas_grow(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct vegas_state *state = CA_STATE(struct vegas_state, sk);
	bool ended = state->ended;

	state->ended = false;
	if (ended && vegas_open(sk) && state->ended_samples >= VEGAS_MIN_ROUND_SAMPLES) {
		vegas_adjust(sk, state, state->ended_min_us, acked);
		return;
	}
	if (!cwnd_limited(sk))
		return;
	if (ended || !vegas_open(sk))
		vegas_reno_increase(tp, state, acked);
	else if (in_slow_start(tp))
		slow_start(tp, acked, acked);
}

SEC("struct_ops")
void BPF_PROG(vegas_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_TX_START)
		vegas_reset(CA_STATE(struct vegas_state, sk));
}

/* A loss: §III-A changes how a loss is detected (the kernel's detection runs here) and
 * reduces the window once per loss episode, as the kernel's recovery does; by how much is
 * the simulator's choice, half, as Reno (RFC 5681 §3.1). */
static __always_inline __u32 vegas_reduced(struct sock *sk, __u32 cwnd)
{
	return reduced(cwnd, FRACTION_ONE / 2);
}

LOSS_STACK(vegas)

SEC(".struct_ops.link")
struct tcp_congestion_ops vegas_ops = {
	.init = (void *)vegas_init,
	.pkts_acked = (void *)vegas_pkts_acked,
	.cong_control = (void *)vegas_cong_control,
	.cwnd_event = (void *)vegas_cwnd_event,
	.ssthresh = (void *)vegas_ssthresh,
	.undo_cwnd = (void *)vegas_undo_cwnd,
	.name = PLACEHOLDER_NAME,
};
