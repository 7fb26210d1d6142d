/* The pacing rate of a stack that owns the window through cong_control, which the kernel
 * then leaves to it: `ratio` · max(cwnd, `in_flight`) · MSS / srtt, in bytes per second.
 * The kernel paces at this rate only when the socket asks (sk_pacing_status); otherwise the
 * rate still sizes its TSO bursts and its small-queue limit (tcp_output.c). */
#ifndef TCPEVAL_PACING_H
#define TCPEVAL_PACING_H

#include "common.h"

#define USEC_PER_SEC 1000000ULL
#define PERCENT 100

static __always_inline void set_pacing_rate(struct sock *sk, __u64 ratio_fx, __u32 in_flight)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 window = max(tp->snd_cwnd, in_flight);
	__u64 rate;

	if (!tp->srtt_us)
		return;
	/* srtt_us holds eight times the smoothed RTT in µs. */
	rate = (__u64)tp->mss_cache * window * (USEC_PER_SEC << 3) / tp->srtt_us;
	rate = (rate * ratio_fx) >> FRACTION_SHIFT;
	sk->sk_pacing_rate = min(rate, (__u64)sk->sk_max_pacing_rate);
}

/* Doubling cannot overshoot while cwnd < ssthresh/2: the slow-start ratio applies then. */
static __always_inline bool pacing_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh / 2;
}

/* The rate the kernel sets for a stack without cong_control (tcp_update_pacing_rate, with
 * the namespace's tcp_pacing_ss_ratio and tcp_pacing_ca_ratio): such a stack does not pace,
 * but the rate sizes the kernel's bursts. */
static __always_inline void kernel_pacing_rate(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	const struct net *net = sk->__sk_common.skc_net.net;
	__u64 percent = pacing_slow_start(tp) ? net->ipv4.sysctl_tcp_pacing_ss_ratio :
						 net->ipv4.sysctl_tcp_pacing_ca_ratio;

	set_pacing_rate(sk, (percent << FRACTION_SHIFT) / PERCENT, tp->packets_out);
}

#endif
