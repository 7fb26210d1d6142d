/* The receiver's per-packet echo of CE marks (RFC 8257 §3.2), for a stack whose sender
 * measures the fraction of its packets marked: an ACK carries ECE exactly when the data it
 * acknowledges arrived CE-marked, instead of RFC 3168's ECE from the first mark until CWR.
 *
 * The kernel calls the receiving socket's stack with CA_EVENT_ECN_IS_CE or CA_EVENT_ECN_NO_CE
 * for each ECN-capable data segment, after RCV.NXT has moved past it and before it decides
 * whether to ACK now or later (tcp_input.c, tcp_event_data_recv). Its ACKs carry ECE while
 * TCP_ECN_DEMAND_CWR is set in ecn_flags (tcp_output.c, tcp_ecn_send), so that flag is
 * DCTCP.CE here. */
#ifndef TCPEVAL_CE_ECHO_H
#define TCPEVAL_CE_ECHO_H

#include "common.h"

/* include/net/tcp.h's ecn_flags bits, which BTF does not carry. */
#define TCP_ECN_OK (1U << 0)
#define TCP_ECN_DEMAND_CWR (1U << 2)

struct ce_echo {
	__u32 prior_rcv_nxt; /* RCV.NXT before the segment being processed */
	__u8 ce;	     /* DCTCP.CE: the last data segment was CE-marked */
};

static __always_inline void ce_echo_init(struct ce_echo *echo, const struct tcp_sock *tp)
{
	echo->prior_rcv_nxt = tp->rcv_nxt;
	echo->ce = 0;
}

static __always_inline void set_ece(struct tcp_sock *tp, bool ce)
{
	if (ce)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

/* One data segment arrived, CE-marked or not. On a change of DCTCP.CE the data before it that
 * waits for a delayed ACK is acknowledged at once with the old state (RFC 8257 §3.2: the two
 * ACKs that keep a delayed ACK from covering packets of both states); the kernel's own ACK
 * for this segment then carries the new state. */
static __always_inline void ce_echo_segment(struct sock *sk, struct ce_echo *echo, bool ce)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!(tp->ecn_flags & TCP_ECN_OK))
		return;
	/* The delayed-ACK timer runs exactly while received data waits for its ACK. */
	if (ce != echo->ce && (inet_csk(sk)->icsk_ack.pending & ICSK_ACK_TIMER)) {
		set_ece(tp, echo->ce);
		bpf_tcp_send_ack(tp, echo->prior_rcv_nxt);
	}
	echo->ce = ce;
	echo->prior_rcv_nxt = tp->rcv_nxt;
	set_ece(tp, ce);
}

#endif
