//! Scenario files: TOML, validated into a [`Scenario`] with errors that name
//! the file, the key, what is wrong and what is allowed.
//!
//! Two topology kinds exist today:
//! - `hybrid-access` (seed 004 §3.1): `[[topology.link]]` access links from
//!   host A to router R, one core link (`core_rate`, default 2 Gbit/s) to B.
//!   A flow's `paths` lists access-link names, one subflow each.
//! - `dumbbell`: one `[topology.bottleneck]` shared by every subflow; a flow
//!   asks for `subflows = N` and may add `extra_rtt` on its private access.
//!
//! The schema is documented with examples in `docs/scenarios.md`.

use std::collections::HashMap;
use std::path::Path;

use braid_proto::{cc, sched, Config, Duration, Instant, SendAutotune};
use braid_sim::topology::CORE_LINK;
use braid_sim::{FlowSpec, LinkParams, QueueLimit, Red, Source, Topology};
use serde::Deserialize;

use crate::units::{parse_duration, parse_loss, parse_queue, parse_rate, parse_size, QueueSize};

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
    /// The file the scenario came from, as errors and warnings name it.
    pub file: String,
}

// ---- raw file shape ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Option<String>,
    description: Option<String>,
    seed: Option<u64>,
    duration: Option<String>,
    sample_interval: Option<String>,
    topology: RawTopology,
    #[serde(default)]
    flow: Vec<RawFlow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    kind: String,
    core_rate: Option<String>,
    #[serde(default)]
    link: Vec<RawLink>,
    bottleneck: Option<RawLink>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    name: Option<String>,
    rate: String,
    rtt: Option<String>,
    loss: Option<toml::Value>,
    queue: Option<String>,
    aqm: Option<String>,
    #[serde(default)]
    down: Vec<RawOutage>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutage {
    from: String,
    to: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    name: Option<String>,
    cc: Option<String>,
    scheduler: Option<String>,
    scheduler_settings: Option<RawSchedSettings>,
    paths: Option<Vec<String>>,
    #[serde(default)]
    backup: Vec<String>,
    subflows: Option<u32>,
    extra_rtt: Option<String>,
    start: Option<String>,
    size: Option<String>,
    app_rate: Option<String>,
    app_message: Option<String>,
    send_buffer: Option<String>,
    recv_buffer: Option<String>,
    verify_payload: Option<bool>,
    wire: Option<bool>,
    min_rto: Option<String>,
    ack_every: Option<u32>,
    max_ack_delay: Option<String>,
    initial_window: Option<u32>,
    mss: Option<u32>,
    opportunistic: Option<bool>,
    nodelay: Option<bool>,
    failure_timeout: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSchedSettings {
    num_segments: Option<u32>,
    cwnd_limited: Option<bool>,
    beta: Option<f64>,
    lambda: Option<f64>,
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

/// Reads and validates a scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io { file: file.clone(), source })?;
    parse(&text, &file)
}

/// Validates scenario `text`; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario = toml::from_str(text)
        .map_err(|e| ScenarioError::Syntax { file: file.to_string(), message: e.to_string().trim_end().to_string() })?;
    let cx = Ctx { file };
    let duration = match &raw.duration {
        Some(d) => cx.field("duration", parse_duration(d))?,
        None => Duration::from_secs(30),
    };
    if duration == Duration::ZERO {
        return Err(cx.invalid("duration", "must be longer than zero"));
    }
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
    let (topology, flow_paths, link_keys) = build_topology(&cx, &raw)?;
    // Looked up once per subflow: a map, so 10,000 flows parse in linear time.
    let path_ids: HashMap<&str, usize> = topology.paths.iter().enumerate().map(|(i, p)| (p.name.as_str(), i)).collect();
    let mut flows = Vec::new();
    for (i, f) in raw.flow.iter().enumerate() {
        flows.push(build_flow(&cx, i, f, &topology, &path_ids, &flow_paths[i])?);
    }
    check_byte_queues(&cx, &topology, &flows, &link_keys)?;
    let mut names: Vec<&str> = flows.iter().map(|f| f.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(cx.invalid("flow.name", format!("two flows are named {:?}; names must be unique", w[0])));
    }
    Ok(Scenario {
        name: raw.name.clone().unwrap_or_else(|| "unnamed".into()),
        description: raw.description.clone().unwrap_or_default(),
        seed: raw.seed.unwrap_or(1),
        duration,
        sample_interval,
        topology,
        flows,
        flow_paths,
        file: file.to_string(),
    })
}

impl Scenario {
    /// Inputs that are valid but probably not what the author meant, for a
    /// run of `duration` (the scenario's, or the command line's): each names
    /// the file and the key, as errors do.
    pub fn warnings(&self, duration: Duration) -> Vec<String> {
        let end = Instant::ZERO + duration;
        let mut out = Vec::new();
        for (i, f) in self.flows.iter().enumerate() {
            let key = |k: &str| format!("{}: key `flow[{i}].{k}`", self.file);
            if f.start >= end {
                out.push(format!(
                    "{}: the flow starts at {} s, when the run ({} s) is over; it sends nothing",
                    key("start"),
                    secs(f.start.as_nanos()),
                    secs(duration.as_nanos())
                ));
                continue;
            }
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
        out
    }
}

/// Whole nanoseconds as seconds, converted once (so "4.8s" prints as 4.8).
pub fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn link_params(cx: &Ctx, key: &str, l: &RawLink, default_name: &str) -> Result<LinkParams, ScenarioError> {
    let rate_bps = cx.field(&format!("{key}.rate"), parse_rate(&l.rate))?;
    let rtt = match &l.rtt {
        Some(r) => cx.field(&format!("{key}.rtt"), parse_duration(r))?,
        None => Duration::ZERO,
    };
    let loss = match &l.loss {
        Some(v) => cx.field(&format!("{key}.loss"), parse_loss(v))?,
        None => 0.0,
    };
    let queue = cx.field(&format!("{key}.queue"), parse_queue(l.queue.as_deref().unwrap_or("1bdp")))?;
    let mut outages = Vec::new();
    for (j, o) in l.down.iter().enumerate() {
        let k = format!("{key}.down[{j}]");
        let from = cx.field(&format!("{k}.from"), parse_duration(&o.from))?;
        let to = cx.field(&format!("{k}.to"), parse_duration(&o.to))?;
        if to <= from {
            return Err(cx.invalid(k, format!("`to` ({to}) must be after `from` ({from})")));
        }
        let (from, to) = (Instant::ZERO + from, Instant::ZERO + to);
        if let Some(other) = outages.iter().position(|&(a, b)| from < b && a < to) {
            return Err(cx.invalid(k, format!("overlaps {key}.down[{other}]; merge overlapping outages into one")));
        }
        outages.push((from, to));
    }
    let queue = queue_limit(queue, rate_bps, rtt);
    let red = match l.aqm.as_deref().unwrap_or("droptail") {
        "droptail" => None,
        "red" => Some(Red::for_limit(match queue {
            QueueLimit::Packets(n) => f64::from(n),
            QueueLimit::Bytes(b) => b as f64 / 1500.0,
        })),
        other => {
            return Err(cx.invalid(
                format!("{key}.aqm"),
                format!("unknown queue discipline {other:?}: allowed \"droptail\", \"red\""),
            ))
        }
    };
    Ok(LinkParams {
        name: l.name.clone().unwrap_or_else(|| default_name.to_string()),
        rate_bps,
        rtt,
        loss,
        queue,
        outages,
        red,
    })
}

/// Smallest queue a BDP-relative size resolves to, so zero-delay links
/// still buffer a few packets.
const MIN_BDP_QUEUE_PACKETS: f64 = 10.0;

fn queue_limit(q: QueueSize, rate_bps: u64, rtt: Duration) -> QueueLimit {
    match q {
        QueueSize::Packets(n) => QueueLimit::Packets(n),
        QueueSize::Bytes(b) => QueueLimit::Bytes(b),
        QueueSize::Bdp(k) => {
            let bdp_packets = rate_bps as f64 * rtt.as_secs_f64() / 8.0 / 1500.0;
            QueueLimit::Packets((k * bdp_packets).max(MIN_BDP_QUEUE_PACKETS).ceil() as u32)
        }
    }
}

/// Per user-written link table: the link's name and the key of its table
/// (`topology.link[1]`), so later checks can name the key.
type LinkKeys = Vec<(String, String)>;

fn build_topology(cx: &Ctx, raw: &RawScenario) -> Result<(Topology, Vec<Vec<String>>, LinkKeys), ScenarioError> {
    let t = &raw.topology;
    match t.kind.as_str() {
        "hybrid-access" => {
            if t.bottleneck.is_some() {
                return Err(cx.invalid(
                    "topology.bottleneck",
                    "belongs to kind = \"dumbbell\"; hybrid-access uses [[topology.link]]",
                ));
            }
            if t.link.is_empty() {
                return Err(
                    cx.invalid("topology.link", "hybrid-access needs at least one [[topology.link]] access link")
                );
            }
            let access = access_links(cx, &t.link)?;
            let core = match &t.core_rate {
                Some(r) => cx.field("topology.core_rate", parse_rate(r))?,
                None => 2_000_000_000,
            };
            let topo = braid_sim::topology::hybrid_access(&access, core);
            let mut flow_paths = Vec::new();
            for (i, f) in raw.flow.iter().enumerate() {
                for (k, set) in [("subflows", f.subflows.is_some()), ("extra_rtt", f.extra_rtt.is_some())] {
                    if set {
                        return Err(cx.invalid(
                            format!("flow[{i}].{k}"),
                            "belongs to kind = \"dumbbell\"; hybrid-access flows choose access links with `paths = [\"L1\", ...]`",
                        ));
                    }
                }
                let paths = f.paths.clone().unwrap_or_else(|| access.iter().map(|a| a.name.clone()).collect());
                if paths.is_empty() {
                    return Err(cx.invalid(format!("flow[{i}].paths"), "needs at least one access link"));
                }
                if let Some(j) = (1..paths.len()).find(|&j| paths[..j].contains(&paths[j])) {
                    return Err(cx.invalid(
                        format!("flow[{i}].paths[{j}]"),
                        format!("{:?} is listed twice; a flow opens one subflow per path", paths[j]),
                    ));
                }
                flow_paths.push(paths);
            }
            let keys =
                access.iter().enumerate().map(|(i, a)| (a.name.clone(), format!("topology.link[{i}]"))).collect();
            Ok((topo, flow_paths, keys))
        }
        "dumbbell" => {
            for (k, set) in [("topology.link", !t.link.is_empty()), ("topology.core_rate", t.core_rate.is_some())] {
                if set {
                    return Err(
                        cx.invalid(k, "belongs to kind = \"hybrid-access\"; dumbbell uses [topology.bottleneck]")
                    );
                }
            }
            let b = t.bottleneck.as_ref().ok_or_else(|| {
                cx.invalid("topology.bottleneck", "dumbbell needs a [topology.bottleneck] with at least `rate`")
            })?;
            let bottleneck = link_params(cx, "topology.bottleneck", b, "bottleneck")?;
            let mut paths = Vec::new();
            let mut flow_paths = Vec::new();
            for (i, f) in raw.flow.iter().enumerate() {
                if f.paths.is_some() {
                    return Err(
                        cx.invalid(format!("flow[{i}].paths"), "dumbbell flows set `subflows = N` instead of paths")
                    );
                }
                let n = cx.within(&format!("flow[{i}].subflows"), f.subflows.unwrap_or(1), 1..=8, "1 to 8")?;
                let extra = match &f.extra_rtt {
                    Some(r) => cx.field(&format!("flow[{i}].extra_rtt"), parse_duration(r))?,
                    None => Duration::ZERO,
                };
                let name = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
                let names: Vec<String> = (0..n).map(|k| format!("{name}/{k}")).collect();
                paths.extend(names.iter().map(|p| (p.clone(), extra)));
                flow_paths.push(names);
            }
            let topo = braid_sim::topology::dumbbell(&bottleneck, &paths);
            // Path names are unique (flow names are), so only the
            // bottleneck's own name can clash with an access link's.
            let clash = topo
                .links
                .iter()
                .skip(2)
                .find(|l| l.name == bottleneck.name || l.name == format!("{}-rev", bottleneck.name));
            if let Some(l) = clash {
                return Err(cx.invalid(
                    "topology.bottleneck.name",
                    format!("{:?} clashes with the access link {:?}", bottleneck.name, l.name),
                ));
            }
            Ok((topo, flow_paths, vec![(bottleneck.name, "topology.bottleneck".into())]))
        }
        other => {
            Err(cx.invalid("topology.kind", format!("unknown kind {other:?}: allowed \"hybrid-access\", \"dumbbell\"")))
        }
    }
}

/// A buffer setting: a size, or an autotuning mode among `modes` with an
/// optional `:SIZE` maximum (`"kernel:16MiB"`).
fn parse_buffer<'m>(s: &str, modes: &[&'m str]) -> Result<(Option<&'m str>, Option<u64>), String> {
    let (word, max) = s.split_once(':').map_or((s, None), |(w, m)| (w, Some(m)));
    let Some(&mode) = modes.iter().find(|&&m| m == word.trim()) else {
        return match max {
            None => Ok((None, Some(parse_size(s)?))),
            Some(_) => Err(format!("{word:?} is not an autotuning mode: allowed {modes:?} (\"MODE:MAX\") or a size")),
        };
    };
    Ok((Some(mode), max.map(|m| parse_size(m.trim())).transpose()?))
}

/// Hybrid-access's access links. An unnamed link is `L<i+1>`, or the next
/// free `L<n>` when another link took that name; every link, its reverse
/// (`NAME-rev`) and the core link must have distinct names.
fn access_links(cx: &Ctx, links: &[RawLink]) -> Result<Vec<LinkParams>, ScenarioError> {
    let explicit: Vec<&str> = links.iter().filter_map(|l| l.name.as_deref()).collect();
    // Names in use, each with what holds it.
    let mut taken: Vec<(String, String)> = vec![
        (CORE_LINK.into(), "the core link".into()),
        (format!("{CORE_LINK}-rev"), "the core link's reverse (ACK) direction".into()),
    ];
    let is_taken = |taken: &[(String, String)], n: &str| taken.iter().any(|(t, _)| t == n);
    let mut access = Vec::new();
    for (i, l) in links.iter().enumerate() {
        let default = (i + 1..)
            .map(|n| format!("L{n}"))
            .find(|n| !explicit.contains(&n.as_str()) && !is_taken(&taken, n))
            .expect("unbounded");
        let key = format!("topology.link[{i}]");
        let p = link_params(cx, &key, l, &default)?;
        let reverse = format!("{}-rev", p.name);
        for (n, what) in [(&p.name, "is"), (&reverse, "would name this link's reverse (ACK) direction, but is")] {
            if let Some((_, holder)) = taken.iter().find(|(t, _)| t == n) {
                return Err(cx.invalid(format!("{key}.name"), format!("{n:?} {what} already the name of {holder}")));
            }
        }
        taken.push((p.name.clone(), key.clone()));
        taken.push((reverse, format!("{key}'s reverse (ACK) direction")));
        access.push(p);
    }
    Ok(access)
}

/// A byte-limited queue must hold at least one full data packet of every
/// flow that crosses it; a smaller one drops every packet that finds the
/// link busy.
fn check_byte_queues(cx: &Ctx, topo: &Topology, flows: &[FlowSpec], keys: &LinkKeys) -> Result<(), ScenarioError> {
    for (i, f) in flows.iter().enumerate() {
        let packet = u64::from(f.config.mss + braid_proto::packet::DATA_HEADER_BYTES);
        for &(path, _) in &f.subflows {
            for &l in &topo.paths[path].forward {
                let link = &topo.links[l];
                let QueueLimit::Bytes(b) = link.queue else { continue };
                if b >= packet {
                    continue;
                }
                let key = keys.iter().find(|(n, _)| *n == link.name).map_or("topology", |(_, k)| k.as_str());
                return Err(cx.invalid(
                    format!("{key}.queue"),
                    format!(
                        "{b} bytes hold no full packet of flow[{i}] ({packet} bytes on the wire: mss {} + {} header bytes)",
                        f.config.mss,
                        braid_proto::packet::DATA_HEADER_BYTES
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn names_of(list: &[(&str, &str)]) -> String {
    list.iter().map(|(n, _)| format!("{n:?}")).collect::<Vec<_>>().join(", ")
}

fn build_flow(
    cx: &Ctx,
    i: usize,
    f: &RawFlow,
    topo: &Topology,
    path_ids: &HashMap<&str, usize>,
    paths: &[String],
) -> Result<FlowSpec, ScenarioError> {
    let key = |k: &str| format!("flow[{i}].{k}");
    let cc_name = f.cc.clone().unwrap_or_else(|| "lia".into());
    if cc::by_name(&cc_name).is_none() {
        return Err(cx.invalid(
            key("cc"),
            format!("unknown congestion controller {cc_name:?}: allowed {}", names_of(cc::ALGORITHMS)),
        ));
    }
    let sched_name = f.scheduler.clone().unwrap_or_else(|| "minrtt".into());
    let sched_settings = f.scheduler_settings.as_ref().map_or_else(sched::Settings::default, |r| sched::Settings {
        num_segments: r.num_segments,
        cwnd_limited: r.cwnd_limited,
        beta: r.beta,
        lambda: r.lambda,
    });
    match sched::build(&sched_name, &sched_settings) {
        Ok(_) => {}
        Err(sched::SettingsError::UnknownScheduler(_)) => {
            return Err(cx.invalid(
                key("scheduler"),
                format!("unknown scheduler {sched_name:?}: allowed {}", names_of(sched::ALGORITHMS)),
            ))
        }
        Err(
            e
            @ (sched::SettingsError::NotApplicable { setting, .. } | sched::SettingsError::OutOfRange { setting, .. }),
        ) => return Err(cx.invalid(key(&format!("scheduler_settings.{setting}")), e.to_string())),
    }
    for b in &f.backup {
        if !paths.contains(b) {
            return Err(cx.invalid(key("backup"), format!("{b:?} is not one of this flow's paths {paths:?}")));
        }
    }
    let mut subflows = Vec::new();
    for (j, p) in paths.iter().enumerate() {
        let idx = *path_ids.get(p.as_str()).ok_or_else(|| {
            let known: Vec<&str> = topo.paths.iter().map(|p| p.name.as_str()).collect();
            cx.invalid(format!("flow[{i}].paths[{j}]"), format!("no link named {p:?}: allowed {known:?}"))
        })?;
        subflows.push((idx, f.backup.contains(p)));
    }
    let mut config = Config::default();
    if let Some(s) = f.send_buffer.as_deref() {
        let (mode, max) = cx.field(&key("send_buffer"), parse_buffer(s, &["auto", "kernel"]))?;
        config.send_autotune = match mode {
            Some("auto") => SendAutotune::Seed003,
            Some(_) => SendAutotune::Kernel,
            None => SendAutotune::Off,
        };
        config.send_buffer = max.unwrap_or(config.send_buffer);
    }
    if let Some(s) = f.recv_buffer.as_deref() {
        let (mode, max) = cx.field(&key("recv_buffer"), parse_buffer(s, &["auto"]))?;
        config.recv_autotune = mode.is_some();
        config.recv_buffer = max.unwrap_or(config.recv_buffer);
    }
    if let Some(m) = f.mss {
        config.mss = cx.within(&key("mss"), m, 64..=9000, "64 to 9000 bytes")?;
    }
    for (k, v) in [("send_buffer", config.send_buffer), ("recv_buffer", config.recv_buffer)] {
        if v < u64::from(config.mss) {
            return Err(cx.invalid(key(k), format!("{v} bytes is smaller than one segment ({} bytes)", config.mss)));
        }
    }
    if let Some(s) = &f.min_rto {
        config.min_rto = cx.field(&key("min_rto"), parse_duration(s))?;
    }
    if let Some(n) = f.ack_every {
        config.ack_every = cx.within(&key("ack_every"), n, 1..=64, "1 (no delayed ACKs) to 64")?;
    }
    if let Some(s) = &f.max_ack_delay {
        config.max_ack_delay = cx.field(&key("max_ack_delay"), parse_duration(s))?;
    }
    if let Some(n) = f.initial_window {
        config.initial_window = cx.within(&key("initial_window"), n, 1..=1000, "1 to 1000 segments")?;
    }
    config.opportunistic_retransmission = f.opportunistic;
    config.nodelay = f.nodelay.unwrap_or(false);
    if let Some(t) = &f.failure_timeout {
        config.failure_timeout = cx.field(&key("failure_timeout"), parse_duration(t))?;
        if config.failure_timeout == Duration::ZERO {
            return Err(cx.invalid(key("failure_timeout"), "must be longer than zero"));
        }
    }
    let start = match &f.start {
        Some(s) => Instant::ZERO + cx.field(&key("start"), parse_duration(s))?,
        None => Instant::ZERO,
    };
    let size = match &f.size {
        Some(s) => match cx.field(&key("size"), parse_size(s))? {
            0 => return Err(cx.invalid(key("size"), "must be at least 1B")),
            n => Some(n),
        },
        None => None,
    };
    let message = match &f.app_message {
        Some(m) => match cx.field(&key("app_message"), parse_size(m))? {
            0 => return Err(cx.invalid(key("app_message"), "must be at least 1B")),
            n if n > 1 << 30 => return Err(cx.invalid(key("app_message"), format!("{n} bytes is more than 1GiB"))),
            n => n,
        },
        None => u64::from(config.mss),
    };
    let source = match &f.app_rate {
        Some(r) => Source::ConstantRate { bits_per_sec: cx.field(&key("app_rate"), parse_rate(r))?, message },
        None if f.app_message.is_some() => {
            return Err(cx.invalid(key("app_message"), "needs app_rate (a bulk application writes no messages)"))
        }
        None => Source::Bulk,
    };
    Ok(FlowSpec {
        name: f.name.clone().unwrap_or_else(|| format!("flow{i}")),
        cc: cc_name,
        scheduler: sched_name,
        sched_settings,
        config,
        subflows,
        start,
        size,
        source,
        verify_payload: f.verify_payload.unwrap_or(false),
        wire_format: f.wire.unwrap_or(false),
    })
}
