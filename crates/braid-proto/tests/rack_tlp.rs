//! RACK-TLP at the connection (`Config::rack_tlp`): a tail loss is
//! repaired by a probe about two round trips after the last
//! acknowledgement, not by the retransmission timer.

mod common;

use braid_proto::{Config, Frame, Instant};

const MSS: u64 = 1448;

/// A 40-segment transfer over one path of 10 ms each way whose last
/// `lost` segments are lost the first time they are sent: when the last
/// byte is read, the sender subflow's timeouts, and how many of those
/// segments went out again.
fn tail_loss(rack_tlp: bool, lost: u64) -> (Instant, u64, usize) {
    let config = Config { rack_tlp, ..Config::default() };
    let (mut a, mut b) = common::pair(config, "reno", "minrtt", 1);
    common::open(&mut a, &mut b, Instant::ZERO);
    let total = 40 * MSS;
    a.write_zeros(total);
    let (mut sent, mut resent) = (std::collections::BTreeSet::new(), 0);
    let done_at = common::drive(
        &mut a,
        &mut b,
        10,
        10_000,
        |_, b| {
            b.consume(u64::MAX);
            b.stats().bytes_read >= total
        },
        |_, to_b, p| match &p.frame {
            Frame::Data(d) if to_b && d.len > 0 && d.dsn >= (40 - lost) * MSS => {
                let first = sent.insert(d.dsn);
                resent += usize::from(!first);
                first
            }
            _ => false,
        },
    )
    .expect("the transfer completes");
    (done_at, a.subflow_stats(0).expect("subflow 0").counters.rtos, resent)
}

/// Counting packets, a tail loss waits for the retransmission timer (at
/// least 200 ms). With RACK-TLP the probe, a copy of the last segment,
/// goes two SRTTs after the last acknowledgement and brings the
/// acknowledgement that shows the others lost: each lost segment goes out
/// once more, and the transfer ends well before the timer would have
/// fired. A lone packet's probe waits 200 ms more for a delayed ACK, which
/// puts it at the retransmission timer's deadline, in its stead.
#[test]
fn a_tail_loss_is_repaired_by_a_probe_not_a_timeout() {
    for lost in [1, 2, 3] {
        let (counting_done, counting_rtos, counting_resent) = tail_loss(false, lost);
        let (probed_done, probed_rtos, resent) = tail_loss(true, lost);
        assert!(counting_rtos >= 1, "{lost} lost, counting packets: a timeout");
        // The connection-level timer waits twice the subflow's RTO (MPTCP
        // v0.96's `mptcp_set_rto`), so it does not re-send the segments
        // the subflow's timeout has just re-sent.
        assert_eq!(counting_resent, lost as usize, "{lost} lost, counting packets: each re-sent once");
        assert_eq!(probed_rtos, 0, "{lost} lost, RACK-TLP: no timeout");
        let saved = counting_done.saturating_since(probed_done).as_millis_f64();
        if lost == 1 {
            assert!(saved >= 0.0, "a lone probe is no later than the timer: {probed_done:?}, {counting_done:?}");
            continue;
        }
        assert_eq!(resent, lost as usize, "{lost} lost: the probe and the others, once each");
        assert!(saved >= 100.0, "{lost} lost: done at {probed_done:?} against {counting_done:?}");
    }
}
