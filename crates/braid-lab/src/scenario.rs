//! Scenario files: TOML, validated into a [`Scenario`] with errors that name
//! the file, the key, what is wrong and what is allowed.
//!
//! Topology kinds:
//! - `hybrid-access` (seed 004 §3.1): `[[topology.link]]` access links from
//!   host A to router R, one core link (`core_rate`, default 2 Gbit/s) to B.
//!   A flow's `paths` lists access-link names, one subflow each.
//! - `dumbbell`: one `[topology.bottleneck]` shared by every subflow; a flow
//!   asks for `subflows = N` and may add `extra_rtt` on its private access.
//! - `graph`: named links between named nodes and named paths over them
//!   ([`net`]); flows list `paths`.
//! - `fattree` and `bcube`: data-centre fabrics from their parameters;
//!   flows name hosts (`from`, `to`) or a traffic matrix, and their
//!   subflows are routed by ECMP ([`braid_sim::topology::ecmp`]).
//!
//! A `[[flow]]` table may stand for many flows (`count`, a traffic
//! `matrix`, Poisson `arrival_rate`, see [`flows`]); `[[cross]]` tables add
//! non-responsive on/off traffic. Validation happens once, into a plan;
//! the random parts (matrices, arrivals, sizes, ECMP hashing) are then
//! drawn from the seed, and drawn again for another seed or a longer run
//! ([`Scenario::redrawn`]).
//!
//! The schema is documented with examples in `docs/scenarios.md`.

mod flows;
mod net;

use std::ops::Range;
use std::sync::Arc;

use braid_proto::{Duration, Instant};
use braid_sim::{CrossTraffic, FlowSpec, Source, Topology};
use serde::Deserialize;

use crate::units::{parse_duration, parse_positive_duration};

/// The built-in default: seed 004's hybrid access with two 100 Mbit/s paths.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../scenarios/hybrid-access.toml");
pub const DEFAULT_SCENARIO_NAME: &str = "scenarios/hybrid-access.toml (built in)";

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{file}: cannot read the file: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    #[error("{file}: key `{key}`: {message}")]
    Invalid { file: String, key: String, message: String },
}

/// A validated scenario, ready to simulate.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub duration: Duration,
    pub sample_interval: Duration,
    pub topology: Topology,
    pub flows: Vec<FlowSpec>,
    /// Path names per flow, parallel to `flows[i].subflows`.
    pub flow_paths: Vec<Vec<String>>,
    /// One group per `[[flow]]` table: the flows it stands for.
    pub groups: Vec<FlowGroup>,
    /// Non-responsive cross traffic (`[[cross]]`).
    pub cross: Vec<CrossTraffic>,
    /// The file the scenario came from, as errors and warnings name it.
    pub file: String,
    /// The validated plan the flows were drawn from, to draw them again
    /// for another seed.
    plan: Arc<flows::Plan>,
}

/// The flows one `[[flow]]` table stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowGroup {
    /// The table's `name` (`flow<i>` by default).
    pub name: String,
    /// Indices into `Scenario::flows`.
    pub flows: Range<usize>,
}

// ---- raw file shape ----

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
struct RawScenario {
    name: Option<String>,
    description: Option<String>,
    seed: Option<u64>,
    duration: Option<String>,
    sample_interval: Option<String>,
    topology: net::RawTopology,
    #[serde(default)]
    flow: Vec<flows::RawFlow>,
    #[serde(default)]
    cross: Vec<flows::RawCross>,
}

// ---- validation ----

struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn invalid(&self, key: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError::Invalid { file: self.file.to_string(), key: key.into(), message: message.into() }
    }
    fn field<T>(&self, key: &str, r: Result<T, String>) -> Result<T, ScenarioError> {
        r.map_err(|m| self.invalid(key, m))
    }
    fn within(
        &self,
        key: &str,
        v: u32,
        range: std::ops::RangeInclusive<u32>,
        allowed: &str,
    ) -> Result<u32, ScenarioError> {
        if range.contains(&v) {
            Ok(v)
        } else {
            Err(self.invalid(key, format!("{v} is out of range: allowed {allowed}")))
        }
    }
}

/// The largest scenario or campaign file read: far more than any needs
/// (tables stand for many flows), so that a path such as /dev/zero fails
/// at once rather than fills memory.
pub(crate) const MAX_FILE_BYTES: u64 = 16 << 20;

/// Reads a text file of at most `limit` bytes; a larger one is an error.
pub(crate) fn read_text(path: &std::path::Path, limit: u64) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?.take(limit + 1).read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        let shown = if limit >= 1 << 30 { format!("{} GiB", limit >> 30) } else { format!("{} MiB", limit >> 20) };
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("larger than {shown}")));
    }
    Ok(text)
}

/// Reads and validates a scenario file.
pub fn load(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = read_text(path, MAX_FILE_BYTES).map_err(|source| ScenarioError::Io { file: file.clone(), source })?;
    parse(&text, &file)
}

/// Validates scenario `text`; `file` names it in errors (and trace files
/// are looked up next to it).
pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    parse_with(text, file, |e| in_toml_terms(&e.to_string()))
}

/// A TOML error message in the words of TOML files: serde calls an array
/// a sequence and a table a map, and names Rust's number types.
pub(crate) fn in_toml_terms(message: &str) -> String {
    let whole = ["u8", "u16", "u32", "u64", "usize"].map(|t| (t, "a whole number, 0 or more, without quotes"));
    let words = [("a sequence", "an array"), ("a map", "a table"), ("f64", "a number, without quotes")];
    (words.iter().chain(&whole)).fold(message.trim_end().to_string(), |m, (serde, toml)| {
        m.replace(&format!("expected {serde}"), &format!("expected {toml}"))
    })
}

/// Deserialises TOML `text`, `message` saying what went wrong. A value of
/// the wrong type, or a key that is not known, is named by its key
/// (`flow[0].subflows`), as the checks after deserialising name theirs.
pub(crate) fn from_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    message: impl Fn(&toml::de::Error) -> String,
) -> Result<T, String> {
    serde_path_to_error::deserialize(toml::Deserializer::new(text)).map_err(|e| match e.path().to_string() {
        path if path == "." || path == "?" => message(e.inner()),
        path => format!("key `{path}`: {}", message(e.inner())),
    })
}

/// Parses a scenario text the user did not write (a campaign's run: base,
/// variant and axis values put together). A syntax error quotes the line
/// it is on but gives no line number, which would point into text the user
/// never saw.
pub fn parse_generated(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    parse_with(text, file, |e| {
        let line = e.span().and_then(|s| text.get(..s.start)).map(|before| before.matches('\n').count());
        match line.and_then(|n| text.lines().nth(n)) {
            Some(line) => format!("`{}`: {}", line.trim(), in_toml_terms(e.message())),
            None => in_toml_terms(e.message()),
        }
    })
}

fn parse_with(text: &str, file: &str, syntax: impl Fn(&toml::de::Error) -> String) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario =
        from_toml(text, syntax).map_err(|message| ScenarioError::Syntax { file: file.to_string(), message })?;
    let cx = Ctx { file };
    let duration = match &raw.duration {
        Some(d) => cx.field("duration", parse_positive_duration(d))?,
        None => Duration::from_secs(30),
    };
    let sample_interval = match &raw.sample_interval {
        Some(d) => cx.field("sample_interval", parse_duration(d))?,
        None => Duration::from_millis(100),
    };
    if sample_interval < Duration::from_millis(1) {
        return Err(cx.invalid("sample_interval", "must be at least 1ms"));
    }
    if raw.flow.is_empty() {
        return Err(cx.invalid("flow", "a scenario needs at least one [[flow]]"));
    }
    // Names label plots and CSV columns, which quote any character (the
    // emulator's description, read as words, refuses names with spaces).
    let names = net::names_given(&raw.topology).into_iter().chain(flows::names_given(&raw.flow, &raw.cross));
    if let Some((key, _)) = names.into_iter().find(|(_, n)| n.is_empty()) {
        return Err(cx.invalid(key, "a name cannot be empty"));
    }
    let net = net::build(&cx, &raw)?;
    let plan = flows::plan(&cx, &raw, net, duration, sample_interval)?;
    Ok(flows::Plan::expand(&Arc::new(plan), raw.seed.unwrap_or(1), duration))
}

impl Scenario {
    /// Refuses a run of `duration` that would make too many flows to draw
    /// (Poisson arrivals to the end of a long run); parsing checked the
    /// scenario's own `duration`.
    pub fn check_duration(&self, duration: Duration) -> Result<(), ScenarioError> {
        self.plan.check_flows(&Ctx { file: &self.file }, duration)
    }

    /// The same scenario for a run with `seed` that lasts `duration`, or
    /// `None` when it would be the same. Its random traffic (matrices,
    /// Poisson arrivals, random sizes, ECMP routes) is drawn again for
    /// another seed; and for a run longer than the scenario's `duration`,
    /// Poisson arrivals that last to the run's end (no `arrival_until`)
    /// are drawn again up to the new end. A shorter run keeps the
    /// scenario's flows: those that start after its end never do. A run so
    /// long that it would draw too many flows is refused, as
    /// [`check_duration`](Scenario::check_duration) refuses it.
    pub fn redrawn(&self, seed: u64, duration: Duration) -> Result<Option<Scenario>, ScenarioError> {
        let reseed = seed != self.seed && self.plan.depends_on_seed();
        let longer = duration > self.duration && self.plan.arrivals_follow_the_end();
        if !reseed && !longer {
            return Ok(None);
        }
        if longer {
            self.check_duration(duration)?;
        }
        let mut s = flows::Plan::expand(&self.plan, seed, self.duration.max(duration));
        // Settings a caller may have changed since parsing.
        (s.name, s.description, s.sample_interval) =
            (self.name.clone(), self.description.clone(), self.sample_interval);
        if !longer {
            s.duration = self.duration;
        }
        Ok(Some(s))
    }

    /// Inputs that are valid but probably not what the author meant, for a
    /// run of `duration` (the scenario's, or the command line's): each names
    /// the file and the key, as errors do.
    pub fn warnings(&self, duration: Duration) -> Vec<String> {
        let end = Instant::ZERO + duration;
        let mut out: Vec<String> =
            self.plan.topology_warnings().iter().map(|w| format!("{}: {w}", self.file)).collect();
        for (i, g) in self.groups.iter().enumerate() {
            let key = |k: &str| format!("{}: key `flow[{i}].{k}`", self.file);
            let flows = &self.flows[g.flows.clone()];
            if flows.is_empty() {
                out.push(format!(
                    "{}: the table makes no flow (for seed {}: no arrival falls between its start and \
                     `arrival_until` or the run's end)",
                    key("arrival_rate"),
                    self.seed
                ));
            }
            let late = flows.iter().filter(|f| f.start >= end).count();
            if late > 0 && flows.len() == 1 {
                out.push(format!(
                    "{}: the flow starts at {} s, when the run ({} s) is over; it sends nothing",
                    key("start"),
                    secs(flows[0].start.as_nanos()),
                    secs(duration.as_nanos())
                ));
                continue;
            }
            if late > 0 {
                out.push(format!(
                    "{}: {late} of the table's {} flows start when the run ({} s) is over; they send nothing",
                    key("start"),
                    flows.len(),
                    secs(duration.as_nanos())
                ));
            }
            if let Some(f) = flows.first() {
                out.extend(self.mtu_warnings(f).into_iter().map(|w| format!("{}: {w}", key("paths"))));
                if f.subflows.iter().all(|&(_, backup)| backup) {
                    out.push(format!(
                        "{}: every path is a backup; backups carry data only while no regular subflow can, so \
                         with none regular they all carry it, as regular ones would (as Linux's scheduler does)",
                        key("backup")
                    ));
                }
            }
            if let Some(f) = flows.iter().find(|f| f.start < end) {
                if let Source::ConstantRate { bits_per_sec, message } = f.source {
                    if f.source.message_time(f.start, 1).is_none_or(|second| second > end) {
                        out.push(format!(
                            "{}: one message of {message} bytes takes longer than the run to write at app_rate {} bit/s; \
                             the application writes a single message, at its start",
                            key("app_message"),
                            bits_per_sec
                        ));
                    }
                }
            }
        }
        for l in &self.topology.links {
            let Some(mean) = l.trace.as_ref().map(|t| t.mean_rate_bps()) else { continue };
            if (l.rate_bps as f64 - mean).abs() > 0.1 * mean {
                out.push(format!(
                    "{}: link {:?}: its capacity follows its trace (mean {mean:.0} bit/s); `rate` ({} bit/s) only \
                     sizes BDP queues and the report's utilisation (leave it out to use the trace's mean)",
                    self.file, l.name, l.rate_bps
                ));
            }
        }
        for (i, c) in self.cross.iter().enumerate() {
            if c.start >= end {
                out.push(format!(
                    "{}: key `cross[{i}].start`: the source starts when the run ({} s) is over; it sends nothing",
                    self.file,
                    secs(duration.as_nanos())
                ));
            }
            let forward = self.topology.paths[c.path].forward.iter().map(|&l| &self.topology.links[l]);
            if let Some((mtu, link)) = smallest_mtu(forward) {
                if c.packet_bytes > mtu {
                    out.push(format!(
                        "{}: key `cross[{i}].packet`: link {link:?} carries at most {mtu} bytes; every {}-byte \
                         packet of the source is dropped there",
                        self.file, c.packet_bytes
                    ));
                }
            }
            let Some((on, off)) = c.on_off else { continue };
            // An on period sends whole packets, at least one: short periods
            // or large packets send more than `rate` x on / (on + off).
            let asked = c.bits_per_sec as f64 * on.as_secs_f64() / (on + off).as_secs_f64();
            let sent = c.mean_bits_per_sec();
            if sent > 1.25 * asked {
                let packet_ms = f64::from(c.packet_bytes) * 8e3 / c.bits_per_sec.max(1) as f64;
                out.push(format!(
                    "{}: key `cross[{i}].on`: each on period of {:.3} ms sends whole {}-byte packets, at least one \
                     ({packet_ms:.3} ms each at `rate`): {sent:.0} bit/s on average, {:.1} times the {asked:.0} \
                     bit/s of `rate` x on / (on + off); make `on` a few packets long or `packet` smaller",
                    self.file,
                    on.as_secs_f64() * 1e3,
                    c.packet_bytes,
                    sent / asked
                ));
            }
        }
        out
    }

    /// What the links' MTUs keep from flow `f`, path by path: its opening
    /// packet, or data packets of the size it falls back to (its
    /// `mss_floor`, or its `mss` without one).
    fn mtu_warnings(&self, f: &braid_sim::FlowSpec) -> Vec<String> {
        let mut out = Vec::new();
        for &(p, _) in &f.subflows {
            let path = &self.topology.paths[p];
            let links = path.forward.iter().chain(&path.reverse).map(|&l| &self.topology.links[l]);
            let Some((mtu, link)) = smallest_mtu(links) else { continue };
            let (opening, least) = (f.opening_packet(), f.config.mss_floor.unwrap_or(f.config.mss));
            if opening > mtu {
                out.push(format!(
                    "path {:?}: link {link:?} carries at most {mtu} bytes, less than the {opening} of an opening \
                     packet (the wire format pads it to {} bytes, as QUIC pads its Initial): no subflow opens there",
                    path.name,
                    braid_proto::wire::HELLO_LEN
                ));
            } else if let Some(over) = f.largest_data_packet(least).checked_sub(mtu).filter(|&o| o > 0) {
                out.push(format!(
                    "path {:?}: link {link:?} carries at most {mtu} bytes, and a data packet of {least} payload bytes \
                     takes up to {}: no data crosses there; set `mss_floor` (black-hole detection) to at most {}",
                    path.name,
                    mtu + over,
                    least - over
                ));
            }
        }
        out
    }
}

/// The smallest MTU among `links`, and the link that has it.
fn smallest_mtu<'a>(links: impl Iterator<Item = &'a braid_sim::LinkSpec>) -> Option<(u32, &'a String)> {
    links.filter_map(|l| Some((l.mtu?, &l.name))).min()
}

/// Whole nanoseconds as seconds, converted once (so "4.8s" prints as 4.8).
pub fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}
