/* DCTCP (RFC 8257; Alizadeh et al., SIGCOMM 2010): the sender keeps α, the moving average of
 * the fraction of its packets that came back marked, and answers an ECN echo by cutting the
 * window by α/2 instead of half; the receiver echoes each CE mark on the ACK of the marked
 * data. Growth and loss are standard TCP's.
 *
 * The kernel enters CWR on the first ECE of a window (tcp_enter_cwr: once per window, as
 * RFC 3168 §6.1.2 asks), fast recovery on a loss and the loss state on a timeout; the
 * stack owns the window through cong_control and answers each on the same ACK
 * (window.h says why it does not leave that to the kernel's ssthresh call). */
#include "common.h"
#include "ce_echo.h"
#include "marked_fraction.h"
#include "pacing.h"
#include "window.h"

PARAMS(__u64 g_fx; __u64 alpha_init_fx; __u64 abc_limit;);

struct dctcp_state {
	struct marked_fraction fraction;
	struct window window;
	struct ce_echo echo;
	__u64 owed_fx;	   /* additive-increase credit not yet a whole packet */
	__u32 delivered;   /* tp->delivered at the last ACK */
};

static __always_inline struct dctcp_state *dctcp(const struct sock *sk)
{
	return CA_STATE(struct dctcp_state, sk);
}

SEC("struct_ops")
void BPF_PROG(dctcp_init, struct sock *sk)
{
	struct dctcp_state *state = dctcp(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	/* RFC 8257 §3.3: α starts at alpha_init (the RFC's 1: the first marks count as severe). */
	marked_fraction_init(&state->fraction, tp, params.alpha_init_fx);
	window_init(&state->window, sk);
	ce_echo_init(&state->echo, tp);
	state->owed_fx = 0;
	state->delivered = tp->delivered;
}

/* Every ACK, before the kernel's reaction to it: α is measured in every state, so marks
 * seen during a reduction still count (RFC 8257 §3.3). */
SEC("struct_ops")
void BPF_PROG(dctcp_in_ack_event, struct sock *sk, __u32 flags)
{
	struct dctcp_state *state = dctcp(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (round_ended(tp, &state->fraction.round_end))
		marked_fraction_close(&state->fraction, tp, params.g_fx, true);
}

/* RFC 8257 §3.3: an echo keeps 1 − α/2 of the window. */
static __always_inline __u32 echo_answer(const struct dctcp_state *state, __u32 cwnd)
{
	return reduced(cwnd, marked_fraction_keep(&state->fraction));
}

SEC("struct_ops")
__u32 BPF_PROG(dctcp_ssthresh, struct sock *sk)
{
	return echo_answer(dctcp(sk), tcp_sk(sk)->snd_cwnd);
}

/* The reduction the kernel started on this ACK: an echo as §3.3 says; a loss or a timeout
 * as standard TCP answers it, halving (RFC 8257 §3.5). */
static __always_inline void answer(struct sock *sk, struct dctcp_state *state)
{
	struct tcp_sock *tp = tcp_sk(sk);
	enum reduction asked = window_reduction(&state->window, sk);

	if (asked == REDUCTION_ECN)
		window_reduce(sk, asked, echo_answer(state, tp->prior_cwnd));
	else if (asked != REDUCTION_NONE)
		window_reduce(sk, asked, halved(tp));
}

SEC("struct_ops")
void BPF_PROG(dctcp_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct dctcp_state *state = dctcp(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 acked = tp->delivered - state->delivered;

	state->delivered = tp->delivered;
	window_guard(&state->window, sk);
	answer(sk, state);
	/* RFC 8257 §3.4: outside reductions the window grows as standard TCP's (RFC 5681,
	 * counting packets as RFC 3465 with its L). */
	if (acked && window_may_grow(sk, false))
		reno_grow(tp, &state->owed_fx, acked, params.abc_limit, FRACTION_ONE);
	kernel_pacing_rate(sk);
	window_save(&state->window, sk);
}

SEC("struct_ops")
void BPF_PROG(dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_ECN_IS_CE || event == CA_EVENT_ECN_NO_CE)
		ce_echo_segment(sk, &dctcp(sk)->echo, event == CA_EVENT_ECN_IS_CE);
}

SEC("struct_ops")
__u32 BPF_PROG(dctcp_undo_cwnd, struct sock *sk)
{
	return window_before_reduction(sk);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops dctcp_ops = {
	.init = (void *)dctcp_init,
	.in_ack_event = (void *)dctcp_in_ack_event,
	.ssthresh = (void *)dctcp_ssthresh,
	.cong_control = (void *)dctcp_cong_control,
	.cwnd_event = (void *)dctcp_cwnd_event,
	.undo_cwnd = (void *)dctcp_undo_cwnd,
	.flags = TCP_CONG_NEEDS_ECN,
	.name = PLACEHOLDER_NAME,
};
