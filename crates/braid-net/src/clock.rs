//! The wall clock as the core's [`Instant`]: nanoseconds since the clock
//! was made, from the monotonic clock (never steps back).

use braid_proto::Instant;

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: std::time::Instant,
}

impl Default for Clock {
    fn default() -> Self {
        Clock { origin: std::time::Instant::now() }
    }
}

impl Clock {
    pub fn now(&self) -> Instant {
        Instant::from_nanos(self.origin.elapsed().as_nanos() as u64)
    }

    /// How long until `at` (zero if it has passed).
    pub fn until(&self, at: Instant) -> std::time::Duration {
        std::time::Duration::from_nanos(at.saturating_since(self.now()).as_nanos())
    }
}
