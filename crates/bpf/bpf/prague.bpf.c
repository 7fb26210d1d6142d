/* TCP Prague (draft-briscoe-iccrg-prague-congestion-control-04; RFC 9331 §4.3, the Prague L4S
 * requirements): DCTCP's α and its cut of cwnd·(1 − α/2) at most once a round trip, additive
 * increase from unmarked packets only, reduced RTT-dependence, pacing, and a classic flow's
 * cut over a queue that looks classic.
 *
 * What this kernel allows: it has no AccECN and a BPF stack cannot send ECT(1), so Prague
 * sends ECT(0) and learns its marks from the receiver's per-packet echo (RFC 8257 §3.2), which
 * its receiving socket gives when it runs this stack too. The marks it counts are then the
 * same as accurate feedback's.
 *
 * It owns the window through cong_control, as it grows during CWR; the kernel starts the
 * reductions and the stack answers them on the same ACK (window.h). */
#include "common.h"
#include "ce_echo.h"
#include "marked_fraction.h"
#include "pacing.h"
#include "window.h"

PARAMS(__u64 g_fx; __u64 alpha_init_fx; __u64 abc_limit; __u64 rtt_scaling; __u64 rtt_ref_ns;
       __u64 rtt_transition_rounds; __u64 grow_in_cwr; __u64 pacing_ss_ratio_fx;
       __u64 pacing_ca_ratio_fx; __u64 classic_fallback; __u64 classic_qdelay_threshold_ns;
       __u64 classic_beta_fx;);

#define NSEC_PER_USEC 1000ULL

struct prague_state {
	struct marked_fraction fraction;
	struct window window;
	struct ce_echo echo;
	__u64 owed_fx;	       /* additive-increase credit not yet a whole packet */
	__u64 window_start_us; /* when the current α window began */
	__u64 last_cut_us;     /* when an echo last cut the window */
	__u32 ca_rounds;       /* α windows closed out of slow start */
	__u32 delivered;       /* tp->delivered at the last ACK */
	__u32 delivered_ce;    /* tp->delivered_ce at the last ACK */
	__u8 saw_ce;	       /* a mark has been seen: α learns from then on */
	__u8 has_cut;	       /* last_cut_us is set */
};

static __always_inline struct prague_state *prague(const struct sock *sk)
{
	return CA_STATE(struct prague_state, sk);
}

static __always_inline __u64 srtt_us(const struct tcp_sock *tp)
{
	return tp->srtt_us >> 3;
}

/* Draft §2.4.4: RTT-independence holds out of slow start, once the flow has spent
 * rtt_transition_rounds rounds there (short flows keep their speed). */
static __always_inline bool rtt_independent(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return params.rtt_scaling && !in_slow_start(tp) &&
	       prague(sk)->ca_rounds >= params.rtt_transition_rounds;
}

/* Draft §2.4.4: the RTT the flow behaves as if it had, max(srtt, rtt_ref). */
static __always_inline __u64 rtt_virt_us(const struct sock *sk)
{
	__u64 srtt = srtt_us(tcp_sk(sk));

	if (!rtt_independent(sk))
		return srtt;
	return max(srtt, params.rtt_ref_ns / NSEC_PER_USEC);
}

/* Draft §2.4.4: Reno's increase per packet times (srtt/rtt_virt)², so the rate grows by
 * 1/rtt_virt² packets/s per second whatever the real RTT. */
static __always_inline __u64 increase_fx(const struct sock *sk)
{
	__u64 srtt = srtt_us(tcp_sk(sk));
	__u64 virt = rtt_virt_us(sk);
	__u64 ratio_fx;

	if (!srtt || virt <= srtt)
		return FRACTION_ONE;
	ratio_fx = (srtt << FRACTION_SHIFT) / virt;
	return (ratio_fx * ratio_fx) >> FRACTION_SHIFT;
}

SEC("struct_ops")
void BPF_PROG(prague_init, struct sock *sk)
{
	struct prague_state *state = prague(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	marked_fraction_init(&state->fraction, tp, params.alpha_init_fx);
	window_init(&state->window, sk);
	ce_echo_init(&state->echo, tp);
	state->owed_fx = 0;
	state->window_start_us = tp->tcp_mstamp;
	state->last_cut_us = 0;
	state->ca_rounds = 0;
	state->delivered = tp->delivered;
	state->delivered_ce = tp->delivered_ce;
	state->saw_ce = 0;
	state->has_cut = 0;
	/* Draft "Packet Pacing": Prague paces; the kernel paces a socket that asks. */
	sk->sk_pacing_status = SK_PACING_NEEDED;
}

/* Draft §2.3.2: α as DCTCP's, learning nothing before the first mark (α stays at alpha_init
 * until the window holding it), and once RTT-independent (§2.4.4) folded at the first round's
 * end at least rtt_virt after the last. Runs on every ACK before the kernel reacts to it. */
SEC("struct_ops")
void BPF_PROG(prague_in_ack_event, struct sock *sk, __u32 flags)
{
	struct prague_state *state = prague(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 now = tp->tcp_mstamp;

	if (!round_ended(tp, &state->fraction.round_end))
		return;
	if (rtt_independent(sk) && now - state->window_start_us < rtt_virt_us(sk))
		return;
	state->saw_ce |= marked_fraction_marked(&state->fraction, tp) > 0;
	marked_fraction_close(&state->fraction, tp, params.g_fx, state->saw_ce);
	state->window_start_us = now;
	if (!in_slow_start(tp))
		state->ca_rounds++;
}

/* RFC 9331 §4.3: over a classic ECN AQM, respond as a classic flow would. The queue is taken
 * for a classic one when its delay, srtt − min_rtt, exceeds classic_qdelay_threshold (an L4S
 * queue keeps about 1 ms). */
static __always_inline bool classic_queue(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u64 srtt = srtt_us(tp);
	__u64 min_rtt = tp->rtt_min.s[0].v;

	if (!params.classic_fallback || !srtt || min_rtt == ~0U || srtt <= min_rtt)
		return false;
	return (srtt - min_rtt) * NSEC_PER_USEC > params.classic_qdelay_threshold_ns;
}

/* Draft §2.4.2 with §2.4.4: once RTT-independent, an echo within rtt_virt of the last cut is
 * not answered (before that the kernel's once-per-window CWR is the limit). */
static __always_inline bool cut_suppressed(const struct sock *sk)
{
	const struct prague_state *state = prague(sk);

	return rtt_independent(sk) && state->has_cut &&
	       tcp_sk(sk)->tcp_mstamp - state->last_cut_us < rtt_virt_us(sk);
}

/* Draft §2.4.2: an echo keeps 1 − α/2 of the window, over a classic queue no more than
 * classic_beta (RFC 9331 §4.3). */
static __always_inline __u32 echo_answer(const struct sock *sk, __u32 cwnd)
{
	__u64 keep = marked_fraction_keep(&prague(sk)->fraction);

	if (cut_suppressed(sk))
		return cwnd;
	if (classic_queue(sk))
		keep = min(keep, params.classic_beta_fx);
	return reduced(cwnd, keep);
}

SEC("struct_ops")
__u32 BPF_PROG(prague_ssthresh, struct sock *sk)
{
	return echo_answer(sk, tcp_sk(sk)->snd_cwnd);
}

/* The reduction the kernel started on this ACK: an echo as above, timed for the next one's
 * suppression; a loss or a timeout as Reno answers it, halving (RFC 9331 §4.3). */
static __always_inline void answer(struct sock *sk, struct prague_state *state)
{
	struct tcp_sock *tp = tcp_sk(sk);
	enum reduction asked = window_reduction(&state->window, sk);

	if (asked == REDUCTION_NONE)
		return;
	if (asked != REDUCTION_ECN) {
		window_reduce(sk, asked, halved(tp));
		return;
	}
	if (cut_suppressed(sk))
		return;
	window_reduce(sk, asked, echo_answer(sk, tp->prior_cwnd));
	state->last_cut_us = tp->tcp_mstamp;
	state->has_cut = 1;
}

/* Draft §2.4.3: only unmarked packets grow the window, so growth per round is (1 − p) of
 * Reno's at marking probability p; out of slow start scaled as §2.4.4 says; during CWR too
 * unless grow_in_cwr is off. */
static __always_inline void grow(struct sock *sk, struct prague_state *state, __u32 unmarked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 increase = in_slow_start(tp) ? FRACTION_ONE : increase_fx(sk);

	if (unmarked && window_may_grow(sk, params.grow_in_cwr))
		reno_grow(tp, &state->owed_fx, unmarked, params.abc_limit, increase);
}

/* Draft "Packet Pacing": ratio · max(cwnd, pipe) · MSS / srtt, pacing_ss_ratio while
 * doubling cannot overshoot and pacing_ca_ratio after. */
static __always_inline void pace(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 pipe = tp->packets_out - tp->sacked_out - tp->lost_out + tp->retrans_out;
	__u64 ratio_fx = pacing_slow_start(tp) ? params.pacing_ss_ratio_fx :
						 params.pacing_ca_ratio_fx;

	set_pacing_rate(sk, ratio_fx, pipe);
}

SEC("struct_ops")
void BPF_PROG(prague_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct prague_state *state = prague(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 acked = tp->delivered - state->delivered;
	__u32 marked = min(tp->delivered_ce - state->delivered_ce, acked);

	state->delivered = tp->delivered;
	state->delivered_ce = tp->delivered_ce;
	window_guard(&state->window, sk);
	answer(sk, state);
	grow(sk, state, acked - marked);
	pace(sk);
	window_save(&state->window, sk);
}

SEC("struct_ops")
void BPF_PROG(prague_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_ECN_IS_CE || event == CA_EVENT_ECN_NO_CE)
		ce_echo_segment(sk, &prague(sk)->echo, event == CA_EVENT_ECN_IS_CE);
}

SEC("struct_ops")
__u32 BPF_PROG(prague_undo_cwnd, struct sock *sk)
{
	return window_before_reduction(sk);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops prague_ops = {
	.init = (void *)prague_init,
	.in_ack_event = (void *)prague_in_ack_event,
	.ssthresh = (void *)prague_ssthresh,
	.cong_control = (void *)prague_cong_control,
	.cwnd_event = (void *)prague_cwnd_event,
	.undo_cwnd = (void *)prague_undo_cwnd,
	.flags = TCP_CONG_NEEDS_ECN,
	.name = PLACEHOLDER_NAME,
};
