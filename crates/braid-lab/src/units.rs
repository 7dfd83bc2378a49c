//! Quantities as scenario files write them: rates ("100Mbit"), durations
//! ("30s", "250ms"), sizes ("4MiB", "10MB"), queue sizes ("100p", "64KB",
//! "1.5bdp") and loss ("0.5%" or a fraction).
//!
//! Each parser returns a message that says what was expected, so the
//! scenario error can name the key and the allowed forms.

use braid_proto::Duration;

/// A queue size before the path's bandwidth-delay product is known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueSize {
    Packets(u32),
    Bytes(u64),
    Bdp(f64),
}

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    // "1e" would swallow the unit of "1eB"; units never start with 'e' here.
    let value: f64 = s[..end].parse().ok()?;
    value.is_finite().then(|| (value, s[end..].trim()))
}

fn scaled(s: &str, units: &[(&str, f64)], what: &str) -> Result<f64, String> {
    let err = || {
        let forms: Vec<&str> = units.iter().map(|(u, _)| *u).collect();
        format!("cannot read {s:?} as {what}: expected a number followed by one of {}", forms.join(", "))
    };
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let (_, k) = units.iter().find(|(u, _)| u.eq_ignore_ascii_case(unit)).ok_or_else(err)?;
    if v < 0.0 {
        return Err(format!("{s:?} is negative; {what} must be zero or more"));
    }
    Ok(v * k)
}

/// Bits per second; SI prefixes (1 Mbit = 10^6 bit).
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let units = [
        ("bit", 1.0),
        ("kbit", 1e3),
        ("Mbit", 1e6),
        ("Gbit", 1e9),
        ("bps", 1.0),
        ("kbps", 1e3),
        ("Mbps", 1e6),
        ("Gbps", 1e9),
    ];
    let bps = scaled(s, &units, "a rate")?;
    if !(1.0..=1e13).contains(&bps) {
        return Err(format!("rate {s:?} is out of range: allowed 1bit to 10000Gbit"));
    }
    Ok(bps.round() as u64)
}

pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let units = [("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0), ("min", 60.0)];
    let secs = scaled(s, &units, "a duration")?;
    if secs > 1e7 {
        return Err(format!("duration {s:?} is too long: at most 10000000s"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Bytes; "KB"/"MB"/"GB" are decimal, "KiB"/"MiB"/"GiB" binary.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let units =
        [("B", 1.0), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("KiB", 1024.0), ("MiB", 1048576.0), ("GiB", 1073741824.0)];
    // Case matters: "MB" is bytes, "Mb" would be bits, so units compare exactly.
    let err =
        || format!("cannot read {s:?} as a size: expected a number followed by one of B, KB, MB, GB, KiB, MiB, GiB");
    let (v, unit) = split_number(s).filter(|&(v, _)| v >= 0.0).ok_or_else(err)?;
    let (_, k) = units.iter().find(|(u, _)| *u == unit).ok_or_else(err)?;
    let bytes = v * k;
    if bytes > 1e15 {
        return Err(format!("size {s:?} is too large"));
    }
    Ok(bytes.round() as u64)
}

pub fn parse_queue(s: &str) -> Result<QueueSize, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let expected =
        "expected packets (\"100p\"), bytes (\"64KB\") or a multiple of the path's bandwidth-delay product (\"1bdp\")";
    if let Some(n) = lower.strip_suffix("bdp") {
        return match n.trim().parse::<f64>() {
            Ok(k) if k.is_finite() && k > 0.0 && k <= 1000.0 => Ok(QueueSize::Bdp(k)),
            _ => Err(format!("cannot read {s:?} as a queue size: {expected}, with 0 < bdp <= 1000")),
        };
    }
    for suffix in ["packets", "pkts", "p"] {
        if let Some(n) = lower.strip_suffix(suffix) {
            return match n.trim().parse::<u32>() {
                Ok(k) if k >= 1 => Ok(QueueSize::Packets(k)),
                _ => Err(format!("cannot read {s:?} as a queue size: {expected}; at least 1 packet")),
            };
        }
    }
    match parse_size(t) {
        Ok(b) if b >= 1 => Ok(QueueSize::Bytes(b)),
        _ => Err(format!("cannot read {s:?} as a queue size: {expected}")),
    }
}

/// A loss probability: "0.5%" or a fraction in [0, 1).
pub fn parse_loss(v: &toml::Value) -> Result<f64, String> {
    let p = match v {
        toml::Value::String(s) => match s.trim().strip_suffix('%').map(|n| n.trim().parse::<f64>()) {
            Some(Ok(pct)) => pct / 100.0,
            _ => {
                return Err(format!(
                    "cannot read {s:?} as a loss rate: expected a percentage like \"0.5%\" or a fraction like 0.005"
                ))
            }
        },
        toml::Value::Float(f) => *f,
        toml::Value::Integer(i) => *i as f64,
        other => return Err(format!("a loss rate must be a percentage string or a number, not {}", other.type_str())),
    };
    if !(0.0..1.0).contains(&p) {
        return Err(format!("loss rate {p} is out of range: allowed 0 <= loss < 1 (0% to below 100%)"));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_quantity_and_rejects_nonsense() {
        assert_eq!(parse_rate("100Mbit"), Ok(100_000_000));
        assert_eq!(parse_rate("2 Gbps"), Ok(2_000_000_000));
        assert!(parse_rate("100MB").is_err());
        assert!(parse_rate("-5Mbit").is_err());
        assert!(parse_rate("0bit").is_err());
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("10").is_err());
        assert_eq!(parse_size("4MiB"), Ok(4 << 20));
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert!(parse_size("10Mb").is_err());
        assert_eq!(parse_queue("100p"), Ok(QueueSize::Packets(100)));
        assert_eq!(parse_queue("64KB"), Ok(QueueSize::Bytes(64_000)));
        assert_eq!(parse_queue("1.5bdp"), Ok(QueueSize::Bdp(1.5)));
        assert!(parse_queue("0p").is_err());
        assert_eq!(parse_loss(&toml::Value::String("0.5%".into())), Ok(0.005));
        assert_eq!(parse_loss(&toml::Value::Float(0.01)), Ok(0.01));
        assert!(parse_loss(&toml::Value::Float(1.0)).is_err());
        assert!(parse_loss(&toml::Value::Boolean(true)).is_err());
    }
}
