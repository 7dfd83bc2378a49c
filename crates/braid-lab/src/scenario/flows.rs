//! `[[flow]]` and `[[cross]]` tables: validated once into a [`Plan`], then
//! expanded into flows for a seed.
//!
//! One `[[flow]]` table is one flow, or many:
//! - `count = N` makes `NAME-0` ... `NAME-{N-1}`, their starts spread evenly
//!   over `start_spread` from `start`;
//! - on a fabric, `matrix` makes one flow per pair of hosts of a traffic
//!   matrix (`NAME-h3-h17`; with `count`, `NAME-h3-h17-0` ...);
//! - `arrival_rate = R` makes a Poisson process of R flows a second (per
//!   flow the table would otherwise make, or per source host of a
//!   `"random"` matrix, each arrival to a fresh random destination) from
//!   `start` until `arrival_until` (default: the end of the run), named
//!   `NAME-0` ... in order of arrival; they need a `size`.
//!
//! `size` is a size (`"70KB"`) or a distribution drawn for every flow:
//! `{ dist = "exponential", mean = "70KB" }`, `{ dist = "pareto", mean =
//! "70KB", shape = 1.5 }` or `{ dist = "uniform", min = "1KB", max =
//! "139KB" }`.

use std::collections::BTreeMap;
use std::sync::Arc;

use braid_proto::{cc, sched, Config, Duration, Instant, SendAutotune};
use braid_sim::topology::{Path, Topology};
use braid_sim::traffic::{poisson_arrivals, spread_starts, Matrix, SizeDist};
use braid_sim::{CrossTraffic, FlowSpec, QueueLimit, Source};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;

use super::net::{self, Net, Pairs, PathUse, Routes};
use super::{Ctx, FlowGroup, RawScenario, Scenario, ScenarioError};
use crate::units::{parse_duration, parse_positive_duration, parse_rate, parse_size, shown};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct RawFlow {
    pub name: Option<String>,
    cc: Option<String>,
    scheduler: Option<String>,
    scheduler_settings: Option<RawSchedSettings>,
    pub paths: Option<Vec<String>>,
    #[serde(default)]
    pub backup: Vec<String>,
    pub subflows: Option<u32>,
    pub extra_rtt: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub matrix: Option<String>,
    pub destinations: Option<u32>,
    pub fraction: Option<f64>,
    pub sources: Option<RawSources>,
    pub count: Option<usize>,
    start_spread: Option<String>,
    pub arrival_rate: Option<f64>,
    arrival_until: Option<String>,
    start: Option<String>,
    size: Option<toml::Value>,
    app_rate: Option<String>,
    app_message: Option<String>,
    send_buffer: Option<String>,
    recv_buffer: Option<String>,
    verify_payload: Option<bool>,
    wire: Option<bool>,
    min_rto: Option<String>,
    ack_every: Option<u32>,
    max_ack_delay: Option<String>,
    quickacks: Option<u32>,
    restart_after_idle: Option<bool>,
    rack_tlp: Option<bool>,
    tso_defer: Option<bool>,
    early_joins: Option<bool>,
    initial_window: Option<u32>,
    mss: Option<u32>,
    mss_floor: Option<u32>,
    opportunistic: Option<bool>,
    nodelay: Option<bool>,
    failure_timeout: Option<String>,
}

/// `sources = { every = 3, offset = [1, 2] }`: hosts whose index modulo
/// `every` is one of `offset`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct RawSources {
    pub every: u32,
    #[serde(default = "zero")]
    pub offset: Vec<u32>,
}

fn zero() -> Vec<u32> {
    vec![0]
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
struct RawSchedSettings {
    num_segments: Option<u32>,
    cwnd_limited: Option<bool>,
    beta: Option<f64>,
    lambda: Option<f64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub(super) struct RawCross {
    name: Option<String>,
    pub path: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    rate: String,
    packet: Option<String>,
    start: Option<String>,
    stop: Option<String>,
    on: Option<String>,
    off: Option<String>,
}

/// Refuses tables that make more than [`MAX_FLOWS`] flows in a run of
/// `duration`, before they are drawn.
fn check_flows(cx: &Ctx, tables: &[Table], routes: &[Routes], duration: Duration) -> Result<(), ScenarioError> {
    let mut flows = 0.0;
    for (i, (t, routes)) in tables.iter().zip(routes).enumerate() {
        let here = flows_made(t, routes, Instant::ZERO + duration);
        flows += here;
        if flows > MAX_FLOWS {
            let key = if t.arrivals.is_some() { "arrival_rate" } else { "count" };
            return Err(cx.invalid(
                format!("flow[{i}].{key}"),
                format!("the scenario makes about {flows:.0} flows (this table {here:.0}): at most {MAX_FLOWS}"),
            ));
        }
    }
    Ok(())
}

/// About how many flows table `t` makes in a run ending at `end` (at most
/// as many, but for the random number of Poisson arrivals).
fn flows_made(t: &Table, routes: &Routes, end: Instant) -> f64 {
    let copies = t.names.len() as f64;
    let bases = match routes {
        Routes::Paths(_) | Routes::PerFlow(_) | Routes::Hosts { pairs: Pairs::One(..), .. } => copies,
        Routes::Hosts { pairs: Pairs::Matrix(Matrix::Random { .. }, members), .. } if t.arrivals.is_some() => {
            members.len() as f64
        }
        Routes::Hosts { pairs: Pairs::Matrix(Matrix::Random { destinations }, members), .. } => {
            copies * members.len() as f64 * (*destinations).min(members.len().saturating_sub(1)) as f64
        }
        Routes::Hosts { pairs: Pairs::Matrix(Matrix::Sparse { fraction }, members), .. } => {
            copies * (members.len() as f64 * fraction).ceil()
        }
        Routes::Hosts { pairs: Pairs::Matrix(_, members), .. } => copies * members.len() as f64,
        Routes::Hosts { pairs: Pairs::List(l), .. } => copies * l.len() as f64,
    };
    match t.arrivals {
        Some((rate, until)) => bases * rate * until.unwrap_or(end).saturating_since(t.template.start).as_secs_f64(),
        None => bases,
    }
}

/// The names the flow and cross tables give, with their keys.
pub(super) fn names_given<'a>(flows: &'a [RawFlow], cross: &'a [RawCross]) -> Vec<(String, &'a str)> {
    let f = flows.iter().enumerate().filter_map(|(i, f)| Some((format!("flow[{i}].name"), f.name.as_deref()?)));
    let c = cross.iter().enumerate().filter_map(|(i, c)| Some((format!("cross[{i}].name"), c.name.as_deref()?)));
    f.chain(c).collect()
}

/// A validated scenario before its random draws.
#[derive(Clone, Debug)]
pub(super) struct Plan {
    name: String,
    description: String,
    file: String,
    sample_interval: Duration,
    net: Net,
    tables: Vec<Table>,
    cross: Vec<CrossTraffic>,
}

/// One `[[flow]]` table.
#[derive(Clone, Debug)]
struct Table {
    name: String,
    /// Everything but the subflows, start and size.
    template: FlowSpec,
    /// Its flows' names before a matrix or arrivals (`count` replicas).
    names: Vec<String>,
    spread: Duration,
    /// Poisson arrivals: flows a second, and until when (`None`: the end
    /// of the run, whatever it is).
    arrivals: Option<(f64, Option<Instant>)>,
    size: Option<SizeDist>,
    /// The table named hosts or a matrix rather than paths.
    matrix: bool,
}

/// Random streams for traffic, apart from the links' (numbered from 0).
const TRAFFIC_STREAM: u64 = 1 << 40;

/// Flows a scenario may make in all (each takes a flow's state in a run:
/// a million is tens of gigabytes).
const MAX_FLOWS: f64 = 1e6;

pub(super) fn plan(
    cx: &Ctx,
    raw: &RawScenario,
    net: Net,
    duration: Duration,
    sample_interval: Duration,
) -> Result<Plan, ScenarioError> {
    let mut tables = Vec::new();
    for (i, f) in raw.flow.iter().enumerate() {
        tables.push(table(cx, i, f)?);
    }
    check_flows(cx, &tables, &net.routes, duration)?;
    let mut names: Vec<(&str, usize)> =
        tables.iter().enumerate().flat_map(|(i, t)| t.names.iter().map(move |n| (n.as_str(), i))).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0].0 == w[1].0) {
        let ((name, first), (_, second)) = (w[0], w[1]);
        return Err(cx.invalid(
            format!("flow[{second}].name"),
            format!("{name:?} is also a name of flow[{first}]; names must be unique"),
        ));
    }
    check_byte_queues(cx, &net, &tables)?;
    let cross: Vec<CrossTraffic> =
        raw.cross.iter().enumerate().map(|(i, c)| cross(cx, i, c)).collect::<Result<_, _>>()?;
    // The summary lists sources by name.
    for (i, c) in cross.iter().enumerate() {
        if let Some(other) = cross[..i].iter().position(|o| o.name == c.name) {
            return Err(
                cx.invalid(format!("cross[{i}].name"), format!("{:?} is already the name of cross[{other}]", c.name))
            );
        }
    }
    Ok(Plan {
        name: raw.name.clone().unwrap_or_else(|| "unnamed".into()),
        description: raw.description.clone().unwrap_or_default(),
        file: cx.file.to_string(),
        sample_interval,
        net,
        tables,
        cross,
    })
}

fn names_of(list: &[(&str, &str)]) -> String {
    list.iter().map(|(n, _)| format!("{n:?}")).collect::<Vec<_>>().join(", ")
}

/// A buffer setting: a size, or an autotuning mode among `modes` with an
/// optional `:SIZE` maximum (`"kernel:16MiB"`).
fn parse_buffer<'m>(s: &str, modes: &[&'m str]) -> Result<(Option<&'m str>, Option<u64>), String> {
    let (word, max) = s.split_once(':').map_or((s, None), |(w, m)| (w, Some(m)));
    let Some(&mode) = modes.iter().find(|&&m| m == word.trim()) else {
        return match max {
            None => parse_size(s).map(|n| (None, Some(n))).map_err(|e| {
                let forms: Vec<String> = modes.iter().map(|m| format!("{m:?}, \"{m}:MAX\"")).collect();
                format!("{e}; or an autotuning mode: {}", forms.join(", "))
            }),
            Some(_) => Err(format!("{word:?} is not an autotuning mode: allowed {modes:?} (\"MODE:MAX\") or a size")),
        };
    };
    Ok((Some(mode), max.map(|m| parse_size(m.trim())).transpose()?))
}

/// A size key's value: a fixed size or a distribution.
fn size_dist(cx: &Ctx, key: &str, v: &toml::Value) -> Result<SizeDist, ScenarioError> {
    let size = |k: &str, v: Option<&toml::Value>| -> Result<u64, ScenarioError> {
        let k = format!("{key}.{k}");
        match v {
            Some(toml::Value::String(s)) => match cx.field(&k, parse_size(s))? {
                0 => Err(cx.invalid(k, "must be at least 1B")),
                n => Ok(n),
            },
            Some(_) => Err(cx.invalid(k, "a size is a string with a unit, like \"70KB\"")),
            None => Err(cx.invalid(k, "is missing")),
        }
    };
    match v {
        toml::Value::String(s) => match cx.field(key, parse_size(s))? {
            0 => Err(cx.invalid(key, "must be at least 1B")),
            n => Ok(SizeDist::Fixed(n)),
        },
        toml::Value::Table(t) => {
            let dist = t.get("dist").and_then(|d| d.as_str()).unwrap_or("");
            let allowed: &[&str] = match dist {
                "exponential" => &["dist", "mean"],
                "pareto" => &["dist", "mean", "shape"],
                "uniform" => &["dist", "min", "max"],
                _ => {
                    return Err(cx.invalid(
                        format!("{key}.dist"),
                        "a size distribution needs `dist`: \"exponential\", \"pareto\" or \"uniform\"",
                    ))
                }
            };
            if let Some(k) = t.keys().find(|k| !allowed.contains(&k.as_str())) {
                return Err(
                    cx.invalid(format!("{key}.{k}"), format!("not a key of dist = {dist:?}: allowed {allowed:?}"))
                );
            }
            Ok(match dist {
                "exponential" => SizeDist::Exponential { mean: size("mean", t.get("mean"))? as f64 },
                "pareto" => {
                    let shape = t.get("shape").and_then(|s| s.as_float().or(s.as_integer().map(|i| i as f64)));
                    let shape = shape.filter(|s| *s > 1.0 && *s <= 100.0).ok_or_else(|| {
                        cx.invalid(
                            format!("{key}.shape"),
                            "a Pareto shape is a number above 1 (the mean is infinite below)",
                        )
                    })?;
                    SizeDist::Pareto { mean: size("mean", t.get("mean"))? as f64, shape }
                }
                _ => {
                    let (min, max) = (size("min", t.get("min"))?, size("max", t.get("max"))?);
                    if max < min {
                        return Err(cx.invalid(format!("{key}.max"), "must be at least `min`"));
                    }
                    SizeDist::Uniform { min, max }
                }
            })
        }
        _ => Err(cx.invalid(key, "a size is a string (\"70KB\") or a distribution table")),
    }
}

fn table(cx: &Ctx, i: usize, f: &RawFlow) -> Result<Table, ScenarioError> {
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
    if let Some(m) = f.mss_floor {
        let allowed = format!("64 bytes to the flow's mss ({})", config.mss);
        config.mss_floor = Some(cx.within(&key("mss_floor"), m, 64..=config.mss, &allowed)?);
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
    if let Some(n) = f.quickacks {
        config.quickacks = cx.within(&key("quickacks"), n, 0..=64, "0 (off) to 64")?;
    }
    if let Some(n) = f.initial_window {
        config.initial_window = cx.within(&key("initial_window"), n, 1..=1000, "1 to 1000 segments")?;
    }
    config.opportunistic_retransmission = f.opportunistic;
    config.nodelay = f.nodelay.unwrap_or(false);
    config.restart_after_idle = f.restart_after_idle.unwrap_or(false);
    config.rack_tlp = f.rack_tlp.unwrap_or(false);
    config.tso_defer = f.tso_defer.unwrap_or(false);
    // The simulated server keeps state from the opening, so it can take a
    // join that overtakes the `Establish`: subflows start one round trip
    // earlier than Linux's, as every figure in the docs was measured.
    config.early_joins = f.early_joins.unwrap_or(true);
    if let Some(t) = &f.failure_timeout {
        config.failure_timeout = cx.field(&key("failure_timeout"), parse_positive_duration(t))?;
    }
    let start = match &f.start {
        Some(s) => Instant::ZERO + cx.field(&key("start"), parse_duration(s))?,
        None => Instant::ZERO,
    };
    let size = f.size.as_ref().map(|v| size_dist(cx, &key("size"), v)).transpose()?;
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
    if let Some(n) = f.count {
        if !(1..=1_000_000).contains(&n) {
            return Err(cx.invalid(key("count"), format!("{n} is out of range: allowed 1 to 1000000")));
        }
    }
    let spread = match &f.start_spread {
        Some(_) if f.count.is_none() && f.matrix.is_none() => {
            return Err(
                cx.invalid(key("start_spread"), "spreads the starts of a table's flows; set `count` or a `matrix`")
            )
        }
        Some(_) if f.arrival_rate.is_some() => {
            return Err(cx.invalid(key("start_spread"), "flows with an `arrival_rate` start at random already"))
        }
        Some(s) => cx.field(&key("start_spread"), parse_duration(s))?,
        None => Duration::ZERO,
    };
    let arrivals = match f.arrival_rate {
        None => {
            if f.arrival_until.is_some() {
                return Err(cx.invalid(key("arrival_until"), "belongs to flows with an `arrival_rate`"));
            }
            None
        }
        Some(r) => {
            if !(r > 0.0 && r <= 1e6) {
                return Err(cx.invalid(
                    key("arrival_rate"),
                    format!("{} flows a second: allowed above 0, at most 10^6", shown(r)),
                ));
            }
            if size.is_none() {
                return Err(cx.invalid(key("size"), "flows that arrive at random need a `size` (they end)"));
            }
            let until = match &f.arrival_until {
                Some(u) => Some(Instant::ZERO + cx.field(&key("arrival_until"), parse_duration(u))?),
                None => None,
            };
            Some((r, until))
        }
    };
    let template = FlowSpec {
        name: String::new(),
        cc: cc_name,
        scheduler: sched_name,
        sched_settings,
        config,
        subflows: Vec::new(),
        start,
        size: None,
        source,
        verify_payload: f.verify_payload.unwrap_or(false),
        wire_format: f.wire.unwrap_or(false),
    };
    Ok(Table {
        name: f.name.clone().unwrap_or_else(|| format!("flow{i}")),
        template,
        names: net::instance_names(i, f),
        spread,
        arrivals,
        size,
        matrix: f.matrix.is_some(),
    })
}

fn cross(cx: &Ctx, i: usize, c: &RawCross) -> Result<CrossTraffic, ScenarioError> {
    let key = |k: &str| format!("cross[{i}].{k}");
    let bits_per_sec = cx.field(&key("rate"), parse_rate(&c.rate))?;
    let packet = match &c.packet {
        Some(p) => cx.field(&key("packet"), parse_size(p))?,
        None => 1500,
    };
    if !(1..=65_535).contains(&packet) {
        return Err(cx.invalid(key("packet"), format!("{packet} bytes: allowed 1B to 65535B")));
    }
    let time = |k: &str, v: &Option<String>| -> Result<Option<Duration>, ScenarioError> {
        v.as_ref().map(|s| cx.field(&key(k), parse_duration(s))).transpose()
    };
    let start = Instant::ZERO + time("start", &c.start)?.unwrap_or(Duration::ZERO);
    let stop = time("stop", &c.stop)?.map(|d| Instant::ZERO + d);
    if stop.is_some_and(|s| s <= start) {
        return Err(cx.invalid(key("stop"), "must be after `start`"));
    }
    let on_off = match (time("on", &c.on)?, time("off", &c.off)?) {
        (None, None) => None,
        (Some(on), Some(off)) if on > Duration::ZERO => Some((on, off)),
        (Some(_), Some(_)) => return Err(cx.invalid(key("on"), "must be longer than zero")),
        (Some(_), None) => return Err(cx.invalid(key("off"), "on/off traffic needs both `on` and `off`")),
        (None, Some(_)) => return Err(cx.invalid(key("on"), "on/off traffic needs both `on` and `off`")),
    };
    Ok(CrossTraffic {
        name: c.name.clone().unwrap_or_else(|| format!("cross{i}")),
        path: 0,
        bits_per_sec,
        packet_bytes: packet as u32,
        start,
        stop,
        on_off,
    })
}

/// A byte-limited queue, and a policer's bucket, must hold at least one full
/// data packet of every flow that crosses the link; a smaller queue drops
/// every packet that finds the link busy, a smaller bucket every full one.
/// On a fabric any flow may cross any link.
fn check_byte_queues(cx: &Ctx, net: &Net, tables: &[Table]) -> Result<(), ScenarioError> {
    let topo = &net.topology;
    for (i, (t, routes)) in tables.iter().zip(&net.routes).enumerate() {
        let mss = t.template.config.mss;
        let packet = u64::from(t.template.largest_data_packet(mss));
        let links: Vec<usize> = match routes {
            Routes::Paths(p) => p.iter().flat_map(|(p, _, _)| topo.paths[*p].forward.clone()).collect(),
            Routes::PerFlow(f) => f.iter().flatten().flat_map(|(p, _, _)| topo.paths[*p].forward.clone()).collect(),
            Routes::Hosts { .. } => (0..topo.links.len()).collect(),
        };
        for l in links {
            let link = &topo.links[l];
            let queue = match link.queue {
                QueueLimit::Bytes(b) if b < packet => Some((b, "queue")),
                _ => None,
            };
            let burst =
                link.policer.as_ref().map(|p| p.burst_bytes).filter(|&b| b < packet).map(|b| (b, "policer.burst"));
            let Some((b, what)) = queue.or(burst) else { continue };
            let key = net.link_keys.iter().find(|(n, _)| *n == link.name).map_or("topology".to_string(), |(_, k)| {
                k.strip_suffix(".queue").map_or(k.clone(), |link| format!("{link}.{what}"))
            });
            return Err(cx.invalid(
                key,
                format!(
                    "{b} bytes hold no full packet of flow[{i}] ({packet} bytes on the wire: mss {mss} + {} header bytes)",
                    packet - u64::from(mss)
                ),
            ));
        }
    }
    Ok(())
}

/// What a plan draws for one seed.
struct Expanded {
    topology: Topology,
    flows: Vec<FlowSpec>,
    flow_paths: Vec<Vec<String>>,
    groups: Vec<FlowGroup>,
    cross: Vec<CrossTraffic>,
}

/// A flow before its paths are resolved: where it goes, when, how much.
struct Drawn {
    name: String,
    start: Instant,
    to: Target,
}

enum Target {
    Paths(Vec<PathUse>),
    Hosts(usize, usize),
    /// From this host to a random other host of the matrix, drawn per flow.
    AnyFrom(usize),
}

impl Plan {
    /// Whether the flows (not only the links' random streams) change with the seed.
    pub(super) fn depends_on_seed(&self) -> bool {
        let fabric_hashes = self.net.fabric.as_ref().is_some_and(|f| f.hashes());
        fabric_hashes
            || self
                .tables
                .iter()
                .any(|t| t.matrix || t.arrivals.is_some() || t.size.is_some_and(|s| !matches!(s, SizeDist::Fixed(_))))
    }

    /// What the topology's builder found questionable, each starting with its key.
    pub(super) fn topology_warnings(&self) -> &[String] {
        &self.net.warnings
    }

    /// Refuses a run of `duration` whose flows would be too many to draw
    /// (Poisson arrivals last to the run's end).
    pub(super) fn check_flows(&self, cx: &Ctx, duration: Duration) -> Result<(), ScenarioError> {
        check_flows(cx, &self.tables, &self.net.routes, duration)
    }

    /// Whether a table's arrivals run to the end of the run, whatever it is.
    pub(super) fn arrivals_follow_the_end(&self) -> bool {
        self.tables.iter().any(|t| t.arrivals.is_some_and(|(_, until)| until.is_none()))
    }

    /// The scenario with its random parts drawn from `seed`, for a run of
    /// `duration`.
    pub(super) fn expand(plan: &Arc<Plan>, seed: u64, duration: Duration) -> Scenario {
        let Expanded { topology, flows, flow_paths, groups, cross } = plan.draw_all(seed, Instant::ZERO + duration);
        Scenario {
            name: plan.name.clone(),
            description: plan.description.clone(),
            seed,
            duration,
            sample_interval: plan.sample_interval,
            topology,
            flows,
            flow_paths,
            groups,
            cross,
            file: plan.file.clone(),
            plan: Arc::clone(plan),
        }
    }

    fn draw_all(&self, seed: u64, end: Instant) -> Expanded {
        let mut topology = self.net.topology.clone();
        let mut fabric_paths: BTreeMap<(usize, usize, usize), usize> = BTreeMap::new();
        let (mut flows, mut flow_paths, mut groups) = (Vec::new(), Vec::new(), Vec::new());
        for (i, (t, routes)) in self.tables.iter().zip(&self.net.routes).enumerate() {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(TRAFFIC_STREAM + i as u64);
            let first = flows.len();
            let subflows = match routes {
                Routes::Hosts { subflows, .. } => *subflows,
                _ => 0,
            };
            for d in self.draw(t, routes, end, &mut rng) {
                let mut spec = t.template.clone();
                spec.name = d.name;
                spec.start = d.start;
                spec.size = t.size.map(|s| s.sample(&mut rng));
                let uses = match d.to {
                    Target::Paths(p) => p,
                    Target::AnyFrom(_) => unreachable!("arrivals resolve their destination"),
                    Target::Hosts(s, dst) => {
                        let fabric = self.net.fabric.as_ref().expect("host routes come from a fabric");
                        (0..subflows)
                            .map(|k| {
                                let (c, fwd, rev) = fabric.route(seed, s, dst, flows.len() as u64, k, subflows);
                                let name = format!("h{s}>h{dst}#{c}");
                                let idx = *fabric_paths.entry((s, dst, c)).or_insert_with(|| {
                                    topology.paths.push(Path { name: name.clone(), forward: fwd, reverse: rev });
                                    topology.paths.len() - 1
                                });
                                (idx, name, false)
                            })
                            .collect()
                    }
                };
                spec.subflows = uses.iter().map(|(p, _, b)| (*p, *b)).collect();
                flow_paths.push(uses.into_iter().map(|(_, n, _)| n).collect());
                flows.push(spec);
            }
            groups.push(FlowGroup { name: t.name.clone(), flows: first..flows.len() });
        }
        let cross = self
            .cross
            .iter()
            .zip(&self.net.cross_routes)
            .enumerate()
            .map(|(i, (c, route))| {
                let path = match route {
                    Routes::Paths(p) => p[0].0,
                    Routes::Hosts { pairs: Pairs::One(s, d), .. } => {
                        let fabric = self.net.fabric.as_ref().expect("host routes come from a fabric");
                        let (ch, fwd, rev) = fabric.route(seed, *s, *d, TRAFFIC_STREAM + i as u64, 0, 1);
                        *fabric_paths.entry((*s, *d, ch)).or_insert_with(|| {
                            topology.paths.push(Path { name: format!("h{s}>h{d}#{ch}"), forward: fwd, reverse: rev });
                            topology.paths.len() - 1
                        })
                    }
                    _ => unreachable!("cross traffic has one route"),
                };
                CrossTraffic { path, ..c.clone() }
            })
            .collect();
        Expanded { topology, flows, flow_paths, groups, cross }
    }

    /// The flows one table stands for, in order, before path resolution.
    fn draw(&self, t: &Table, routes: &Routes, end: Instant, rng: &mut ChaCha8Rng) -> Vec<Drawn> {
        let start = t.template.start;
        // The table's flows without arrivals: (name, target).
        let base: Vec<(String, Target)> = match routes {
            Routes::Paths(p) => t.names.iter().map(|n| (n.clone(), Target::Paths(p.clone()))).collect(),
            Routes::PerFlow(per) => {
                t.names.iter().zip(per).map(|(n, p)| (n.clone(), Target::Paths(p.clone()))).collect()
            }
            Routes::Hosts { pairs: Pairs::One(s, d), .. } => {
                t.names.iter().map(|n| (n.clone(), Target::Hosts(*s, *d))).collect()
            }
            Routes::Hosts { pairs: Pairs::Matrix(Matrix::Random { .. }, members), .. } if t.arrivals.is_some() => {
                // Each source's arrivals go to fresh random destinations.
                members.iter().map(|&s| (String::new(), Target::AnyFrom(s))).collect()
            }
            Routes::Hosts { pairs, .. } => {
                let copies = if t.names.len() > 1 { Some(t.names.len()) } else { None };
                let list = match pairs {
                    Pairs::Matrix(m, members) => m.pairs(members, rng),
                    Pairs::List(l) => l.clone(),
                    Pairs::One(..) => unreachable!("matched above"),
                };
                list.into_iter()
                    .flat_map(|(s, d)| {
                        let name = format!("{}-h{s}-h{d}", t.name);
                        match copies {
                            None => vec![(name, Target::Hosts(s, d))],
                            Some(n) => (0..n).map(|j| (format!("{name}-{j}"), Target::Hosts(s, d))).collect(),
                        }
                    })
                    .collect()
            }
        };
        let Some((rate, until)) = t.arrivals else {
            let starts = spread_starts(start, t.spread, base.len());
            return base.into_iter().zip(starts).map(|((name, to), start)| Drawn { name, start, to }).collect();
        };
        let members = match routes {
            Routes::Hosts { pairs: Pairs::Matrix(_, m), .. } => m.clone(),
            _ => Vec::new(),
        };
        let mut arrivals = Vec::new();
        for (_, to) in base {
            for at in poisson_arrivals(rate, start, until.unwrap_or(end), rng) {
                let to = match &to {
                    Target::AnyFrom(s) => {
                        let others: Vec<usize> = members.iter().copied().filter(|d| d != s).collect();
                        Target::Hosts(*s, *others.choose(rng).expect("a matrix has two hosts"))
                    }
                    Target::Hosts(s, d) => Target::Hosts(*s, *d),
                    Target::Paths(p) => Target::Paths(p.clone()),
                };
                arrivals.push((at, to));
            }
        }
        arrivals.sort_by_key(|(at, _)| *at);
        arrivals
            .into_iter()
            .enumerate()
            .map(|(j, (at, to))| Drawn { name: format!("{}-{j}", t.name), start: at, to })
            .collect()
    }
}
