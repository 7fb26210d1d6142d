/* What every tcpeval BPF congestion control shares: the kernel's types, the parameter block
 * the loader fills, and the few window rules of RFC 5681 they all build on.
 *
 * Parameters arrive in `.rodata.params`, a struct of __u64 in the order `src/stacks.rs` lists
 * them, written by the loader before the object is loaded (so the verifier sees constants).
 * Fractions are fixed point with FRACTION_SHIFT bits (src/params.rs uses the same). */
#ifndef TCPEVAL_COMMON_H
#define TCPEVAL_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* Kfuncs may be called only by a program under a GPL-compatible license. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define FRACTION_SHIFT 20
#define FRACTION_ONE (1ULL << FRACTION_SHIFT)
/* The word of an optional parameter left unset (src/params.rs `ABSENT`). */
#define PARAM_ABSENT (~0ULL)
/* RFC 5681 §3.1: ssthresh = max(FlightSize / 2, 2 * SMSS). */
#define MIN_SSTHRESH_PKTS 2U
/* Linux keeps a connection's per-algorithm state in icsk_ca_priv, 13 u64 words. */
#define CA_PRIV_BYTES 104
/* The loader writes the registered name over this (src/register.rs). */
#define PLACEHOLDER_NAME "tcpeval"
/* include/net/tcp.h, which BTF does not carry: the kernel negotiates ECN and sends ECT(0) for
 * a congestion control with this flag, whatever net.ipv4.tcp_ecn says. */
#define TCP_CONG_NEEDS_ECN (1U << 1)

#define PARAMS(fields) const volatile struct { fields } params SEC(".rodata.params")

#define CA_STATE(type, sk)                                                                   \
	({                                                                                   \
		_Static_assert(sizeof(type) <= CA_PRIV_BYTES, "state outgrows icsk_ca_priv"); \
		(type *)inet_csk(sk)->icsk_ca_priv;                                          \
	})

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline bool in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* The window may grow only while it is what limits the sender (RFC 7661 §4.1 keeps an
 * application-limited window from growing). In slow start the kernel counts a window as the
 * limit while less than twice the most packets it had out. */
static __always_inline bool cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
}

/* Slow start (RFC 5681 §3.1) by at most `limit` of the `acked` packets (RFC 3465 §2.2's L),
 * never past ssthresh; returns the packets left over for congestion avoidance (all of them
 * when the window is not below ssthresh). */
static __always_inline __u32 slow_start(struct tcp_sock *tp, __u32 acked, __u32 limit)
{
	__u32 room, grown;

	if (!in_slow_start(tp))
		return acked;
	room = tp->snd_ssthresh - tp->snd_cwnd;
	grown = min(min(acked, limit), room);

	tp->snd_cwnd = min(tp->snd_cwnd + grown, tp->snd_cwnd_clamp);
	return acked > grown && grown == room ? acked - grown : 0;
}

/* The packets of an ACK the window may grow by in congestion avoidance: none while the window
 * is not what limits the sender (cwnd_limited) or the ACK acknowledged nothing, else those
 * slow start (by at most `limit`) left over. */
static __always_inline __u32 growth_credit(struct sock *sk, __u32 acked, __u32 limit)
{
	if (!acked || !cwnd_limited(sk))
		return 0;
	return slow_start(tcp_sk(sk), acked, limit);
}

/* Additive increase in fixed point: `credit_fx` (packets × FRACTION_ONE) accrues in `*owed`,
 * and each window's worth of it adds one packet, as RFC 5681's cwnd += SMSS*SMSS/cwnd does. */
static __always_inline void grow_by(struct tcp_sock *tp, __u64 *owed, __u64 credit_fx)
{
	__u64 window_fx = (__u64)tp->snd_cwnd << FRACTION_SHIFT;

	*owed += credit_fx;
	if (*owed >= window_fx) {
		__u32 packets = *owed / window_fx;

		*owed -= (__u64)packets * window_fx;
		tp->snd_cwnd = min(tp->snd_cwnd + packets, tp->snd_cwnd_clamp);
	}
}

/* RFC 5681 §3.1 for `acked` packets: slow start by at most `limit` of them, the rest in
 * congestion avoidance, where a window's worth adds `ai_fx` packets (1 for Reno). */
static __always_inline void reno_grow(struct tcp_sock *tp, __u64 *owed_fx, __u32 acked,
				      __u32 limit, __u64 ai_fx)
{
	if (in_slow_start(tp)) {
		acked = slow_start(tp, acked, limit);
		if (!acked)
			return;
	}
	grow_by(tp, owed_fx, acked * ai_fx);
}

/* `cwnd` scaled by a fraction, never below RFC 5681's floor. */
static __always_inline __u32 reduced(__u32 cwnd, __u64 keep_fx)
{
	return max((__u32)(((__u64)cwnd * keep_fx) >> FRACTION_SHIFT), MIN_SSTHRESH_PKTS);
}

/* After a spurious loss (RFC 3522, F-RTO, D-SACK) the kernel restores the window it had. */
static __always_inline __u32 window_before_reduction(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return max(tp->snd_cwnd, tp->prior_cwnd);
}

#endif
