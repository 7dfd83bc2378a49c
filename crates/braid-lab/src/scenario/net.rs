//! The `[topology]` table: the kinds, their links, and which paths (or
//! which hosts) each `[[flow]]` table's flows use.
//!
//! `kind = "graph"` takes named links between named nodes (`from`, `to`,
//! one-way `delay`) and named paths as lists of links. A path's ACKs return
//! over `reverse`, or by default over each link's reverse `NAME-rev` in
//! the opposite order: the file's link of that name if it defines one,
//! else a mirror of `NAME` (same rate and delay, lossless, deep queue,
//! same outages), made when first needed. A path must be a walk (each link
//! starts where the one before it ends) and its reverse must walk back.

use std::collections::BTreeMap;
use std::sync::Arc;

use braid_proto::{Duration, Instant};
use braid_sim::loss::LossSpec;
use braid_sim::topology::bcube::{BCube, BCubeParams};
use braid_sim::topology::ecmp::Ecmp;
use braid_sim::topology::fattree::{FatTree, FatTreeParams};
use braid_sim::topology::{HostFabric, LinkParams, Path, RouteError, Topology, CORE_LINK, DEEP_QUEUE};
use braid_sim::trace::DeliveryTrace;
use braid_sim::traffic::Matrix;
use braid_sim::{Aqm, LinkSpec, PolicerSpec, QueueLimit, RandomDrop, Red};
use serde::Deserialize;

use super::flows::RawFlow;
use super::{Ctx, RawScenario, ScenarioError};
use crate::units::{parse_duration, parse_loss, parse_queue, parse_rate, parse_size, shown, QueueSize};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct RawTopology {
    kind: String,
    core_rate: Option<String>,
    access_rate: Option<String>,
    #[serde(default)]
    link: Vec<RawLink>,
    bottleneck: Option<RawLink>,
    #[serde(default)]
    path: Vec<RawPath>,
    k: Option<u32>,
    n: Option<u32>,
    rate: Option<String>,
    delay: Option<String>,
    queue: Option<String>,
    host_queue: Option<String>,
    aqm: Option<String>,
    oversubscription: Option<u32>,
    ecmp: Option<String>,
    mtu: Option<u32>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct RawLink {
    name: Option<String>,
    rate: Option<String>,
    rtt: Option<String>,
    delay: Option<String>,
    from: Option<String>,
    to: Option<String>,
    loss: Option<toml::Value>,
    loss_model: Option<RawLossModel>,
    queue: Option<String>,
    aqm: Option<String>,
    #[serde(default)]
    down: Vec<RawOutage>,
    trace: Option<String>,
    policer: Option<RawPolicer>,
    mtu: Option<u32>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
struct RawPolicer {
    rate: String,
    burst: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
struct RawLossModel {
    kind: String,
    p: Option<toml::Value>,
    r: Option<toml::Value>,
    loss_good: Option<toml::Value>,
    loss_bad: Option<toml::Value>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
struct RawOutage {
    from: String,
    to: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
struct RawPath {
    name: String,
    links: Vec<String>,
    reverse: Option<Vec<String>>,
}

/// The names the topology's tables give, with their keys: links (and the
/// dumbbell's bottleneck) and paths.
pub(super) fn names_given(t: &RawTopology) -> Vec<(String, &str)> {
    let links =
        t.link.iter().enumerate().filter_map(|(i, l)| Some((format!("topology.link[{i}].name"), l.name.as_deref()?)));
    let bottleneck =
        t.bottleneck.iter().filter_map(|b| Some(("topology.bottleneck.name".to_string(), b.name.as_deref()?)));
    let paths = t.path.iter().enumerate().map(|(i, p)| (format!("topology.path[{i}].name"), p.name.as_str()));
    links.chain(bottleneck).chain(paths).collect()
}

/// A subflow's path: index in the topology, name, backup flag.
pub(super) type PathUse = (usize, String, bool);

/// Which paths the flows of one `[[flow]]` table use.
#[derive(Clone, Debug)]
pub(super) enum Routes {
    /// Every flow of the table uses these.
    Paths(Vec<PathUse>),
    /// Flow `j` of the table uses entry `j` (dumbbell: private access links).
    PerFlow(Vec<Vec<PathUse>>),
    /// Between hosts of a fabric.
    Hosts { pairs: Pairs, subflows: usize },
}

/// Which hosts talk.
#[derive(Clone, Debug)]
pub(super) enum Pairs {
    One(usize, usize),
    /// A traffic matrix over the given hosts (all, or a `sources` subset).
    Matrix(Matrix, Vec<usize>),
    /// Fixed pairs (every host to each of its neighbours).
    List(Vec<(usize, usize)>),
}

/// A data-centre fabric: hosts, and routes between them.
#[derive(Clone, Debug)]
pub(super) enum Fabric {
    FatTree(FatTree, Ecmp),
    BCube(BCube),
}

impl Fabric {
    pub(super) fn hosts(&self) -> usize {
        match self {
            Fabric::FatTree(t, _) => t.hosts(),
            Fabric::BCube(b) => b.hosts(),
        }
    }

    pub(super) fn topology(&self) -> &Topology {
        match self {
            Fabric::FatTree(t, _) => &t.topology,
            Fabric::BCube(b) => &b.topology,
        }
    }

    fn topology_mut(&mut self) -> &mut Topology {
        match self {
            Fabric::FatTree(t, _) => &mut t.topology,
            Fabric::BCube(b) => &mut b.topology,
        }
    }

    /// The routes subflow `subflow` of a connection from `src` to `dst`
    /// takes: the route number and its forward and reverse links. FatTree:
    /// ECMP over the equal-cost routes (`connection` salts the hash, as a
    /// source port would). BCube: one subflow on the shortest of the
    /// parallel paths, several spread over them in order (source routing).
    pub(super) fn route(
        &self,
        seed: u64,
        src: usize,
        dst: usize,
        connection: u64,
        subflow: usize,
        subflows: usize,
    ) -> (usize, Vec<usize>, Vec<usize>) {
        match self {
            Fabric::FatTree(t, ecmp) => {
                let c = ecmp.choose(seed, src, dst, connection, subflow, t.route_count(src, dst));
                (c, t.route(src, dst, c), t.route(dst, src, c))
            }
            Fabric::BCube(b) => {
                let c = if subflows == 1 { b.shortest(src, dst) } else { subflow % b.route_count() };
                let fwd = b.route(src, dst, c);
                let rev = b.mirror(&fwd);
                (c, fwd, rev)
            }
        }
    }

    /// The hosts one hop from `h`: under its ToR (FatTree), differing in
    /// one address digit (BCube).
    pub(super) fn neighbours(&self, h: usize) -> Vec<usize> {
        match self {
            Fabric::FatTree(t, _) => t.neighbours(h),
            Fabric::BCube(b) => b.neighbours(h),
        }
    }

    /// Whether routes depend on the seed.
    pub(super) fn hashes(&self) -> bool {
        matches!(self, Fabric::FatTree(..))
    }
}

/// A validated topology and each `[[flow]]` table's routes.
#[derive(Clone, Debug)]
pub(super) struct Net {
    /// Links and fixed paths (fabrics add paths as flows need them).
    pub topology: Topology,
    pub fabric: Option<Fabric>,
    pub routes: Vec<Routes>,
    /// Each `[[cross]]` table's route (one path or one host pair).
    pub cross_routes: Vec<Routes>,
    /// Link names and the key that set each one's queue, for later checks.
    pub link_keys: Vec<(String, String)>,
    /// What `Scenario::warnings` says about the topology, each starting
    /// with its key.
    pub warnings: Vec<String>,
}

/// Kinds and the topology keys they take.
const KINDS: &[(&str, &[&str])] = &[
    ("hybrid-access", &["link", "core_rate"]),
    ("dumbbell", &["bottleneck", "access_rate"]),
    ("graph", &["link", "path"]),
    ("fattree", &["k", "rate", "delay", "queue", "host_queue", "aqm", "oversubscription", "ecmp", "mtu"]),
    ("bcube", &["n", "k", "rate", "delay", "queue", "aqm", "mtu"]),
];

fn kinds_with(key: &str) -> String {
    let k: Vec<String> =
        KINDS.iter().filter(|(_, keys)| keys.contains(&key)).map(|(k, _)| format!("kind = \"{k}\"")).collect();
    k.join(" and ")
}

/// Refuses topology keys the kind does not take, naming the kinds that do.
fn check_topology_keys(cx: &Ctx, t: &RawTopology) -> Result<(), ScenarioError> {
    let Some((_, allowed)) = KINDS.iter().find(|(k, _)| *k == t.kind) else {
        let names: Vec<String> = KINDS.iter().map(|(k, _)| format!("{k:?}")).collect();
        return Err(cx.invalid("topology.kind", format!("unknown kind {:?}: allowed {}", t.kind, names.join(", "))));
    };
    let set = [
        ("link", !t.link.is_empty()),
        ("core_rate", t.core_rate.is_some()),
        ("access_rate", t.access_rate.is_some()),
        ("bottleneck", t.bottleneck.is_some()),
        ("path", !t.path.is_empty()),
        ("k", t.k.is_some()),
        ("n", t.n.is_some()),
        ("rate", t.rate.is_some()),
        ("delay", t.delay.is_some()),
        ("queue", t.queue.is_some()),
        ("host_queue", t.host_queue.is_some()),
        ("aqm", t.aqm.is_some()),
        ("oversubscription", t.oversubscription.is_some()),
        ("ecmp", t.ecmp.is_some()),
        ("mtu", t.mtu.is_some()),
    ];
    for (key, present) in set {
        if present && !allowed.contains(&key) {
            let hint = match (t.kind.as_str(), key) {
                ("hybrid-access", "bottleneck") => "; hybrid-access uses [[topology.link]]".to_string(),
                ("dumbbell", "link" | "core_rate") => "; dumbbell uses [topology.bottleneck]".to_string(),
                (_, "mtu") => "; other kinds set `mtu` on each link".to_string(),
                _ => String::new(),
            };
            return Err(cx.invalid(format!("topology.{key}"), format!("belongs to {}{hint}", kinds_with(key))));
        }
    }
    Ok(())
}

/// Flow keys that choose routes, and the kinds that take them.
fn check_flow_keys(cx: &Ctx, kind: &str, i: usize, f: &RawFlow) -> Result<(), ScenarioError> {
    let keys: [(&str, bool, &[&str]); 10] = [
        ("paths", f.paths.is_some(), &["hybrid-access", "graph"]),
        ("backup", !f.backup.is_empty(), &["hybrid-access", "graph"]),
        ("subflows", f.subflows.is_some(), &["dumbbell", "fattree", "bcube"]),
        ("extra_rtt", f.extra_rtt.is_some(), &["dumbbell"]),
        ("from", f.from.is_some(), &["fattree", "bcube"]),
        ("to", f.to.is_some(), &["fattree", "bcube"]),
        ("matrix", f.matrix.is_some(), &["fattree", "bcube"]),
        ("destinations", f.destinations.is_some(), &["fattree", "bcube"]),
        ("fraction", f.fraction.is_some(), &["fattree", "bcube"]),
        ("sources", f.sources.is_some(), &["fattree", "bcube"]),
    ];
    for (key, present, kinds) in keys {
        if present && !kinds.contains(&kind) {
            let how = match kind {
                "hybrid-access" | "graph" => format!("{kind} flows choose their paths with `paths = [\"NAME\", ...]`"),
                "dumbbell" => "dumbbell flows set `subflows = N` instead of paths".to_string(),
                _ => format!("{kind} flows name hosts (`from`, `to`) or a `matrix`"),
            };
            let owners: Vec<String> = kinds.iter().map(|k| format!("kind = \"{k}\"")).collect();
            return Err(cx.invalid(format!("flow[{i}].{key}"), format!("belongs to {}; {how}", owners.join(", "))));
        }
    }
    Ok(())
}

pub(super) fn build(cx: &Ctx, raw: &RawScenario) -> Result<Net, ScenarioError> {
    let t = &raw.topology;
    check_topology_keys(cx, t)?;
    for (i, f) in raw.flow.iter().enumerate() {
        check_flow_keys(cx, &t.kind, i, f)?;
    }
    match t.kind.as_str() {
        "hybrid-access" => hybrid(cx, raw),
        "dumbbell" => dumbbell(cx, raw),
        "graph" => graph(cx, raw),
        _ => fabric(cx, raw),
    }
}

/// What a link's `mtu` may be: from IPv4's smallest datagram every host
/// must take.
const MTU_RANGE: &str = "576 to 65535 bytes (an IP packet's size)";

/// What every kind's links share: rate or trace, loss, queue, AQM,
/// outages, policer, MTU.
struct LinkCommon {
    rate_bps: u64,
    loss: LossSpec,
    queue: QueueLimit,
    outages: Vec<(Instant, Instant)>,
    aqm: Aqm,
    trace: Option<Arc<DeliveryTrace>>,
    policer: Option<PolicerSpec>,
    mtu: Option<u32>,
}

/// Reads the keys every link has; `bdp_rtt` is the round trip a `"1bdp"`
/// queue is sized for.
fn link_common(cx: &Ctx, key: &str, l: &RawLink, bdp_rtt: Duration) -> Result<LinkCommon, ScenarioError> {
    let trace = match &l.trace {
        Some(file) => Some(Arc::new(load_trace(cx, &format!("{key}.trace"), file)?)),
        None => None,
    };
    let rate_bps = match (&l.rate, &trace) {
        (Some(r), _) => cx.field(&format!("{key}.rate"), parse_rate(r))?,
        (None, Some(t)) => t.mean_rate_bps().round().max(1.0) as u64,
        (None, None) => return Err(cx.invalid(format!("{key}.rate"), "a link needs a `rate` (or a delivery `trace`)")),
    };
    let loss = match (&l.loss, &l.loss_model) {
        (Some(_), Some(_)) => {
            return Err(
                cx.invalid(format!("{key}.loss_model"), "give either `loss` (Bernoulli) or `loss_model`, not both")
            )
        }
        (Some(v), None) => LossSpec::Bernoulli { p: cx.field(&format!("{key}.loss"), parse_loss(v))? },
        (None, Some(m)) => loss_model(cx, &format!("{key}.loss_model"), m)?,
        (None, None) => LossSpec::Bernoulli { p: 0.0 },
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
    // In time order, as the emulator walks them (an earlier outage listed
    // later was never applied there).
    outages.sort_unstable();
    let queue = queue_limit(queue, rate_bps, bdp_rtt);
    let aqm = parse_aqm(cx, &format!("{key}.aqm"), l.aqm.as_deref(), queue)?;
    let policer = l.policer.as_ref().map(|p| policer(cx, &format!("{key}.policer"), p)).transpose()?;
    let mtu = l.mtu.map(|m| cx.within(&format!("{key}.mtu"), m, 576..=65_535, MTU_RANGE)).transpose()?;
    Ok(LinkCommon { rate_bps, loss, queue, outages, aqm, trace, policer, mtu })
}

/// A link's `policer = { rate, burst }`: the bucket must hold a full-sized
/// packet (a smaller one would drop every data packet) and at most 1 GB.
fn policer(cx: &Ctx, key: &str, p: &RawPolicer) -> Result<PolicerSpec, ScenarioError> {
    let rate_bps = cx.field(&format!("{key}.rate"), parse_rate(&p.rate))?;
    let burst_bytes = cx.field(&format!("{key}.burst"), parse_size(&p.burst))?;
    if !(1500..=PolicerSpec::MAX_BURST_BYTES).contains(&burst_bytes) {
        return Err(cx.invalid(
            format!("{key}.burst"),
            format!("{burst_bytes} bytes: a policer's burst must hold a full packet, 1500B to 1GB"),
        ));
    }
    Ok(PolicerSpec { rate_bps, burst_bytes })
}

/// The `aqm` key of a link (`key`) or a fabric, for a queue of `queue`.
fn parse_aqm(cx: &Ctx, key: &str, aqm: Option<&str>, queue: QueueLimit) -> Result<Aqm, ScenarioError> {
    match aqm.unwrap_or("droptail") {
        "droptail" => Ok(Aqm::DropTail),
        "red" => Ok(Aqm::Red(Red::for_limit(match queue {
            QueueLimit::Packets(n) => f64::from(n),
            QueueLimit::Bytes(b) => b as f64 / 1500.0,
        }))),
        "random-drop" => Ok(Aqm::RandomDrop(RandomDrop::HTSIM)),
        other => Err(cx.invalid(
            key,
            format!("unknown queue discipline {other:?}: allowed \"droptail\", \"red\", \"random-drop\""),
        )),
    }
}

/// A probability written as a number or a percentage string.
fn probability(cx: &Ctx, key: &str, v: &toml::Value) -> Result<f64, ScenarioError> {
    let p = match v {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        toml::Value::String(s) => match s.trim().strip_suffix('%').map(|n| n.trim().parse::<f64>()) {
            Some(Ok(pct)) => pct / 100.0,
            _ => return Err(cx.invalid(key, format!("cannot read {s:?} as a probability: expected 0.01 or \"1%\""))),
        },
        other => {
            return Err(cx.invalid(key, format!("a probability is a number or a percentage, not {}", other.type_str())))
        }
    };
    if !(0.0..=1.0).contains(&p) {
        return Err(cx.invalid(key, format!("{} is not a probability in [0, 1]", shown(p))));
    }
    Ok(p)
}

fn loss_model(cx: &Ctx, key: &str, m: &RawLossModel) -> Result<LossSpec, ScenarioError> {
    let get = |name: &str, v: &Option<toml::Value>, default: Option<f64>| -> Result<f64, ScenarioError> {
        match (v, default) {
            (Some(v), _) => probability(cx, &format!("{key}.{name}"), v),
            (None, Some(d)) => Ok(d),
            (None, None) => Err(cx.invalid(format!("{key}.{name}"), format!("the {:?} model needs `{name}`", m.kind))),
        }
    };
    let spec = match m.kind.as_str() {
        "bernoulli" => {
            for (name, v) in [("r", &m.r), ("loss_good", &m.loss_good), ("loss_bad", &m.loss_bad)] {
                if v.is_some() {
                    return Err(cx.invalid(format!("{key}.{name}"), "belongs to kind = \"gilbert-elliott\""));
                }
            }
            LossSpec::Bernoulli { p: get("p", &m.p, None)? }
        }
        "gilbert-elliott" => LossSpec::GilbertElliott {
            p: get("p", &m.p, None)?,
            r: get("r", &m.r, None)?,
            loss_good: get("loss_good", &m.loss_good, Some(0.0))?,
            loss_bad: get("loss_bad", &m.loss_bad, Some(1.0))?,
        },
        other => {
            return Err(cx.invalid(
                format!("{key}.kind"),
                format!("unknown loss model {other:?}: allowed \"bernoulli\", \"gilbert-elliott\""),
            ))
        }
    };
    spec.validate().map_err(|e| cx.invalid(key, e.to_string()))?;
    Ok(spec)
}

/// The largest trace file read (hours of a gigabit link's opportunities).
const MAX_TRACE_BYTES: u64 = 1 << 30;

/// Reads a delivery trace, relative to the scenario file's folder.
fn load_trace(cx: &Ctx, key: &str, file: &str) -> Result<DeliveryTrace, ScenarioError> {
    let base = std::path::Path::new(cx.file).parent().unwrap_or(std::path::Path::new(""));
    let path = base.join(file);
    let unreadable = |e: std::io::Error| cx.invalid(key, format!("cannot read the trace {}: {e}", path.display()));
    // A bound, so a path such as /dev/zero fails rather than fills memory.
    let text = super::read_text(&path, MAX_TRACE_BYTES).map_err(unreadable)?;
    DeliveryTrace::parse(&text).map_err(|e| cx.invalid(key, format!("{}: {e}", path.display())))
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

/// A hybrid-access or dumbbell link (`rtt`, split between the directions).
fn link_params(cx: &Ctx, key: &str, l: &RawLink, default_name: &str) -> Result<LinkParams, ScenarioError> {
    for (k, set) in [("delay", l.delay.is_some()), ("from", l.from.is_some()), ("to", l.to.is_some())] {
        if set {
            return Err(cx.invalid(format!("{key}.{k}"), "belongs to kind = \"graph\"; this kind's links take `rtt`"));
        }
    }
    let rtt = match &l.rtt {
        Some(r) => cx.field(&format!("{key}.rtt"), parse_duration(r))?,
        None => Duration::ZERO,
    };
    let c = link_common(cx, key, l, rtt)?;
    Ok(LinkParams {
        name: l.name.clone().unwrap_or_else(|| default_name.to_string()),
        rate_bps: c.rate_bps,
        rtt,
        loss: c.loss,
        queue: c.queue,
        outages: c.outages,
        aqm: c.aqm,
        trace: c.trace,
        policer: c.policer,
        mtu: c.mtu,
    })
}

/// A flow's `paths` as indices into `topology.paths`, with backup flags.
fn flow_paths(
    cx: &Ctx,
    i: usize,
    f: &RawFlow,
    names: Vec<String>,
    topology: &Topology,
    what: &str,
) -> Result<Vec<PathUse>, ScenarioError> {
    if names.is_empty() {
        return Err(cx.invalid(format!("flow[{i}].paths"), format!("needs at least one {what}")));
    }
    if let Some(j) = (1..names.len()).find(|&j| names[..j].contains(&names[j])) {
        return Err(cx.invalid(
            format!("flow[{i}].paths[{j}]"),
            format!("{:?} is listed twice; a flow opens one subflow per path", names[j]),
        ));
    }
    for b in &f.backup {
        if !names.contains(b) {
            return Err(
                cx.invalid(format!("flow[{i}].backup"), format!("{b:?} is not one of this flow's paths {names:?}"))
            );
        }
    }
    // Looked up once per path name: a map, so large files parse in linear time.
    let ids: BTreeMap<&str, usize> = topology.paths.iter().enumerate().map(|(i, p)| (p.name.as_str(), i)).collect();
    names
        .iter()
        .enumerate()
        .map(|(j, p)| {
            let idx = *ids.get(p.as_str()).ok_or_else(|| {
                let known: Vec<&str> = topology.paths.iter().map(|p| p.name.as_str()).collect();
                cx.invalid(format!("flow[{i}].paths[{j}]"), format!("no {what} named {p:?}: allowed {known:?}"))
            })?;
            Ok((idx, p.clone(), f.backup.contains(p)))
        })
        .collect()
}

fn hybrid(cx: &Ctx, raw: &RawScenario) -> Result<Net, ScenarioError> {
    let t = &raw.topology;
    if t.link.is_empty() {
        return Err(cx.invalid("topology.link", "hybrid-access needs at least one [[topology.link]] access link"));
    }
    let access = access_links(cx, &t.link)?;
    let core = match &t.core_rate {
        Some(r) => cx.field("topology.core_rate", parse_rate(r))?,
        None => 2_000_000_000,
    };
    let topology = braid_sim::topology::hybrid_access(&access, core);
    let all: Vec<String> = access.iter().map(|a| a.name.clone()).collect();
    let routes = raw
        .flow
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let names = f.paths.clone().unwrap_or_else(|| all.clone());
            Ok(Routes::Paths(flow_paths(cx, i, f, names, &topology, "access link")?))
        })
        .collect::<Result<_, ScenarioError>>()?;
    let cross_routes = cross_paths(cx, raw, &topology)?;
    let link_keys =
        access.iter().enumerate().map(|(i, a)| (a.name.clone(), format!("topology.link[{i}].queue"))).collect();
    let warnings = slow_core(&access, core).into_iter().collect();
    Ok(Net { topology, fabric: None, routes, cross_routes, link_keys, warnings })
}

/// A core link (deep queue) slower than the access links together: when
/// flows fill their paths, the queue builds in the core, 100,000 packets
/// deep, and the access links' queues the scenario describes stay empty.
fn slow_core(access: &[LinkParams], core_bps: u64) -> Option<String> {
    let together = access.iter().fold(0u64, |sum, l| sum.saturating_add(l.rate_bps));
    (core_bps < together).then(|| {
        format!(
            "key `topology.core_rate`: the core link's {core_bps} bit/s is less than the {} access links' \
             {together} bit/s together: when the flows fill their paths, they queue in the core ({} packets \
             deep), not at the access links; make core_rate at least {together} bit/s",
            access.len(),
            braid_sim::topology::DEEP_QUEUE_PACKETS
        )
    })
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

/// Names of flow `i`'s flows before expansion by a matrix or arrivals:
/// the table's name, or `NAME-j` for each of `count`.
pub(super) fn instance_names(i: usize, f: &RawFlow) -> Vec<String> {
    let name = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
    match f.count {
        Some(n) => (0..n).map(|j| format!("{name}-{j}")).collect(),
        None => vec![name],
    }
}

/// A dumbbell's subflows in all: each has its access links and a flow's
/// state in a run, so a `count` of a million would take tens of gigabytes
/// before the run could refuse it.
const MAX_DUMBBELL_SUBFLOWS: usize = 200_000;

fn dumbbell(cx: &Ctx, raw: &RawScenario) -> Result<Net, ScenarioError> {
    let t = &raw.topology;
    let b = t.bottleneck.as_ref().ok_or_else(|| {
        cx.invalid("topology.bottleneck", "dumbbell needs a [topology.bottleneck] with at least `rate`")
    })?;
    let bottleneck = link_params(cx, "topology.bottleneck", b, "bottleneck")?;
    let mut paths = Vec::new();
    let mut per_table = Vec::new();
    for (i, f) in raw.flow.iter().enumerate() {
        let key = |k: &str| format!("flow[{i}].{k}");
        if f.arrival_rate.is_some() {
            return Err(cx.invalid(
                key("arrival_rate"),
                "dumbbell flows cannot arrive at random (each has its own access link); use kind = \"graph\"",
            ));
        }
        let n = cx.within(&key("subflows"), f.subflows.unwrap_or(1), 1..=8, "1 to 8")? as usize;
        let total = paths.len().saturating_add(f.count.unwrap_or(1).saturating_mul(n));
        if total > MAX_DUMBBELL_SUBFLOWS {
            return Err(cx.invalid(
                key("count"),
                format!(
                    "the flows make {total} subflows in all, each with its own access links: at most \
                     {MAX_DUMBBELL_SUBFLOWS} (10,000 two-subflow flows take about 0.7 GB)"
                ),
            ));
        }
        let extra = match &f.extra_rtt {
            Some(r) => cx.field(&key("extra_rtt"), parse_duration(r))?,
            None => Duration::ZERO,
        };
        let mut table = Vec::new();
        for name in instance_names(i, f) {
            let first = paths.len();
            table.push((0..n).map(|k| (first + k, format!("{name}/{k}"), false)).collect());
            paths.extend((0..n).map(|k| (format!("{name}/{k}"), extra)));
        }
        per_table.push(Routes::PerFlow(table));
    }
    let access_rate = match &t.access_rate {
        Some(r) => cx.field("topology.access_rate", parse_rate(r))?,
        None => braid_sim::topology::DUMBBELL_ACCESS_RATE_BPS,
    };
    let topology = braid_sim::topology::dumbbell(&bottleneck, access_rate, &paths);
    // Path names are unique (flow names are), so only the bottleneck's own
    // name can clash with an access link's.
    let clash = topology
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
    let cross_routes = cross_paths(cx, raw, &topology)?;
    let warnings = slow_access_links(access_rate, paths.len(), bottleneck.rate_bps).into_iter().collect();
    let link_keys = vec![(bottleneck.name, "topology.bottleneck.queue".into())];
    Ok(Net { topology, fabric: None, routes: per_table, cross_routes, link_keys, warnings })
}

/// A dumbbell whose access links (one per subflow, each with a deep queue)
/// cannot fill the bottleneck together: its queue then builds at the access
/// links, 100,000 packets deep, not at the bottleneck the scenario describes.
fn slow_access_links(access_bps: u64, links: usize, bottleneck_bps: u64) -> Option<String> {
    let together = access_bps.saturating_mul(links as u64);
    (together < bottleneck_bps).then(|| {
        format!(
            "key `topology.access_rate`: the {links} access links (one per subflow) carry {together} bit/s \
             together, less than the bottleneck's {bottleneck_bps} bit/s: the subflows queue at their own access \
             links ({} packets deep), not at the bottleneck; make access_rate at least {} bit/s",
            braid_sim::topology::DEEP_QUEUE_PACKETS,
            bottleneck_bps.div_ceil(links.max(1) as u64)
        )
    })
}

/// The paths `[[cross]]` tables name (kinds with named paths).
fn cross_paths(cx: &Ctx, raw: &RawScenario, topology: &Topology) -> Result<Vec<Routes>, ScenarioError> {
    raw.cross
        .iter()
        .enumerate()
        .map(|(i, c)| {
            for (k, set) in [("from", c.from.is_some()), ("to", c.to.is_some())] {
                if set {
                    return Err(
                        cx.invalid(format!("cross[{i}].{k}"), "belongs to kinds fattree and bcube; name a `path`")
                    );
                }
            }
            let p = c
                .path
                .as_ref()
                .ok_or_else(|| cx.invalid(format!("cross[{i}].path"), "cross traffic needs a `path`"))?;
            let idx = topology.paths.iter().position(|x| &x.name == p).ok_or_else(|| {
                let known: Vec<&str> = topology.paths.iter().map(|p| p.name.as_str()).collect();
                cx.invalid(format!("cross[{i}].path"), format!("no path named {p:?}: allowed {known:?}"))
            })?;
            Ok(Routes::Paths(vec![(idx, p.clone(), false)]))
        })
        .collect()
}

fn graph(cx: &Ctx, raw: &RawScenario) -> Result<Net, ScenarioError> {
    let t = &raw.topology;
    if t.link.is_empty() || t.path.is_empty() {
        let key = if t.link.is_empty() { "topology.link" } else { "topology.path" };
        return Err(cx.invalid(key, "a graph needs [[topology.link]] tables and [[topology.path]] tables over them"));
    }
    let mut topo = Topology::default();
    let mut nodes: BTreeMap<String, usize> = BTreeMap::new();
    let mut node = |topo: &mut Topology, name: &str| -> usize {
        *nodes.entry(name.to_string()).or_insert_with(|| topo.add_node(name))
    };
    let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
    let mut link_keys = Vec::new();
    for (i, l) in t.link.iter().enumerate() {
        let key = format!("topology.link[{i}]");
        if l.rtt.is_some() {
            return Err(cx.invalid(format!("{key}.rtt"), "graph links take a one-way `delay`, not `rtt`"));
        }
        let name = l.name.clone().ok_or_else(|| cx.invalid(format!("{key}.name"), "graph links need a `name`"))?;
        if let Some(other) = link_keys.iter().position(|(n, _)| *n == name) {
            return Err(
                cx.invalid(format!("{key}.name"), format!("{name:?} is already the name of topology.link[{other}]"))
            );
        }
        let (from, to) = match (&l.from, &l.to) {
            (Some(a), Some(b)) if a != b => (node(&mut topo, a), node(&mut topo, b)),
            (Some(_), Some(_)) => return Err(cx.invalid(format!("{key}.to"), "a link joins two different nodes")),
            (None, _) => return Err(cx.invalid(format!("{key}.from"), "graph links need `from` and `to` nodes")),
            (_, None) => return Err(cx.invalid(format!("{key}.to"), "graph links need `from` and `to` nodes")),
        };
        let delay = match &l.delay {
            Some(d) => cx.field(&format!("{key}.delay"), parse_duration(d))?,
            None => Duration::ZERO,
        };
        let c = link_common(cx, &key, l, delay + delay)?;
        let spec = LinkSpec {
            name: name.clone(),
            rate_bps: c.rate_bps,
            delay,
            queue: c.queue,
            loss: c.loss,
            outages: c.outages,
            aqm: c.aqm,
            trace: c.trace,
            policer: c.policer,
            mtu: c.mtu,
        };
        by_name.insert(name.clone(), topo.add_link(spec, from, to));
        link_keys.push((name, format!("{key}.queue")));
    }
    // A link name in a route: the file's link, or the mirror of X for X-rev.
    let resolve = |topo: &mut Topology, by_name: &mut BTreeMap<String, usize>, name: &str| -> Option<usize> {
        if let Some(&l) = by_name.get(name) {
            return Some(l);
        }
        let &of = by_name.get(name.strip_suffix("-rev")?)?;
        let (from, to) = topo.ends[of];
        let spec = &topo.links[of];
        let mut mirror = LinkSpec::new(name, spec.rate_bps, spec.delay, DEEP_QUEUE);
        mirror.outages = spec.outages.clone();
        mirror.mtu = spec.mtu;
        let l = topo.add_link(mirror, to, from);
        by_name.insert(name.to_string(), l);
        Some(l)
    };
    for (i, p) in t.path.iter().enumerate() {
        let key = format!("topology.path[{i}]");
        if let Some(other) = topo.paths.iter().position(|x| x.name == p.name) {
            return Err(cx.invalid(
                format!("{key}.name"),
                format!("{:?} is already the name of topology.path[{other}]", p.name),
            ));
        }
        let mut route = |list: &[String], what: &str, topo: &mut Topology| -> Result<Vec<usize>, ScenarioError> {
            if list.is_empty() {
                return Err(cx.invalid(format!("{key}.{what}"), "a route needs at least one link"));
            }
            list.iter()
                .enumerate()
                .map(|(j, n)| {
                    resolve(topo, &mut by_name, n).ok_or_else(|| {
                        cx.invalid(
                            format!("{key}.{what}[{j}]"),
                            format!("no link named {n:?} (nor a link {n:?} mirrors)"),
                        )
                    })
                })
                .collect()
        };
        let forward = route(&p.links, "links", &mut topo)?;
        let (start, end) = (topo.ends[forward[0]].0, topo.ends[*forward.last().expect("not empty")].1);
        let gap = |topo: &Topology, r: &[usize], what: &str, names: &[String], from: usize, to: usize| match topo
            .check_route(r, from, to)
        {
            Ok(()) => Ok(()),
            Err(RouteError::Gap { at }) => {
                let (a, b) = (topo.ends[r[at - 1]].1, topo.ends[r[at]].0);
                Err(cx.invalid(
                    format!("{key}.{what}[{at}]"),
                    format!(
                        "link {:?} starts at node {:?} but {:?} before it ends at {:?}: a route's links must join",
                        names[at],
                        topo.nodes[b],
                        names[at - 1],
                        topo.nodes[a]
                    ),
                ))
            }
            Err(_) => Err(cx.invalid(
                format!("{key}.{what}"),
                format!(
                    "must lead from node {:?} back to node {:?}, where the path starts",
                    topo.nodes[from], topo.nodes[to]
                ),
            )),
        };
        gap(&topo, &forward, "links", &p.links, start, end)?;
        let rev_names: Vec<String> = match &p.reverse {
            Some(r) => r.clone(),
            None => p.links.iter().rev().map(|n| format!("{n}-rev")).collect(),
        };
        // An error in the default route names what the user did not write.
        let defaulted = |e: ScenarioError| match (e, &p.reverse) {
            (ScenarioError::Invalid { file, key, message }, None) => ScenarioError::Invalid {
                file,
                key,
                message: format!(
                    "{message} (no `reverse` given: the default route is {rev_names:?}, each link's NAME-rev \
                     in reverse order; set `reverse` to route the ACKs another way)"
                ),
            },
            (e, _) => e,
        };
        let reverse = route(&rev_names, "reverse", &mut topo).map_err(defaulted)?;
        gap(&topo, &reverse, "reverse", &rev_names, end, start).map_err(defaulted)?;
        topo.paths.push(Path { name: p.name.clone(), forward, reverse });
    }
    let routes = raw
        .flow
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let names = f.paths.clone().ok_or_else(|| {
                cx.invalid(format!("flow[{i}].paths"), "graph flows list their paths: `paths = [\"NAME\", ...]`")
            })?;
            Ok(Routes::Paths(flow_paths(cx, i, f, names, &topo, "path")?))
        })
        .collect::<Result<_, ScenarioError>>()?;
    let cross_routes = cross_paths(cx, raw, &topo)?;
    Ok(Net { topology: topo, fabric: None, routes, cross_routes, link_keys, warnings: Vec::new() })
}

fn fabric(cx: &Ctx, raw: &RawScenario) -> Result<Net, ScenarioError> {
    let t = &raw.topology;
    let rate =
        t.rate.as_deref().ok_or_else(|| cx.invalid("topology.rate", format!("{} needs the links' `rate`", t.kind)))?;
    let rate_bps = cx.field("topology.rate", parse_rate(rate))?;
    let delay = match &t.delay {
        Some(d) => cx.field("topology.delay", parse_duration(d))?,
        None => Duration::from_micros(1),
    };
    let queue = |key: &str, v: &Option<String>, default: u32| -> Result<QueueLimit, ScenarioError> {
        match v.as_deref().map(parse_queue) {
            None => Ok(QueueLimit::Packets(default)),
            Some(Ok(QueueSize::Bdp(_))) => {
                Err(cx.invalid(key, "a fabric's queues are in packets (\"100p\") or bytes (\"150KB\"), not BDPs"))
            }
            Some(q) => Ok(queue_limit(cx.field(key, q)?, rate_bps, Duration::ZERO)),
        }
    };
    let mtu = t.mtu.map(|m| cx.within("topology.mtu", m, 576..=65_535, MTU_RANGE)).transpose()?;
    let mut fabric = if t.kind == "fattree" {
        let k =
            t.k.ok_or_else(|| cx.invalid("topology.k", "fattree needs `k`, the switches' port count (8: 128 hosts)"))?;
        let switch_queue = queue("topology.queue", &t.queue, 100)?;
        let p = FatTreeParams {
            k: k as usize,
            rate_bps,
            delay,
            queue: switch_queue,
            aqm: parse_aqm(cx, "topology.aqm", t.aqm.as_deref(), switch_queue)?,
            host_queue: queue("topology.host_queue", &t.host_queue, 1000)?,
            oversubscription: t.oversubscription.unwrap_or(1) as usize,
        };
        let tree = FatTree::new(&p)
            .map_err(|m| cx.invalid(if m.starts_with("k ") { "topology.k" } else { "topology.oversubscription" }, m))?;
        let ecmp = match t.ecmp.as_deref().unwrap_or("hash") {
            "hash" => Ecmp::Hash,
            "distinct" => Ecmp::Distinct,
            other => {
                return Err(
                    cx.invalid("topology.ecmp", format!("unknown ECMP mode {other:?}: allowed \"hash\", \"distinct\""))
                )
            }
        };
        Fabric::FatTree(tree, ecmp)
    } else {
        let n = t.n.ok_or_else(|| cx.invalid("topology.n", "bcube needs `n`, the switches' port count"))?;
        let k = t.k.ok_or_else(|| cx.invalid("topology.k", "bcube needs `k`, the levels above the first"))?;
        let port_queue = queue("topology.queue", &t.queue, 100)?;
        let p = BCubeParams {
            n: n as usize,
            k: k as usize,
            rate_bps,
            delay,
            queue: port_queue,
            aqm: parse_aqm(cx, "topology.aqm", t.aqm.as_deref(), port_queue)?,
        };
        Fabric::BCube(
            BCube::new(&p).map_err(|m| cx.invalid(if m.starts_with("n ") { "topology.n" } else { "topology.k" }, m))?,
        )
    };
    for link in &mut fabric.topology_mut().links {
        link.mtu = mtu;
    }
    let hosts = fabric.hosts();
    let host = |key: String, name: &str| -> Result<usize, ScenarioError> {
        name.strip_prefix('h')
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&h| h < hosts && name == format!("h{h}"))
            .ok_or_else(|| cx.invalid(key, format!("no host {name:?}: hosts are \"h0\" to \"h{}\"", hosts - 1)))
    };
    let (mut routes, mut warnings) = (Vec::new(), Vec::new());
    for (i, f) in raw.flow.iter().enumerate() {
        let key = |k: &str| format!("flow[{i}].{k}");
        let subflows = cx.within(&key("subflows"), f.subflows.unwrap_or(1), 1..=64, "1 to 64")? as usize;
        let pairs = match (&f.matrix, &f.from, &f.to) {
            (Some(m), None, None) if m == "neighbours" => {
                if f.sources.is_some() {
                    return Err(cx.invalid(key("sources"), "matrix = \"neighbours\" takes every host"));
                }
                Pairs::List((0..hosts).flat_map(|s| fabric.neighbours(s).into_iter().map(move |d| (s, d))).collect())
            }
            (Some(m), None, None) => {
                let matrix = match m.as_str() {
                    "permutation" => Matrix::Permutation,
                    "random" => Matrix::Random {
                        destinations: cx.within(&key("destinations"), f.destinations.unwrap_or(1), 1..=100_000, "1 or more")?
                            as usize,
                    },
                    "sparse" => {
                        let fr = f.fraction.unwrap_or(0.3);
                        if !(fr > 0.0 && fr <= 1.0) {
                            return Err(cx.invalid(key("fraction"), format!("{} is not a fraction in (0, 1]", shown(fr))));
                        }
                        Matrix::Sparse { fraction: fr }
                    }
                    other => {
                        return Err(cx.invalid(
                            key("matrix"),
                            format!("unknown traffic matrix {other:?}: allowed \"permutation\" (TP1), \"random\" (TP2), \"sparse\" (TP3), \"neighbours\""),
                        ))
                    }
                };
                if f.destinations.is_some() && !matches!(matrix, Matrix::Random { .. }) {
                    return Err(cx.invalid(key("destinations"), "belongs to matrix = \"random\""));
                }
                if f.fraction.is_some() && !matches!(matrix, Matrix::Sparse { .. }) {
                    return Err(cx.invalid(key("fraction"), "belongs to matrix = \"sparse\""));
                }
                let members: Vec<usize> = match &f.sources {
                    None => (0..hosts).collect(),
                    Some(s) => {
                        let every =
                            cx.within(&format!("{}.every", key("sources")), s.every, 1..=100_000, "1 or more")?
                                as usize;
                        if let Some(o) = s.offset.iter().find(|&&o| o as usize >= every) {
                            return Err(cx.invalid(
                                format!("{}.offset", key("sources")),
                                format!("{o} must be below every = {every}"),
                            ));
                        }
                        (0..hosts).filter(|h| s.offset.contains(&((h % every) as u32))).collect()
                    }
                };
                if members.len() < 2 {
                    return Err(cx.invalid(key("sources"), "a traffic matrix needs at least two hosts"));
                }
                if let Matrix::Random { destinations } = matrix {
                    if destinations >= members.len() {
                        warnings.push(format!(
                            "key `{}`: {destinations} destinations, but each host of the matrix has only {} others; \
                             it sends to every one of them",
                            key("destinations"),
                            members.len() - 1
                        ));
                    }
                }
                Pairs::Matrix(matrix, members)
            }
            (None, Some(a), Some(b)) => {
                let (s, d) = (host(key("from"), a)?, host(key("to"), b)?);
                if s == d {
                    return Err(cx.invalid(key("to"), "a flow goes from one host to another"));
                }
                Pairs::One(s, d)
            }
            (Some(_), _, _) => {
                return Err(cx.invalid(key("matrix"), "give either `matrix` or `from` and `to`, not both"))
            }
            (None, None, _) => {
                return Err(cx.invalid(key("from"), "fabric flows name hosts (`from`, `to`) or a `matrix`"))
            }
            (None, _, None) => return Err(cx.invalid(key("to"), "a flow with `from` needs `to`")),
        };
        for (k, set) in [
            ("destinations", f.destinations.is_some()),
            ("fraction", f.fraction.is_some()),
            ("sources", f.sources.is_some()),
        ] {
            if set && f.matrix.is_none() {
                return Err(cx.invalid(key(k), "belongs to flows with a `matrix`"));
            }
        }
        routes.push(Routes::Hosts { pairs, subflows });
    }
    let mut cross_routes = Vec::new();
    for (i, c) in raw.cross.iter().enumerate() {
        if c.path.is_some() {
            return Err(cx.invalid(
                format!("cross[{i}].path"),
                format!("{} cross traffic names hosts: `from` and `to`", t.kind),
            ));
        }
        let need = |k: &str, v: &Option<String>| {
            v.clone().ok_or_else(|| cx.invalid(format!("cross[{i}].{k}"), "fabric cross traffic needs `from` and `to`"))
        };
        let (s, d) = (
            host(format!("cross[{i}].from"), &need("from", &c.from)?)?,
            host(format!("cross[{i}].to"), &need("to", &c.to)?)?,
        );
        if s == d {
            return Err(cx.invalid(format!("cross[{i}].to"), "cross traffic goes from one host to another"));
        }
        cross_routes.push(Routes::Hosts { pairs: Pairs::One(s, d), subflows: 1 });
    }
    // Byte-sized queues are checked per link later: name the key that set each.
    let topology = fabric.topology().clone();
    let link_keys = topology
        .links
        .iter()
        .zip(&topology.ends)
        .map(|(l, &(from, _))| {
            let host_uplink = matches!(fabric, Fabric::FatTree(..)) && from < hosts;
            (l.name.clone(), if host_uplink { "topology.host_queue" } else { "topology.queue" }.to_string())
        })
        .collect();
    Ok(Net { topology, fabric: Some(fabric), routes, cross_routes, link_keys, warnings })
}
