/* HighSpeed TCP (RFC 3649): standard TCP up to Low_Window, above it an AIMD whose increase
 * a(w) grows and whose decrease b(w) shrinks with the window (RFC 3649 §5). a(w) and b(w)
 * need log and pow, which BPF lacks: the loader (src/highspeed.rs) samples the simulator's
 * closed forms at HSTCP_ROWS windows from Low_Window to High_Window, and this program
 * interpolates between the two rows around cwnd. Slow start as RFC 5681 §3.1. */
#include "loss_stack.h"

/* src/highspeed.rs: ROWS. */
#define HSTCP_ROWS 64
/* A binary search halves HSTCP_ROWS candidates down to one in log2(HSTCP_ROWS) steps. */
#define HSTCP_SEARCH_STEPS 6

_Static_assert(HSTCP_ROWS == 1 << HSTCP_SEARCH_STEPS, "the search covers every row");

struct hstcp_row {
	__u64 window; /* packets; rows rise with it, the first is Low_Window */
	__u64 a_fx; /* a(window), packets per RTT */
	__u64 b_fx; /* b(window), the fraction a congestion event gives up */
};

PARAMS(__u64 per_ack; struct hstcp_row rows[HSTCP_ROWS];);

struct hstcp_state {
	struct loss_window window;
	__u64 owed_fx; /* additive-increase credit not yet a whole packet */
};

static __always_inline struct hstcp_state *hstcp(const struct sock *sk)
{
	return CA_STATE(struct hstcp_state, sk);
}

static __always_inline struct loss_window *hstcp_window(const struct sock *sk)
{
	return &hstcp(sk)->window;
}

struct hstcp_aimd {
	__u64 a_fx;
	__u64 b_fx;
};

/* The last row whose window is at most `cwnd`, which is at least the first row's. */
static __always_inline __u32 hstcp_row_below(__u32 cwnd)
{
	__u32 lo = 0, hi = HSTCP_ROWS - 1, mid;
	int step;

	for (step = 0; step < HSTCP_SEARCH_STEPS; step++) {
		mid = (lo + hi + 1) / 2;
		if (params.rows[mid & (HSTCP_ROWS - 1)].window <= cwnd)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo & (HSTCP_ROWS - 1);
}

/* `from` moved towards `to` by the fraction num/den (≤ 1), without signed division. */
static __always_inline __u64 hstcp_between(__u64 from, __u64 to, __u64 num, __u64 den)
{
	if (to >= from)
		return from + (to - from) * num / den;
	return from - (from - to) * num / den;
}

static __always_inline struct hstcp_aimd hstcp_aimd_at(__u32 cwnd)
{
	/* RFC 3649 §5: at or below Low_Window, standard TCP's a = 1 and b = 1/2. */
	struct hstcp_aimd aimd = { FRACTION_ONE, FRACTION_ONE / 2 };
	const volatile struct hstcp_row *lo, *hi;
	__u32 i;

	if (cwnd < params.rows[0].window)
		return aimd;
	i = hstcp_row_below(cwnd);
	lo = &params.rows[i];
	aimd.a_fx = lo->a_fx;
	aimd.b_fx = lo->b_fx;
	/* Above the last row (High_Window) a and b hold its values, as the simulator's do. */
	if (i >= HSTCP_ROWS - 1)
		return aimd;
	hi = &params.rows[i + 1];
	aimd.a_fx = hstcp_between(lo->a_fx, hi->a_fx, cwnd - lo->window, hi->window - lo->window);
	aimd.b_fx = hstcp_between(lo->b_fx, hi->b_fx, cwnd - lo->window, hi->window - lo->window);
	return aimd;
}

SEC("struct_ops")
void BPF_PROG(hstcp_init, struct sock *sk)
{
	loss_window_init(hstcp_window(sk), sk);
	hstcp(sk)->owed_fx = 0;
}

static __always_inline void hstcp_grow(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!cwnd_limited(sk))
		return;
	/* Slow start takes the whole ACK: what is left once it reaches ssthresh is not carried
	 * into congestion avoidance, as in the simulator's HighSpeed. */
	if (in_slow_start(tp)) {
		slow_start(tp, acked, acked);
		return;
	}
	/* RFC 3649 §5: w += a(w)/w per ACK; `per_ack` off credits each packet acknowledged. */
	grow_by(tp, &hstcp(sk)->owed_fx,
		(params.per_ack ? 1 : acked) * hstcp_aimd_at(tp->snd_cwnd).a_fx);
}

/* RFC 3649 §5: w = (1 − b(w))·w on a congestion event. */
static __always_inline __u32 hstcp_reduced(struct sock *sk, __u32 cwnd)
{
	return reduced(cwnd, FRACTION_ONE - hstcp_aimd_at(cwnd).b_fx);
}

LOSS_STACK(hstcp)

SEC(".struct_ops.link")
struct tcp_congestion_ops hstcp_ops = {
	.init = (void *)hstcp_init,
	.cong_control = (void *)hstcp_cong_control,
	.ssthresh = (void *)hstcp_ssthresh,
	.undo_cwnd = (void *)hstcp_undo_cwnd,
	.name = PLACEHOLDER_NAME,
};
