/* Proportional Rate Reduction (RFC 9937, which obsoletes RFC 6937): how the flight falls from
 * the window a reduction started from to ssthresh, ACK by ACK, for a stack that owns its window
 * through cong_control (the kernel runs its own only for stacks that do not). RecoverFS is the
 * window the reduction started from (the kernel's prior_cwnd, as the simulator's PRR takes it);
 * prr_delivered and prr_out are counted from the kernel's delivered and data_segs_out, so a
 * call of the program the kernel skipped loses nothing. */
#ifndef TCPEVAL_PRR_H
#define TCPEVAL_PRR_H

#include "common.h"

struct prr {
	__u32 delivered_at_start; /* tp->delivered before the ACK that began the reduction */
	__u32 sent_at_start;	  /* tp->data_segs_out then */
};

/* RFC 6675 §4 SetPipe as the kernel counts it: sent, less those SACKed or deemed lost, plus
 * those retransmitted. */
static __always_inline __u32 pipe_pkts(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

/* A reduction begins on this ACK, which delivered `delivered_now` packets. */
static __always_inline void prr_start(struct prr *p, const struct tcp_sock *tp,
				      __u32 delivered_now)
{
	p->delivered_at_start = tp->delivered - delivered_now;
	p->sent_at_start = tp->data_segs_out;
}

/* RFC 9937 §5 on an ACK that delivered `delivered_now` packets: while pipe is above ssthresh,
 * send ssthresh/RecoverFS of what was delivered (the proportional part); below it, rebuild the
 * flight towards ssthresh no faster than the ACK clock, one segment more on an ACK that
 * advanced snd_una without showing a new loss (`safe_ack`: the slow-start reduction bound).
 * The first ACK always lets the fast retransmission out. An ACK without news changes nothing. */
static __always_inline void prr_ack(const struct prr *p, struct tcp_sock *tp, __u32 delivered_now,
				    bool safe_ack)
{
	__u32 delivered = tp->delivered - p->delivered_at_start;
	__u32 sent = tp->data_segs_out - p->sent_at_start;
	__u32 recover_fs = max(tp->prior_cwnd, 1U);
	__u32 ssthresh = tp->snd_ssthresh;
	__u32 pipe = pipe_pkts(tp);
	__u32 send = 0;

	if (!delivered_now)
		return;
	if (pipe > ssthresh) {
		__u32 due = ((__u64)delivered * ssthresh + recover_fs - 1) / recover_fs;

		send = due > sent ? due - sent : 0;
	} else {
		__u32 owed = delivered > sent ? delivered - sent : 0;

		send = min(max(owed, delivered_now) + (safe_ack ? 1 : 0), ssthresh - pipe);
	}
	if (!sent)
		send = max(send, 1U);
	tp->snd_cwnd = min(pipe + send, tp->snd_cwnd_clamp);
}

#endif
