//! The running emulator: a scenario topology's paths between a client
//! namespace (one TUN device per path) and a server namespace (one TUN
//! device), one thread per direction.
//!
//! Each path's forward links (client to server) run on the forward thread,
//! its reverse links on the reverse thread; a link shared by several paths
//! (the hybrid-access core `L3`) is one link on its thread, as in the
//! simulator. A thread reads every packet waiting on its input devices,
//! stamps it with the clock, moves what is due, writes what leaves, and
//! sleeps until the next exit (at least 50 us, to write several segments
//! at once) or the next packet (`ppoll` with nanosecond timeout and 1 us
//! timer slack). Times in outage schedules count from
//! [`Emulator::start`].

use std::io::{ErrorKind, IoSlice};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use braid_proto::Instant;
use braid_sim::loss::LossSpec;
use braid_sim::{LinkStats, Topology};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::engine::{Delivery, Engine, Route};
use crate::link::Link;
use crate::packet::{segment_headers, Addr, MAX_HEADERS, VNET_HDR_LEN};
use crate::plan;
use crate::pool::Pool;
use crate::tun::Tun;

/// What to emulate and where.
#[derive(Clone, Debug)]
pub struct Config {
    pub topology: Topology,
    /// Seeds every link's random stream (loss, RED).
    pub seed: u64,
    /// Loss models replacing the Bernoulli `loss` of the named links.
    pub loss: Vec<(String, LossSpec)>,
    pub client_ns: String,
    pub server_ns: String,
    /// Run the two threads under `SCHED_FIFO` so that other work on a busy
    /// machine cannot delay packets.
    pub realtime: bool,
}

/// Links a route may cross: a segment counts its hop in a byte.
pub const MAX_ROUTE_LINKS: usize = u8::MAX as usize + 1;

impl Config {
    /// Whether the emulator can run this: checked before any device or
    /// namespace is touched, so `braid emulate --describe` reports the same
    /// errors without root.
    pub fn check(&self) -> Result<(), String> {
        let t = &self.topology;
        if t.paths.is_empty() || t.paths.len() > plan::MAX_PATHS {
            return Err(format!(
                "the emulator needs 1 to {} paths, the topology has {}",
                plan::MAX_PATHS,
                t.paths.len()
            ));
        }
        if self.client_ns == self.server_ns {
            return Err(format!(
                "the client and the server need namespaces of their own (both are {:?}): between them, traffic \
                 would not cross the emulator",
                self.client_ns
            ));
        }
        if let Some(p) = t.paths.iter().find(|p| p.forward.len().max(p.reverse.len()) > MAX_ROUTE_LINKS) {
            return Err(format!(
                "path {:?} crosses {} links one way; the emulator follows at most {MAX_ROUTE_LINKS}",
                p.name,
                p.forward.len().max(p.reverse.len())
            ));
        }
        for (name, spec) in &self.loss {
            if !t.links.iter().any(|l| &l.name == name) {
                let known: Vec<&str> = t.links.iter().map(|l| l.name.as_str()).collect();
                return Err(format!("loss model for link {name:?}: no such link (links: {known:?})"));
            }
            spec.validate().map_err(|e| format!("loss model for link {name:?}: {e}"))?;
        }
        if let Some(l) = t.paths.iter().flat_map(|p| &p.forward).find(|l| t.paths.iter().any(|p| p.reverse.contains(l)))
        {
            return Err(format!(
                "link {:?} carries both directions; the emulator runs each direction on its own thread",
                t.links[*l].name
            ));
        }
        Ok(())
    }
}

/// Counters of one link at the end of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkReport {
    pub name: String,
    pub stats: LinkStats,
}

/// What the emulator saw, per link and overall.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    pub links: Vec<LinkReport>,
    /// Packets read from the devices (a super-packet counts once).
    pub read: u64,
    /// Packets the emulator could not parse (dropped).
    pub malformed: u64,
    /// Return-direction packets to an address no path has (dropped).
    pub unroutable: u64,
    /// Packets a device refused to take (dropped).
    pub write_errors: u64,
    /// Most packet buffers allocated at once, per direction summed.
    pub buffers: usize,
    /// Why forwarding stopped by itself: a device failed (e.g. its
    /// namespace was deleted while the emulator ran).
    pub error: Option<String>,
    /// Why the threads run without real-time priority although asked to
    /// (delays then depend on what else the machine runs).
    pub realtime_refused: Option<String>,
}

impl Report {
    pub fn link(&self, name: &str) -> Option<&LinkStats> {
        self.links.iter().find(|l| l.name == name).map(|l| &l.stats)
    }
}

/// A running emulator; stops when [`Emulator::stop`] is called or dropped.
pub struct Emulator {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Report>>,
    /// Dropped after the threads are joined (and their devices closed).
    _restore: plan::Restore,
}

/// Where a direction's input packets go.
enum Input {
    /// Every packet from this device takes this route.
    Route(usize),
    /// The route is the path whose client address the packet is sent to.
    ByDestination,
}

struct Direction {
    engine: Engine,
    inputs: Vec<(Tun, Input)>,
    outputs: Vec<Tun>,
    destinations: Vec<(Addr, usize)>,
    epoch: std::time::Instant,
    stop: Arc<AtomicBool>,
    realtime: bool,
    report: Report,
}

/// Packets read from one device before the thread looks at the others.
const READ_BATCH: usize = 64;
/// Longest sleep, so a stop request is seen promptly.
const MAX_SLEEP_NS: u64 = 20_000_000;
/// Shortest sleep: segments that leave a link within this much of each
/// other are written together (one system call for up to 44 segments
/// instead of one each), at the cost of delivering some up to this late.
/// At 1 Gbit/s it gathers four full segments per write.
const MIN_SLEEP_NS: u64 = 50_000;

impl Emulator {
    /// Builds the links, creates and configures the devices (see
    /// [`crate::plan`]) and starts forwarding.
    pub fn start(cfg: &Config) -> Result<Emulator, String> {
        cfg.check()?;
        let t = &cfg.topology;
        let forward: Vec<Vec<usize>> = t.paths.iter().map(|p| p.forward.clone()).collect();
        let reverse: Vec<Vec<usize>> = t.paths.iter().map(|p| p.reverse.clone()).collect();
        let paths = t.paths.len();
        let mut restore = plan::Restore::default();
        restore.prepare(&cfg.server_ns)?;
        restore.prepare(&cfg.client_ns)?;
        let server = Tun::create(plan::SERVER_DEVICE, &cfg.server_ns)?;
        let clients =
            (0..paths).map(|i| Tun::create(&plan::client_device(i), &cfg.client_ns)).collect::<Result<Vec<_>, _>>()?;
        plan::configure(&cfg.client_ns, &cfg.server_ns, paths, &mut restore)?;
        let server_in = Tun::try_clone(&server)?;
        let clients_out = clients.iter().map(Tun::try_clone).collect::<Result<Vec<_>, _>>()?;

        let stop = Arc::new(AtomicBool::new(false));
        let epoch = std::time::Instant::now();
        let direction = |routes: &[Vec<usize>], egress: &dyn Fn(usize) -> usize| Direction {
            engine: engine(cfg, routes, egress),
            inputs: vec![],
            outputs: vec![],
            destinations: (0..paths).map(|i| (Addr::V4(plan::client_addr(i)), i)).collect(),
            epoch,
            stop: stop.clone(),
            realtime: cfg.realtime,
            report: Report::default(),
        };
        let mut fwd = direction(&forward, &|_| 0);
        fwd.inputs = clients.into_iter().enumerate().map(|(i, t)| (t, Input::Route(i))).collect();
        fwd.outputs = vec![server];
        let mut rev = direction(&reverse, &|i| i);
        rev.inputs = vec![(server_in, Input::ByDestination)];
        rev.outputs = clients_out;
        let threads = [("emu-forward", fwd), ("emu-reverse", rev)]
            .into_iter()
            .map(|(name, d)| {
                let stop = stop.clone();
                std::thread::Builder::new()
                    .name(name.into())
                    .spawn(move || guarded(name, &stop, || d.run()))
                    .map_err(|e| format!("cannot start thread {name}: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Emulator { stop, threads, _restore: restore })
    }

    /// A flag that stops the emulator when set (e.g. from a signal handler's loop).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Stops forwarding and returns the counters.
    pub fn stop(mut self) -> Report {
        self.finish()
    }

    fn finish(&mut self) -> Report {
        self.stop.store(true, Ordering::Relaxed);
        let mut total = Report::default();
        for t in self.threads.drain(..) {
            let r = t.join().unwrap_or_default();
            total.links.extend(r.links);
            total.read += r.read;
            total.malformed += r.malformed;
            total.unroutable += r.unroutable;
            total.write_errors += r.write_errors;
            total.buffers += r.buffers;
            total.error = total.error.or(r.error);
            total.realtime_refused = total.realtime_refused.or(r.realtime_refused);
        }
        total
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Runs one direction's loop. A direction that panicked would drop its
/// traffic unseen: the panic stops both directions and becomes the
/// report's error.
fn guarded(name: &str, stop: &AtomicBool, run: impl FnOnce() -> Report) -> Report {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|p| {
        stop.store(true, Ordering::Relaxed);
        let why = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Report { error: Some(format!("thread {name} failed: {why}")), ..Report::default() }
    })
}

/// The links `routes` cross (in topology order) and the routes over them.
fn engine(cfg: &Config, routes: &[Vec<usize>], egress: &dyn Fn(usize) -> usize) -> Engine {
    let mut used: Vec<usize> = routes.iter().flatten().copied().collect();
    used.sort_unstable();
    used.dedup();
    let links = used
        .iter()
        .map(|&g| {
            let spec = cfg.topology.links[g].clone();
            let loss = cfg.loss.iter().find(|(n, _)| *n == spec.name).map(|(_, s)| *s);
            let rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ (g as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            Link::new(spec, loss, rng)
        })
        .collect();
    let routes = routes
        .iter()
        .enumerate()
        .map(|(i, r)| Route {
            links: r.iter().map(|g| used.binary_search(g).expect("link is used")).collect(),
            egress: egress(i),
        })
        .collect();
    Engine::new(links, routes)
}

impl Direction {
    fn now(&self) -> Instant {
        Instant::from_nanos(self.epoch.elapsed().as_nanos() as u64)
    }

    fn run(mut self) -> Report {
        // SAFETY: prctl and sched_setscheduler on the calling thread only.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
            if self.realtime {
                let p = libc::sched_param { sched_priority: 10 };
                if libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) != 0 {
                    let e = std::io::Error::last_os_error();
                    self.report.realtime_refused = Some(e.to_string());
                }
            }
        }
        let mut headers = [0u8; MAX_HEADERS];
        let mut fds: Vec<libc::pollfd> =
            self.inputs.iter().map(|(t, _)| libc::pollfd { fd: t.fd(), events: libc::POLLIN, revents: 0 }).collect();
        while !self.stop.load(Ordering::Relaxed) {
            let now = self.now();
            let (outputs, report) = (&self.outputs, &mut self.report);
            self.engine.poll(now, &mut |pool, d| {
                if write(&outputs[d.egress], pool, d, &mut headers).is_err() {
                    report.write_errors += 1;
                }
            });
            if self.read_all() > 0 {
                continue;
            }
            let now = self.now();
            let wait = match self.engine.next_due() {
                Some(t) if t <= now => continue,
                Some(t) => (t - now).as_nanos().clamp(MIN_SLEEP_NS, MAX_SLEEP_NS),
                None => MAX_SLEEP_NS,
            };
            let ts = libc::timespec { tv_sec: (wait / 1_000_000_000) as _, tv_nsec: (wait % 1_000_000_000) as _ };
            // SAFETY: fds is a valid pollfd array for its length.
            unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as _, &ts, std::ptr::null()) };
        }
        let mut report = std::mem::take(&mut self.report);
        report.links =
            self.engine.links().iter().map(|l| LinkReport { name: l.spec.name.clone(), stats: l.stats }).collect();
        report.buffers = self.engine.pool().allocated();
        report
    }

    /// Reads what waits on every input (a batch each); returns how many.
    fn read_all(&mut self) -> usize {
        let mut total = 0;
        for k in 0..self.inputs.len() {
            for _ in 0..READ_BATCH {
                let (id, buf) = self.engine.pool().reserve();
                let n = match self.inputs[k].0.read(buf) {
                    Ok(n) => n,
                    Err(e) => {
                        self.engine.pool().discard(id);
                        if e.kind() != ErrorKind::WouldBlock && e.kind() != ErrorKind::Interrupted {
                            // A failed device would wake ppoll at once,
                            // forever: stop both directions instead.
                            let name = self.inputs[k].0.name();
                            self.report.error = Some(format!("reading TUN device {name:?} failed: {e}"));
                            self.stop.store(true, Ordering::Relaxed);
                        }
                        break;
                    }
                };
                let now = self.now();
                self.report.read += 1;
                let Ok(id) = self.engine.pool().commit(id, n) else {
                    self.report.malformed += 1;
                    continue;
                };
                let route = match self.inputs[k].1 {
                    Input::Route(r) => Some(r),
                    Input::ByDestination => {
                        let dst = self.engine.pool().meta(id).dst;
                        self.destinations.iter().find(|(a, _)| *a == dst).map(|&(_, r)| r)
                    }
                };
                match route {
                    Some(r) => self.engine.ingress(now, r, id),
                    None => {
                        self.report.unroutable += 1;
                        self.engine.pool().release(id);
                    }
                }
                total += 1;
            }
        }
        total
    }
}

/// Writes a delivery: the packet as read when it goes on whole, otherwise
/// its segments' rebuilt headers followed by their payload.
fn write(tun: &Tun, pool: &Pool, d: Delivery, headers: &mut [u8; MAX_HEADERS]) -> std::io::Result<usize> {
    let bytes = pool.bytes(d.buf);
    let meta = pool.meta(d.buf);
    if d.first == 0 && d.count == meta.segments {
        return tun.write(&[IoSlice::new(bytes)]);
    }
    let (n, (start, end)) = segment_headers(bytes, meta, d.first, d.count, headers);
    let payload = VNET_HDR_LEN + usize::from(meta.hdr_len);
    tun.write(&[IoSlice::new(&headers[..n]), IoSlice::new(&bytes[payload + start..payload + end])])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_direction_that_panics_stops_both_and_reports_why() {
        let stop = AtomicBool::new(false);
        // A formatted message (a `String` payload) and a literal one (`&str`).
        let queue = std::hint::black_box(3);
        let report = guarded("emu-forward", &stop, || panic!("queue {queue} broke"));
        assert!(stop.load(Ordering::Relaxed), "the other direction must stop too");
        assert_eq!(report.error.as_deref(), Some("thread emu-forward failed: queue 3 broke"));
        let stop = AtomicBool::new(false);
        let report = guarded("emu-reverse", &stop, || panic!("plain"));
        assert_eq!(report.error.as_deref(), Some("thread emu-reverse failed: plain"));
        // A direction that ends normally keeps its counters and stops nothing.
        let stop = AtomicBool::new(false);
        let report = guarded("emu-forward", &stop, || Report { read: 7, ..Report::default() });
        assert_eq!((report.read, report.error, stop.load(Ordering::Relaxed)), (7, None, false));
    }
}
