//! Giving up: a connection with data (or its FIN) to deliver, or a client
//! whose opening is unanswered, and no usable subflow for
//! `Config::failure_timeout` fails, reports why, and sends nothing more.
//!
//! Linux gives up on a TCP connection after `tcp_retries2` backed-off
//! retransmissions (about 15 minutes with the default 15); MPTCP v0.96 ends
//! the connection when its last subflow dies. Braid counts from the moment
//! no subflow is usable (every open subflow's join or data timed out since
//! its last acknowledgement) while written data is unacknowledged, so a path
//! that comes back in time is used again, and one that does not ends the
//! connection after a bounded, configurable wait.

use super::timer::Timer;
use super::{Connection, Event, Side};
use crate::subflow::Lifecycle;
use crate::time::{Duration, Instant};

/// Why a connection failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionError {
    /// No subflow was usable for this long while data waited.
    AllPathsDown { for_at_least: Duration },
    /// A client's opening went unanswered this long on every path.
    Unanswered { for_at_least: Duration },
    /// This side reset the connection.
    Reset { code: u8 },
    /// The peer reset the connection.
    PeerReset { code: u8 },
}

impl std::fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectionError::AllPathsDown { for_at_least } => {
                write!(f, "no usable path for {:.3} s with data waiting", for_at_least.as_secs_f64())
            }
            ConnectionError::Unanswered { for_at_least } => {
                write!(f, "no answer to the opening for {:.3} s", for_at_least.as_secs_f64())
            }
            ConnectionError::Reset { code } => write!(f, "reset here (code {code})"),
            ConnectionError::PeerReset { code } => write!(f, "reset by the peer (code {code})"),
        }
    }
}

impl std::error::Error for ConnectionError {}

impl Connection {
    /// Starts, stops or fires the failure timer after anything that may
    /// have changed whether a subflow is usable or data is waiting.
    #[inline]
    pub(super) fn check_liveness(&mut self, now: Instant) {
        if self.error.is_some() {
            return;
        }
        // Data, or the FIN that ends it, waiting for an acknowledgement; or
        // a client's opening, unanswered (Linux's connect gives up after
        // `tcp_syn_retries`): a client that wrote nothing yet must not
        // wait forever for a server that is not there.
        let client = self.session.side == Side::Client;
        let waiting =
            self.send.una() < self.send.end() || self.fin.local.is_some() && !self.fin.local_acked || self.opening();
        // A client's joining subflow is still trying; a server's half-open
        // one waits on a client that may have given it up (its slot opened
        // by a Hello never expires), so it keeps no hope alive.
        let stuck = waiting && !self.subflows.iter().any(|s| s.usable() || client && s.state == Lifecycle::Joining);
        match stuck {
            false => self.timers.stop(Timer::Failure),
            true => self.run_failure_timer(now),
        }
    }

    /// A client whose opening has no answer yet.
    fn opening(&self) -> bool {
        self.session.side == Side::Client && self.session.remote_key().is_none()
    }

    /// With no usable subflow and something waiting: starts the timer, or
    /// fails the connection once it is due. Out of line: rare, and keeping
    /// it out keeps the test above small enough to inline on every packet.
    #[inline(never)]
    fn run_failure_timer(&mut self, now: Instant) {
        match self.timers.get(Timer::Failure) {
            None => self.timers.set(Timer::Failure, now + self.config.failure_timeout),
            Some(t) if t <= now => {
                let for_at_least = self.config.failure_timeout;
                let e = match self.opening() {
                    true => ConnectionError::Unanswered { for_at_least },
                    false => ConnectionError::AllPathsDown { for_at_least },
                };
                self.error = Some(e);
                self.events.push_back(Event::Failed(e));
            }
            Some(_) => {}
        }
    }
}
