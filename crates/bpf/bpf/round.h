/* Round trips for the stacks that act once per RTT (Vegas, FAST).
 *
 * Vegas times a round by a distinguished segment: the round ends when the first segment sent
 * after the previous round ended is acknowledged (Brakmo & Peterson, IEEE JSAC 1995, §III-B).
 * Here that segment is the one starting at the snd_nxt recorded when the last round ended, so
 * a round ends once snd_una passes it. The simulator counts rounds by packets delivered,
 * SACKed ones included (crates/sim/src/tcp/rate.rs); without losses the two are the same
 * rounds, and with losses Vegas does not use them (it runs only in the Open state).
 *
 * The kernel calls pkts_acked, where rounds are counted, before cong_control on the same ACK
 * (net/ipv4/tcp_input.c: tcp_clean_rtx_queue, then tcp_cong_control), and with snd_una
 * already moved to the ACK's sequence. */
#ifndef TCPEVAL_ROUND_H
#define TCPEVAL_ROUND_H

#include "common.h"

/* RFC 9293 §3.4's sequence arithmetic: a after b modulo 2^32. */
static __always_inline bool seq_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

/* The first round ends with the first ACK of data, as the simulator's does. */
static __always_inline void round_start(const struct tcp_sock *tp, __u32 *end_seq)
{
	*end_seq = tp->snd_nxt;
}

/* Whether this ACK ends a round; if so the next one ends after what is sent from now on. */
static __always_inline bool round_ended(const struct tcp_sock *tp, __u32 *end_seq)
{
	if (!seq_after(tp->snd_una, *end_seq))
		return false;
	*end_seq = tp->snd_nxt;
	return true;
}

/* RTT samples as pkts_acked gets them: none is negative (the kernel's -1); zero, possible on a
 * loopback path, is taken as 1 µs so that no ratio divides by zero. */
static __always_inline bool rtt_sample(const struct ack_sample *sample, __u32 *rtt_us)
{
	if (sample->rtt_us < 0)
		return false;
	*rtt_us = max(sample->rtt_us, 1);
	return true;
}

#endif
