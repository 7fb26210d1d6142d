/* The frame of a loss-based stack: it owns its window through cong_control, as DCTCP and
 * Prague do (window.h says why the kernel's ssthresh and undo_cwnd calls are not trusted),
 * and runs the kernel's own policy around its growth and decrease rules:
 * - a reduction the kernel starts (fast recovery, CWR, a timeout) gets the stack's ssthresh
 *   for the window it started from: the one the stack's ssthresh op answered, or, when the
 *   kernel skipped that program, one computed from prior_cwnd on the first ACK after; the
 *   flight then falls to it by PRR (prr.h) in CWR and Recovery, as the kernel's own
 *   stacks' do, and the kernel sets cwnd = ssthresh when the episode ends;
 * - outside CWR and Recovery the window grows by the stack's rule on an ACK that advanced
 *   snd_una (RFC 5681 §3.1: an ACK of new data), by the packets it delivered;
 * - the pacing rate is the one the kernel sets for its own stacks (pacing.h).
 *
 * A stack defines, before LOSS_STACK(stack):
 *   struct loss_window *stack_window(struct sock *sk): its frame's state in its icsk_ca_priv;
 *   __u32 stack_reduced(struct sock *sk, __u32 cwnd): the ssthresh it answers a reduction
 *     from `cwnd` with (it may update its own state: it runs once per reduction);
 *   void stack_grow(struct sock *sk, __u32 acked): growth for `acked` packets delivered. */
#ifndef TCPEVAL_LOSS_STACK_H
#define TCPEVAL_LOSS_STACK_H

#include "common.h"
#include "pacing.h"
#include "prr.h"
#include "window.h"

struct loss_window {
	struct window window;
	struct prr prr;
	__u32 snd_una; /* at the last ACK */
	__u32 answer;  /* what the ssthresh op last answered, until an ACK takes it; else 0 */
};

static __always_inline void loss_window_init(struct loss_window *lw, const struct sock *sk)
{
	window_init(&lw->window, sk);
	lw->snd_una = tcp_sk(sk)->snd_una;
	lw->answer = 0;
}

/* A function, not max(): the stack's answer may update its state and must run once. */
static __always_inline __u32 floored_ssthresh(__u32 ssthresh)
{
	return max(ssthresh, MIN_SSTHRESH_PKTS);
}

static __always_inline bool in_window_reduction(const struct sock *sk)
{
	__u8 state = ca_state(sk);

	return state == TCP_CA_CWR || state == TCP_CA_Recovery;
}

/* The reduction the kernel started since the last ACK, if it set a new ssthresh: through
 * the stack's ssthresh op (its answer is waiting) or with a stale word where the program did
 * not run (the kernel's value moved without an answer). The kernel also moves into Recovery
 * from CWR, and times out again in Loss, without a new ssthresh: the episode goes on, as for
 * the kernel's own stacks. */
static __always_inline bool loss_window_reduced(struct loss_window *lw, struct sock *sk,
						__u32 delivered)
{
	struct tcp_sock *tp = tcp_sk(sk);
	bool kept = tp->snd_ssthresh == lw->window.ssthresh;

	if (window_reduction(&lw->window, sk) == REDUCTION_NONE || (!lw->answer && kept))
		return false;
	prr_start(&lw->prr, tp, delivered);
	return true;
}

#define LOSS_STACK(stack)                                                                  \
	SEC("struct_ops")                                                                   \
	void BPF_PROG(stack##_cong_control, struct sock *sk, __u32 ack, int flag,           \
		      const struct rate_sample *rs)                                         \
	{                                                                                   \
		struct loss_window *lw = stack##_window(sk);                                \
		struct tcp_sock *tp = tcp_sk(sk);                                           \
		__u32 delivered = rs->acked_sacked > 0 ? rs->acked_sacked : 0;              \
		bool una_advanced = tp->snd_una != lw->snd_una;                             \
                                                                                            \
		lw->snd_una = tp->snd_una;                                                  \
		window_guard(&lw->window, sk);                                              \
		if (loss_window_reduced(lw, sk, delivered))                                 \
			tp->snd_ssthresh = lw->answer ? lw->answer :                        \
				floored_ssthresh(stack##_reduced(sk, tp->prior_cwnd));      \
		lw->answer = 0;                                                             \
		if (in_window_reduction(sk))                                                \
			prr_ack(&lw->prr, tp, delivered, una_advanced && !rs->losses);      \
		else if (una_advanced && delivered)                                         \
			stack##_grow(sk, delivered);                                        \
		kernel_pacing_rate(sk);                                                     \
		window_save(&lw->window, sk);                                               \
	}                                                                                   \
                                                                                            \
	SEC("struct_ops")                                                                   \
	__u32 BPF_PROG(stack##_ssthresh, struct sock *sk)                                   \
	{                                                                                   \
		struct loss_window *lw = stack##_window(sk);                                \
                                                                                            \
		lw->answer = floored_ssthresh(stack##_reduced(sk, tcp_sk(sk)->snd_cwnd));   \
		return lw->answer;                                                          \
	}                                                                                   \
                                                                                            \
	SEC("struct_ops")                                                                   \
	__u32 BPF_PROG(stack##_undo_cwnd, struct sock *sk)                                  \
	{                                                                                   \
		return window_before_reduction(sk);                                         \
	}

#endif
