/* DCTCP (RFC 8257; Alizadeh et al., SIGCOMM 2010): the sender keeps α, the moving average of
 * the fraction of its packets that came back marked, and answers an ECN echo by cutting the
 * window by α/2 instead of half; the receiver echoes each CE mark on the ACK of the marked
 * data. Growth and loss are standard TCP's.
 *
 * The kernel enters CWR on the first ECE of a window (tcp_enter_cwr, once per window as
 * RFC 3168 §6.1.2 asks), takes ssthresh from us and brings cwnd down to it over the round
 * (RFC 6937); it calls the same ssthresh on a loss, which set_state and cwnd_event then
 * answer as a loss. */
#include "common.h"
#include "ce_echo.h"
#include "marked_fraction.h"

PARAMS(__u64 g_fx; __u64 alpha_init_fx; __u64 abc_limit;);

struct dctcp_state {
	struct marked_fraction fraction;
	struct ce_echo echo;
	__u64 owed_fx; /* additive-increase credit not yet a whole packet */
};

SEC("struct_ops")
void BPF_PROG(dctcp_init, struct sock *sk)
{
	struct dctcp_state *state = CA_STATE(struct dctcp_state, sk);
	struct tcp_sock *tp = tcp_sk(sk);

	/* RFC 8257 §3.3: α starts at alpha_init (the RFC's 1: the first marks count as severe). */
	marked_fraction_init(&state->fraction, tp, params.alpha_init_fx);
	ce_echo_init(&state->echo, tp);
	state->owed_fx = 0;
}

/* Every ACK, before the kernel's reaction to it: α is measured in every state, so marks
 * seen during a reduction still count (RFC 8257 §3.3). */
SEC("struct_ops")
void BPF_PROG(dctcp_in_ack_event, struct sock *sk, __u32 flags)
{
	struct dctcp_state *state = CA_STATE(struct dctcp_state, sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (marked_fraction_window_over(&state->fraction, tp))
		marked_fraction_close(&state->fraction, tp, params.g_fx, true);
}

/* RFC 8257 §3.3: cwnd ← cwnd·(1 − α/2) on an echo. */
SEC("struct_ops")
__u32 BPF_PROG(dctcp_ssthresh, struct sock *sk)
{
	struct dctcp_state *state = CA_STATE(struct dctcp_state, sk);

	return reduced(tcp_sk(sk)->snd_cwnd, marked_fraction_keep(&state->fraction));
}

/* RFC 8257 §3.4: the window grows as standard TCP's (RFC 5681 with RFC 3465's L). */
SEC("struct_ops")
void BPF_PROG(dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct dctcp_state *state = CA_STATE(struct dctcp_state, sk);

	if (!cwnd_limited(sk) || !acked)
		return;
	reno_grow(tcp_sk(sk), &state->owed_fx, acked, params.abc_limit, FRACTION_ONE);
}

/* RFC 8257 §3.5: a loss is answered as standard TCP answers it, halving; fast recovery
 * starts here, after the kernel took ssthresh as for an echo. */
SEC("struct_ops")
void BPF_PROG(dctcp_set_state, struct sock *sk, __u8 new_state)
{
	if (entering_recovery(sk, new_state))
		halve_on_loss(tcp_sk(sk));
}

SEC("struct_ops")
void BPF_PROG(dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	struct dctcp_state *state = CA_STATE(struct dctcp_state, sk);

	switch (event) {
	case CA_EVENT_ECN_IS_CE:
	case CA_EVENT_ECN_NO_CE:
		ce_echo_segment(sk, &state->echo, event == CA_EVENT_ECN_IS_CE);
		break;
	case CA_EVENT_LOSS:
		/* A retransmission timeout (RFC 8257 §3.5 with RFC 5681 §3.1). */
		halve_on_loss(tcp_sk(sk));
		break;
	default:
		break;
	}
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
	.cong_avoid = (void *)dctcp_cong_avoid,
	.set_state = (void *)dctcp_set_state,
	.cwnd_event = (void *)dctcp_cwnd_event,
	.undo_cwnd = (void *)dctcp_undo_cwnd,
	.flags = TCP_CONG_NEEDS_ECN,
	.name = PLACEHOLDER_NAME,
};
