//! Subflow joins: the first subflow opens the connection, the others join
//! once it is established.

use super::Connection;
use crate::subflow::Lifecycle;

impl Connection {
    /// With data to deliver, the first subflow opened joins; once one
    /// subflow is established, every other unused one does. "Data to
    /// deliver" includes data already sent: if the subflows that carried it
    /// die, the others must join to take it over.
    pub(super) fn start_joins(&mut self) {
        if self.unjoined == 0 || self.send.una() == self.send.end() {
            return;
        }
        let connected = self.subflows.iter().any(|s| s.is_established());
        let first = self.subflows.iter().position(|s| s.is_open());
        // Should the first subflow's join time out (its path is down), the
        // others try too rather than wait on a dead path.
        let first_failed = first.is_some_and(|i| self.subflows[i].potentially_failed());
        for (i, sf) in self.subflows.iter_mut().enumerate() {
            let allowed = connected || first_failed || Some(i) == first;
            if sf.state == Lifecycle::Joining && sf.unused() && !sf.probe_pending && allowed {
                sf.probe_pending = true;
                self.unjoined = self.unjoined.saturating_sub(1);
            }
        }
    }
}
