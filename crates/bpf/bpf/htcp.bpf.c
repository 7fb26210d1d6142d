/* H-TCP (Leith & Shorten, "H-TCP: TCP for high-speed and long-distance networks", PFLDnet
 * 2004; draft-leith-tcp-htcp-06): Reno whose increase α grows with Δ, the time since the last
 * congestion event, and whose backoff β follows the queueing delay the flow has seen.
 *
 * Every rule means what the simulator's crates/sim/src/cc/htcp.rs makes of it, so one scenario
 * runs the same algorithm in both worlds; where the simulator adds a rule of its own (how RTTs
 * and throughput are measured, when adaptive β is first used), the comment says so. */
#include "loss_stack.h"

PARAMS(__u64 beta_adaptive; __u64 rtt_scaling; __u64 bandwidth_switch; __u64 alpha_quadratic_fx;);

#define USEC_PER_MSEC 1000U
#define USEC_PER_SEC 1000000ULL

/* Δ_L: for 1 s after a congestion event H-TCP is Reno, α = 1 (PFLDnet 2004, the mode switch;
 * draft-leith-tcp-htcp-06, the increase function). */
#define HTCP_LOW_SPEED_US USEC_PER_SEC
/* α(Δ) = 1 + 10(Δ − Δ_L) + c(Δ − Δ_L)² after Δ_L (PFLDnet 2004; the draft's increase
 * function). */
#define HTCP_ALPHA_LINEAR 10
/* Δ counts up to Δ_L + 1024 s: by then α(Δ) exceeds what any window could take in one RTT
 * (a TCP window holds at most 2^30 bytes, RFC 7323 §2.3), and the bound keeps the arithmetic
 * in 64 bits. So does the cap of α at 2^20 packets per RTT. */
#define HTCP_DELTA_MAX_US (1024 * USEC_PER_SEC)
#define HTCP_ALPHA_MAX_FX ((__u64)1 << (20 + FRACTION_SHIFT))
/* RTT scaling: α × minRTT/RTT_ref with RTT_ref = 100 ms, the ratio clamped to [0.1, 2]
 * (the draft's RTT scaling). */
#define HTCP_RTT_REF_US (100 * USEC_PER_MSEC)
#define HTCP_RTT_SCALE_MIN_FX (FRACTION_ONE / 10)
#define HTCP_RTT_SCALE_MAX_FX (2 * FRACTION_ONE)
/* Adaptive backoff β = RTTmin/RTTmax kept within [0.5, 0.8] (PFLDnet 2004, adaptive
 * backoff); 0.8 rounded to the nearest, so that 0.8 of 85 packets is 68, not 67. */
#define HTCP_BETA_MIN_FX (FRACTION_ONE / 2)
#define HTCP_BETA_MAX_FX ((FRACTION_ONE * 4 + 2) / 5)
/* The simulator's measurement of RTTmax: a sample more than 20 ms above it is a spike, not
 * queueing; β comes from RTTs only once RTTmin exceeds 10 ms, below which queueing cannot be
 * told from timer granularity; at each event RTTmax keeps 95 % of its excess over RTTmin, so
 * it forgets an old path slowly. */
#define HTCP_RTT_SPIKE_US (20 * USEC_PER_MSEC)
#define HTCP_MIN_RTT_FOR_BETA_US (10 * USEC_PER_MSEC)
#define HTCP_MAX_RTT_KEPT_PERCENT 95
#define HTCP_RTT_UNKNOWN 0xffffffffU
/* The bandwidth switch: β = 0.5 when the throughput moved by more than 20 % between
 * congestion events (PFLDnet 2004, adaptive backoff), i.e. left [4/5, 6/5] of its value. */
#define HTCP_THROUGHPUT_LOW_FIFTHS 4
#define HTCP_THROUGHPUT_HIGH_FIFTHS 6
/* The simulator's throughput estimate restarts from a sample taken within 4 RTTmin of a
 * backoff, which reflects the new window rather than the old. */
#define HTCP_THROUGHPUT_RESET_RTTS 4
/* Throughput in packets per second, fixed point with this many bits. */
#define HTCP_RATE_SHIFT 8

struct htcp_state {
	struct loss_window window;
	__u64 owed_fx; /* additive-increase credit not yet a whole packet */
	__u64 last_congestion_us; /* where Δ starts */
	__u64 rate_since_us; /* start of the current throughput sample */
	__u64 rate_smoothed; /* B, smoothed as (3B + sample)/4 */
	__u64 rate_max; /* the largest B since the last backoff */
	__u64 rate_max_at_event; /* rate_max at the previous congestion event */
	__u32 rate_packets; /* packets acknowledged in the current sample */
	__u32 min_rtt_us;
	__u32 max_rtt_us;
	__u32 beta_fx;
	/* The simulator uses adaptive β only after one congestion event at 0.5 since the start
	 * or the last bandwidth switch, so that RTTmax was measured with the queue filled. */
	bool modeswitch;
};

static __always_inline struct htcp_state *htcp(const struct sock *sk)
{
	return CA_STATE(struct htcp_state, sk);
}

static __always_inline __u64 htcp_since_congestion_us(const struct htcp_state *ca, __u64 now_us)
{
	return now_us > ca->last_congestion_us ? now_us - ca->last_congestion_us : 0;
}

/* α(Δ) in packets per RTT before the backoff correction: 1 in low-speed mode, the quadratic
 * after (PFLDnet 2004; the draft's increase function), scaled by RTT if asked (the draft's RTT
 * scaling). The simulator scales the low-speed 1 as well, but never below 1, Reno's increase. */
static __always_inline __u64 htcp_speed_factor(const struct htcp_state *ca, __u64 now_us)
{
	__u64 since_us = htcp_since_congestion_us(ca, now_us);
	__u64 d_us = since_us > HTCP_LOW_SPEED_US ? since_us - HTCP_LOW_SPEED_US : 0;
	__u64 d_fx = (min(d_us, HTCP_DELTA_MAX_US) << FRACTION_SHIFT) / USEC_PER_SEC;
	/* c·d·d, split so that no product passes 64 bits: (c·d ≫ 10) × (d ≫ 10). */
	__u64 c_d = (params.alpha_quadratic_fx * d_fx) >> FRACTION_SHIFT;
	__u64 quadratic = (c_d >> 10) * (d_fx >> 10);
	__u64 factor = FRACTION_ONE + HTCP_ALPHA_LINEAR * d_fx + quadratic;
	__u64 scale;

	factor = min(factor, HTCP_ALPHA_MAX_FX);
	if (!params.rtt_scaling || ca->min_rtt_us == HTCP_RTT_UNKNOWN)
		return factor;
	scale = ((__u64)ca->min_rtt_us << FRACTION_SHIFT) / HTCP_RTT_REF_US;
	scale = min(max(scale, HTCP_RTT_SCALE_MIN_FX), HTCP_RTT_SCALE_MAX_FX);
	return max((factor * scale) >> FRACTION_SHIFT, FRACTION_ONE);
}

/* α = 2(1 − β)α(Δ): the increase shrinks with the backoff so that the pair (α, β) is as
 * friendly to Reno as (1, 0.5) (PFLDnet 2004, adaptive backoff). */
static __always_inline __u64 htcp_alpha(const struct htcp_state *ca, __u64 now_us)
{
	__u64 backoff_fx = FRACTION_ONE - ca->beta_fx;

	return (htcp_speed_factor(ca, now_us) * backoff_fx) >> (FRACTION_SHIFT - 1);
}

/* RTTmin is the smallest sample; RTTmax the queue-full RTT, moved only by samples in Open
 * state (no recovery or reordering in them) and within the spike filter of it. */
static __always_inline void htcp_rtt_sample(struct htcp_state *ca, __u32 rtt_us, bool open)
{
	ca->min_rtt_us = min(ca->min_rtt_us, rtt_us);
	if (!open)
		return;
	ca->max_rtt_us = max(ca->max_rtt_us, ca->min_rtt_us);
	if (rtt_us > ca->max_rtt_us && rtt_us <= ca->max_rtt_us + HTCP_RTT_SPIKE_US)
		ca->max_rtt_us = rtt_us;
}

/* One throughput sample a window: the packets acknowledged over at least RTTmin, once a
 * window less α of them came back. Counting stops during a reduction. */
static __always_inline void htcp_measure_throughput(struct sock *sk, struct htcp_state *ca,
						    __u32 acked, __u64 now_us)
{
	__u8 state = ca_state(sk);
	__u64 window_fx = (__u64)tcp_sk(sk)->snd_cwnd << FRACTION_SHIFT;
	__u64 needed_fx = window_fx - min(window_fx, max(htcp_alpha(ca, now_us), FRACTION_ONE));
	__u64 elapsed_us, sample;

	if (state != TCP_CA_Open && state != TCP_CA_Disorder) {
		ca->rate_packets = 0;
		ca->rate_since_us = now_us;
		return;
	}
	if (!ca->rate_since_us)
		ca->rate_since_us = now_us;
	ca->rate_packets += acked;
	elapsed_us = now_us - ca->rate_since_us;
	if (((__u64)ca->rate_packets << FRACTION_SHIFT) < needed_fx ||
	    elapsed_us < ca->min_rtt_us || !elapsed_us)
		return;
	sample = ((__u64)ca->rate_packets << HTCP_RATE_SHIFT) * USEC_PER_SEC / elapsed_us;
	if (htcp_since_congestion_us(ca, now_us) <
	    (__u64)HTCP_THROUGHPUT_RESET_RTTS * ca->min_rtt_us) {
		ca->rate_smoothed = sample;
		ca->rate_max = sample;
	} else {
		ca->rate_smoothed = (3 * ca->rate_smoothed + sample) / 4;
		ca->rate_max = max(ca->rate_max, ca->rate_smoothed);
	}
	ca->rate_packets = 0;
	ca->rate_since_us = now_us;
}

/* Whether the throughput left [0.8, 1.2] of its value at the previous congestion event, which
 * this one then becomes. Before any sample both are 0: nothing changed. */
static __always_inline bool htcp_throughput_changed(struct htcp_state *ca)
{
	__u64 now = ca->rate_max, before = ca->rate_max_at_event;

	ca->rate_max_at_event = now;
	return 5 * now < HTCP_THROUGHPUT_LOW_FIFTHS * before ||
	       5 * now > HTCP_THROUGHPUT_HIGH_FIFTHS * before;
}

/* β for the congestion event happening now (PFLDnet 2004, adaptive backoff). */
static __always_inline __u32 htcp_next_beta(struct htcp_state *ca)
{
	bool from_rtts;

	if (params.bandwidth_switch && htcp_throughput_changed(ca)) {
		ca->modeswitch = false;
		return HTCP_BETA_MIN_FX;
	}
	from_rtts = params.beta_adaptive && ca->min_rtt_us != HTCP_RTT_UNKNOWN &&
		    ca->min_rtt_us > HTCP_MIN_RTT_FOR_BETA_US && ca->max_rtt_us;
	if (!ca->modeswitch || !from_rtts) {
		ca->modeswitch = true;
		return HTCP_BETA_MIN_FX;
	}
	return min(max(((__u64)ca->min_rtt_us << FRACTION_SHIFT) / ca->max_rtt_us,
		       HTCP_BETA_MIN_FX),
		   HTCP_BETA_MAX_FX);
}

static __always_inline void htcp_fade_max_rtt(struct htcp_state *ca)
{
	__u32 excess;

	if (ca->min_rtt_us == HTCP_RTT_UNKNOWN || ca->max_rtt_us <= ca->min_rtt_us)
		return;
	excess = ca->max_rtt_us - ca->min_rtt_us;
	ca->max_rtt_us = ca->min_rtt_us + (excess * HTCP_MAX_RTT_KEPT_PERCENT + 50) / 100;
}

SEC("struct_ops")
void BPF_PROG(htcp_init, struct sock *sk)
{
	struct htcp_state *ca = htcp(sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	loss_window_init(&ca->window, sk);
	ca->last_congestion_us = tcp_sk(sk)->tcp_mstamp;
	ca->min_rtt_us = HTCP_RTT_UNKNOWN;
	ca->beta_fx = HTCP_BETA_MIN_FX;
}

SEC("struct_ops")
void BPF_PROG(htcp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct htcp_state *ca = htcp(sk);
	__u64 now_us = tcp_sk(sk)->tcp_mstamp;

	if (sample->rtt_us > 0)
		htcp_rtt_sample(ca, sample->rtt_us, ca_state(sk) == TCP_CA_Open);
	if (params.bandwidth_switch)
		htcp_measure_throughput(sk, ca, sample->pkts_acked, now_us);
}

/* Slow start as RFC 5681 §3.1; then cwnd += α/cwnd per packet acknowledged, α packets a
 * window (PFLDnet 2004; the draft's increase function). */
static __always_inline void htcp_grow(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct htcp_state *ca = htcp(sk);

	acked = growth_credit(sk, acked, acked);
	if (!acked)
		return;
	grow_by(tp, &ca->owed_fx, acked * htcp_alpha(ca, tp->tcp_mstamp));
}

/* A congestion event: cwnd × β, and Δ restarts (PFLDnet 2004). */
static __always_inline __u32 htcp_reduced(struct sock *sk, __u32 cwnd)
{
	struct htcp_state *ca = htcp(sk);

	ca->beta_fx = htcp_next_beta(ca);
	htcp_fade_max_rtt(ca);
	ca->last_congestion_us = tcp_sk(sk)->tcp_mstamp;
	return reduced(cwnd, ca->beta_fx);
}

static __always_inline struct loss_window *htcp_window(const struct sock *sk)
{
	return &htcp(sk)->window;
}

LOSS_STACK(htcp)

/* The simulator counts Δ from the end of a window reduction as well: the congestion event
 * lasts until its recovery is over. The kernel calls this before it changes the state. */
SEC("struct_ops")
void BPF_PROG(htcp_set_state, struct sock *sk, __u8 new_state)
{
	if (ca_state(sk) >= TCP_CA_CWR && new_state <= TCP_CA_Disorder)
		htcp(sk)->last_congestion_us = tcp_sk(sk)->tcp_mstamp;
}

SEC(".struct_ops.link")
struct tcp_congestion_ops htcp_ops = {
	.init = (void *)htcp_init,
	.pkts_acked = (void *)htcp_pkts_acked,
	.cong_control = (void *)htcp_cong_control,
	.ssthresh = (void *)htcp_ssthresh,
	.set_state = (void *)htcp_set_state,
	.undo_cwnd = (void *)htcp_undo_cwnd,
	.name = PLACEHOLDER_NAME,
};
