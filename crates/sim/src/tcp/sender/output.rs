//! What goes out and when (Linux `tcp_output.c`): lost segments first, then new data, within
//! the congestion, receive and send windows; TSO frames and their deferral; the pacer.

use super::Sender;
use crate::cc::CaState;
use crate::packet::Packet;
use crate::scenario::HEADER_BYTES;
use crate::tcp::appdata::Availability;
use crate::tcp::timestamps::tsval;
use crate::tcp::tso;
use crate::tcp::tso::Frame;
use crate::tcp::tso::Outlook;

/// Where the next segment comes from.
pub(super) enum Next {
    Retransmit(u64),
    New,
}

impl Sender {
    /// Send what cwnd, the window, the pacing gate and the application allow.
    pub(super) fn send(&mut self, now_ns: u64, out: &mut Vec<Packet>) {
        if std::mem::take(&mut self.fast_retransmit_due) {
            // RFC 6675 §5 step (4.3), RFC 5681 §3.2 step 2: fast retransmit, before pipe
            // has fallen below the reduced cwnd.
            if let Some(seq) = self.board.next_retransmission() {
                self.transmit(now_ns, Next::Retransmit(seq), out);
            }
        }
        self.send_burst(now_ns, out);
        self.pacer.end_burst();
        if let Some(frame) = &mut self.tso {
            frame.end();
        }
        self.schedule_probe(now_ns);
    }

    /// Send packet by packet until cwnd, the window, the pacing gate or the data runs out.
    pub(super) fn send_burst(&mut self, now_ns: u64, out: &mut Vec<Packet>) {
        let cwnd_pkts = self.send_window_pkts();
        loop {
            if self.board.in_flight() >= cwnd_pkts {
                self.cwnd_limited = true;
                return;
            }
            if let Some(open_ns) = self.pacer.closed_until(now_ns, self.pacing_rate_bps) {
                self.wake_at(open_ns);
                return;
            }
            let frame_done = self.tso.as_ref().is_some_and(Frame::is_done);
            if frame_done {
                if let Some(cwnd_binds) = self.tso_defers(now_ns, cwnd_pkts) {
                    self.cwnd_limited = cwnd_binds;
                    return;
                }
            }
            let Some(next) = self.next_segment(now_ns) else {
                self.cwnd_limited = false;
                return;
            };
            self.transmit(now_ns, next, out);
            if let Some(frame) = &mut self.tso {
                frame.on_send();
            }
        }
    }

    /// At the start of a TSO frame: size it, or hold it back for an ACK due soon that lets a
    /// larger one go (`tso.rs`; Linux `tcp_write_xmit`, never in recovery or after a timeout).
    /// Held back: whether cwnd, rather than the receive window, is what held it.
    pub(super) fn tso_defers(&mut self, now_ns: u64, cwnd_pkts: u64) -> Option<bool> {
        let mss_bytes = self.cfg.mss_bytes;
        let frame_pkts = tso::frame_pkts(
            self.tso_rate_bps(),
            mss_bytes,
            self.rtt.min_rtt_ns(),
            cwnd_pkts,
        );
        let packets_out = self.board.packets_out();
        let outlook = Outlook {
            now_ns,
            last_send_ns: self.last_send_ns,
            cwnd_pkts,
            in_flight_pkts: self.board.in_flight(),
            rwnd_pkts: self.cfg.window_pkts.min(self.rwnd_pkts),
            packets_out,
            oldest_sent_ns: if packets_out > 0 {
                self.board.segment(self.board.snd_una()).sent_ns()
            } else {
                now_ns
            },
            srtt_ns: self.rtt.srtt_ns(),
        };
        let recovering = matches!(self.ca_state, CaState::Recovery | CaState::Loss);
        if !recovering && outlook.defers(frame_pkts) {
            return Some(outlook.cwnd_binds());
        }
        if let Some(frame) = &mut self.tso {
            frame.start(frame_pkts);
        }
        None
    }

    /// The rate frames are sized by: the controller's pacing rate, or for a controller without
    /// one the rate Linux derives from cwnd and srtt; either capped by the host's limit.
    pub(super) fn tso_rate_bps(&self) -> Option<u64> {
        if self.cc.pacing_rate_bps().is_some() {
            return self.pacing_rate_bps;
        }
        let rate = tso::kernel_pacing_rate_bps(
            self.cfg.mss_bytes,
            self.cwnd_pkts,
            self.cc.ssthresh(),
            self.board.packets_out(),
            self.rtt.srtt_ns(),
        );
        self.pacer.capped_bps(rate)
    }

    /// RFC 6675 §4 NextSeg: lost segments first, then new data.
    pub(super) fn next_segment(&mut self, now_ns: u64) -> Option<Next> {
        if let Some(seq) = self.board.next_retransmission() {
            return Some(Next::Retransmit(seq));
        }
        let availability = if self.app_open {
            self.app.availability(self.board.snd_nxt(), now_ns)
        } else {
            Availability::No
        };
        match availability {
            Availability::Now => {
                let window = self.cfg.window_pkts.min(self.rwnd_pkts);
                if self.board.packets_out() == 0 && window == 0 && self.rto.deadline_ns().is_none()
                {
                    // A closed receive window and nothing outstanding: the persist timer
                    // (RFC 9293 §3.8.6.1), so that a lost window update cannot stall us.
                    self.arm_rto(now_ns + self.rtt.rto_ns());
                }
                (self.board.packets_out() < window).then_some(Next::New)
            }
            Availability::At(ready_ns) => {
                self.wake_at(ready_ns);
                self.rate.on_app_limited(self.board.in_flight());
                None
            }
            Availability::No => {
                self.rate.on_app_limited(self.board.in_flight());
                None
            }
        }
    }

    /// The window the flight is kept under: the controller's, or during fast recovery the
    /// sender's own reduction towards it.
    pub(super) fn send_window_pkts(&self) -> u64 {
        match self.reduction.cwnd_pkts() {
            Some(cwnd_pkts) if self.in_window_reduction() && !self.cc_owns_recovery => cwnd_pkts,
            _ => self.cwnd_pkts,
        }
    }

    pub(super) fn transmit(&mut self, now_ns: u64, next: Next, out: &mut Vec<Packet>) {
        let packets_out = self.board.packets_out();
        if packets_out == 0 && self.stats.packets_sent > 0 {
            let idle_ns = now_ns - self.last_send_ns;
            if idle_ns > self.rtt.rto_ns() {
                let path = self.path();
                self.cc.on_idle_restart(now_ns, idle_ns, &path);
                self.cc_changed();
            }
        }
        let tx = self.rate.on_send(now_ns, packets_out);
        let seq = match next {
            Next::Retransmit(seq) => {
                self.board.on_retransmit(seq, tx);
                self.stats.retransmits += 1;
                if let Some(episode) = &mut self.episode {
                    episode.on_retransmit(seq, now_ns);
                }
                seq
            }
            Next::New => self.board.on_send_new(tx),
        };
        let payload_bytes = self.app.payload_bytes(seq);
        let tsval = if self.cfg.recovery.timestamps {
            tsval(now_ns)
        } else {
            0
        };
        let mut pkt = Packet::data(self.flow, seq, HEADER_BYTES + payload_bytes).stamped(tsval);
        let retransmission = matches!(next, Next::Retransmit(_));
        pkt.ecn = self.cfg.ecn.codepoint(retransmission);
        pkt.cwr = !retransmission && self.cfg.ecn.take_cwr();
        out.push(pkt);
        self.stats.packets_sent += 1;
        if self.in_window_reduction() {
            self.reduction.on_send();
        }
        self.last_send_ns = now_ns;
        if self.rto.deadline_ns().is_none() {
            self.arm_rto(now_ns + self.rtt.rto_ns()); // RFC 6298 §5.1
        }
        // The rate read after a restart from idle, which may have changed it.
        self.pacer
            .on_send(now_ns, payload_bytes, self.pacing_rate_bps);
    }
}
