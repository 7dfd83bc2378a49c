//! What the connection tells its scheduler (`SchedConn`, `SchedPath`), seen
//! through a scheduler that records it and sends as minRTT would.

mod common;

use std::sync::{Arc, Mutex};

use braid_proto::sched::{Decision, MinRtt, SchedConn, SchedPath, Scheduler};
use braid_proto::{cc, crypto::RustCrypto, Config, Connection, Instant};

/// The views of every decision: (stalls, each subflow's ssthresh).
type Seen = Arc<Mutex<Vec<(u64, Vec<u64>)>>>;

#[derive(Debug)]
struct Recording {
    seen: Seen,
    reads_ssthresh: bool,
}

impl Scheduler for Recording {
    fn name(&self) -> &'static str {
        "recording"
    }
    fn reads_ssthresh(&self) -> bool {
        self.reads_ssthresh
    }
    fn select(&mut self, conn: &SchedConn, paths: &[SchedPath]) -> Decision {
        self.seen.lock().unwrap().push((conn.stalls, paths.iter().map(|p| p.ssthresh).collect()));
        MinRtt.select(conn, paths)
    }
}

/// A client recording its scheduler's views, with a 10 kB send buffer
/// (below the initial window, so all it holds goes out at once), and the
/// server. `rounds` times: fill the buffer, send it all, let it be
/// acknowledged.
fn run(reads_ssthresh: bool, rounds: usize) -> Vec<(u64, Vec<u64>)> {
    let seen = Seen::default();
    let config = Config { send_buffer: 10_000, ..Config::default() };
    let sched = Box::new(Recording { seen: seen.clone(), reads_ssthresh });
    let mut a = Connection::client(config.clone(), cc::by_name("reno").unwrap(), sched, 1, Arc::new(RustCrypto));
    a.add_subflow(false).unwrap();
    let mut b = common::connection(braid_proto::Side::Server, config, "reno", "minrtt");
    let now = Instant::ZERO;
    common::open(&mut a, &mut b, now);
    for _ in 0..rounds {
        a.write_zeros(u64::MAX);
        for _ in 0..4 {
            while let Some(p) = a.poll_transmit(now) {
                b.handle_datagram(now, p).unwrap();
            }
            b.consume(u64::MAX);
            while let Some(p) = b.poll_transmit(now) {
                a.handle_datagram(now, p).unwrap();
            }
        }
    }
    let v = seen.lock().unwrap().clone();
    v
}

/// An application that wrote a full send buffer, all of it sent, is a
/// stall (BLEST's lambda counts it, as the kernel module's `retrans_flag`):
/// one per time the buffer fills, seen by the decisions that follow.
#[test]
fn a_full_send_buffer_with_everything_sent_counts_as_a_stall() {
    let seen = run(false, 3);
    let stalls: Vec<u64> = seen.iter().map(|s| s.0).collect();
    assert!(!stalls.is_empty());
    assert_eq!(stalls.first(), Some(&0), "{stalls:?}");
    assert_eq!(stalls.last(), Some(&2), "two buffers filled before the third round's decisions: {stalls:?}");
}

/// The subflows' ssthresh reaches a scheduler that reads it (Reno before a
/// loss: none, `u64::MAX`), and is not fetched for one that does not.
#[test]
fn ssthresh_is_in_the_view_of_a_scheduler_that_reads_it() {
    assert!(run(true, 1).iter().all(|s| s.1 == [u64::MAX]));
    assert!(run(false, 1).iter().all(|s| s.1 == [0]));
}
