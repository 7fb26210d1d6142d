/* α, the moving average of the fraction of packets that came back marked (RFC 8257 §3.3),
 * which Prague measures as DCTCP does (draft-briscoe-iccrg-prague-congestion-control-04
 * §2.3.2).
 *
 * Steps 1–3 of the RFC (counting bytes acknowledged, and of those the ones acknowledged with
 * ECE) are the kernel's own counters: tp->delivered and tp->delivered_ce, in packets, which
 * with a fixed MSS is the same fraction. Steps 4 and 7 (a window ends when SND.NXT at its
 * start is acknowledged) are a round of round.h. */
#ifndef TCPEVAL_MARKED_FRACTION_H
#define TCPEVAL_MARKED_FRACTION_H

#include "common.h"
#include "round.h"

struct marked_fraction {
	__u32 alpha_fx;	    /* DCTCP.Alpha */
	__u32 round_end;    /* DCTCP.WindowEnd */
	__u32 delivered;    /* tp->delivered when the window began */
	__u32 delivered_ce; /* tp->delivered_ce when the window began */
};

static __always_inline void marked_fraction_init(struct marked_fraction *f,
						 const struct tcp_sock *tp, __u64 alpha_init_fx)
{
	f->alpha_fx = alpha_init_fx;
	f->delivered = tp->delivered;
	f->delivered_ce = tp->delivered_ce;
	round_start(tp, &f->round_end);
}

/* Packets of the current window acknowledged with ECE so far. */
static __always_inline __u32 marked_fraction_marked(const struct marked_fraction *f,
						    const struct tcp_sock *tp)
{
	return tp->delivered_ce - f->delivered_ce;
}

/* Steps 5, 6 and 8: fold the window's fraction M into α with gain g, α ← (1 − g)·α + g·M (if
 * `fold`), and count the next from here. A window with nothing acknowledged is no evidence
 * and leaves α. */
static __always_inline void marked_fraction_close(struct marked_fraction *f,
						  const struct tcp_sock *tp, __u64 g_fx,
						  bool fold)
{
	__u32 acked = tp->delivered - f->delivered;
	__u32 marked = min(marked_fraction_marked(f, tp), acked);

	if (fold && acked) {
		__u64 m_fx = ((__u64)marked << FRACTION_SHIFT) / acked;

		f->alpha_fx = ((FRACTION_ONE - g_fx) * f->alpha_fx + g_fx * m_fx) >> FRACTION_SHIFT;
	}
	f->delivered = tp->delivered;
	f->delivered_ce = tp->delivered_ce;
}

/* The fraction of the window an ECN reduction keeps, 1 − α/2 (RFC 8257 §3.3). */
static __always_inline __u64 marked_fraction_keep(const struct marked_fraction *f)
{
	return FRACTION_ONE - (f->alpha_fx >> 1);
}

#endif
