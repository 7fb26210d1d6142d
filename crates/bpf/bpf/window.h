/* The window of a stack that owns it through cong_control: the kernel decides when a
 * reduction starts and the stack sets ssthresh and cwnd for it on the same ACK.
 *
 * The kernel starts a reduction by recording the window it starts from (prior_cwnd) and
 * where the episode ends (high_seq), and asks the ssthresh op (tcp_init_cwnd_reduction,
 * tcp_enter_loss); with cong_control it then leaves cwnd alone. What that call returns is not
 * trusted: on this kernel it now and then does not run the program (nor set_state's on the
 * same ACK; no recursion miss is counted) and the caller reads a stale stack word instead,
 * 0x82254425 here: the low half of srso_return_thunk+5, the return address the SRSO
 * mitigation's thunk leaves below the stack pointer. Left to the kernel's rate reduction,
 * that word became a cwnd of hundreds of millions. So the stack recognises a reduction from
 * the kernel's bookkeeping and answers it itself; undo_cwnd's word is bounded the same way. */
#ifndef TCPEVAL_WINDOW_H
#define TCPEVAL_WINDOW_H

#include "common.h"

/* include/net/tcp.h: the ssthresh of a connection that has never reduced. */
#define TCP_INFINITE_SSTHRESH 0x7fffffffU

enum reduction {
	REDUCTION_NONE,
	REDUCTION_ECN,	   /* an ECN echo (CWR) */
	REDUCTION_LOSS,	   /* fast recovery, or a loss a tail-loss probe repaired */
	REDUCTION_TIMEOUT, /* a retransmission timeout; the kernel has set cwnd itself */
};

struct window {
	__u32 episode_seq; /* high_seq of the reduction last answered */
	__u32 cwnd;	   /* cwnd as the stack left it */
	__u32 ssthresh;	   /* ssthresh as the stack left it */
	__u8 episode_state;
};

static __always_inline __u8 ca_state(const struct sock *sk)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);

	return BPF_CORE_READ_BITFIELD(icsk, icsk_ca_state);
}

static __always_inline void window_save(struct window *w, const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	w->cwnd = tp->snd_cwnd;
	w->ssthresh = tp->snd_ssthresh;
}

static __always_inline void window_init(struct window *w, const struct sock *sk)
{
	w->episode_seq = tcp_sk(sk)->high_seq;
	w->episode_state = TCP_CA_Open;
	window_save(w, sk);
}

/* What the kernel started since the last ACK, if anything, with ssthresh put back to the
 * stack's own. A new episode has a new high_seq, or moves from CWR to Recovery
 * (tcp_enter_recovery keeps the CWR episode's). Out of those states a lower ssthresh is a
 * tail-loss probe's reduction (tcp_process_tlp_ack passes through CWR within one ACK), as
 * is one no kernel path sets; an undo raises it. */
static __always_inline enum reduction window_reduction(struct window *w, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u8 state = ca_state(sk);
	bool new_episode = tp->high_seq != w->episode_seq || state != w->episode_state;
	enum reduction asked = REDUCTION_NONE;

	switch (state) {
	case TCP_CA_CWR:
		asked = tp->high_seq != w->episode_seq ? REDUCTION_ECN : REDUCTION_NONE;
		break;
	case TCP_CA_Recovery:
		asked = new_episode ? REDUCTION_LOSS : REDUCTION_NONE;
		break;
	case TCP_CA_Loss:
		asked = new_episode ? REDUCTION_TIMEOUT : REDUCTION_NONE;
		break;
	default:
		if (tp->snd_ssthresh < w->ssthresh || tp->snd_ssthresh > TCP_INFINITE_SSTHRESH)
			asked = REDUCTION_LOSS;
		break;
	}
	w->episode_seq = tp->high_seq;
	w->episode_state = state;
	/* The stack answers from its own ssthresh, not from what the kernel's call returned. */
	if (asked != REDUCTION_NONE)
		tp->snd_ssthresh = w->ssthresh;
	return asked;
}

/* An undo (tcp_undo_cwnd_reduction) may restore no more than the window before the
 * reduction or the one the stack left; more is an undo_cwnd call whose program did not
 * run, as with ssthresh. */
static __always_inline void window_guard(const struct window *w, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 most = max(w->cwnd, tp->prior_cwnd);

	if (tp->snd_cwnd > most)
		tp->snd_cwnd = most;
}

/* Sets the reduction's ssthresh and brings cwnd down to it at once (RFC 6675 §5: cwnd =
 * ssthresh on entering recovery, sending as the pipe allows; RFC 8257 §3.3 for an echo);
 * after a timeout the kernel has already set cwnd to the loss window (RFC 5681 §3.1). */
static __always_inline void window_reduce(struct sock *sk, enum reduction asked,
					  __u32 ssthresh)
{
	struct tcp_sock *tp = tcp_sk(sk);

	tp->snd_ssthresh = max(ssthresh, MIN_SSTHRESH_PKTS);
	if (asked != REDUCTION_TIMEOUT)
		tp->snd_cwnd = tp->snd_ssthresh;
}

/* RFC 5681 §3.1 on a loss: half the window the reduction started from. */
static __always_inline __u32 halved(const struct tcp_sock *tp)
{
	return max(tp->prior_cwnd >> 1, MIN_SSTHRESH_PKTS);
}

/* Growth happens outside Recovery (and CWR unless `in_cwr`), only when cwnd-limited. */
static __always_inline bool window_may_grow(const struct sock *sk, bool in_cwr)
{
	__u8 state = ca_state(sk);

	if (state == TCP_CA_Recovery || (state == TCP_CA_CWR && !in_cwr))
		return false;
	return cwnd_limited(sk);
}

#endif
