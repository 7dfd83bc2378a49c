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

/// A non-negative decimal number as written, kept exact:
/// `mantissa x 10^exponent`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Decimal {
    mantissa: u128,
    exponent: i32,
}

/// Most significant digits a quantity may have (u128 holds 38).
const MAX_DIGITS: usize = 30;

/// Largest power of ten a quantity may be written with; any larger is
/// beyond every limit, any smaller rounds to zero.
const MAX_EXPONENT: i32 = 60;

/// Why a number could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unreadable {
    /// Not a number followed by a unit.
    Syntax,
    /// More significant digits than [`MAX_DIGITS`].
    TooPrecise,
    /// A power of ten above [`MAX_EXPONENT`].
    TooLarge,
}

/// Reads the number at the start of `s` ("12", "1.5", "2e3", "-4"); returns
/// it, whether it was negative, and the rest (the unit).
fn split_number(s: &str) -> Result<(Decimal, bool, &str), Unreadable> {
    let s = s.trim();
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let int_end = body.find(|c: char| !c.is_ascii_digit()).unwrap_or(body.len());
    let (int, rest) = body.split_at(int_end);
    let (frac, rest) = match rest.strip_prefix('.') {
        Some(r) => r.split_at(r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len())),
        None => ("", rest),
    };
    if int.is_empty() && frac.is_empty() {
        return Err(Unreadable::Syntax);
    }
    // An exponent only when digits follow: "1eB" would be a unit.
    let (mut exponent, rest) = match rest.strip_prefix(['e', 'E']) {
        Some(r) => {
            let digits_from = usize::from(r.starts_with(['+', '-']));
            let end = r[digits_from..].find(|c: char| !c.is_ascii_digit()).map_or(r.len(), |e| e + digits_from);
            match r[..end].parse::<i32>() {
                Ok(e) if end > digits_from => (e, &r[end..]),
                _ => (0, rest),
            }
        }
        None => (0, rest),
    };
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > MAX_DIGITS {
        return Err(Unreadable::TooPrecise);
    }
    if exponent > MAX_EXPONENT && !digits.is_empty() {
        return Err(Unreadable::TooLarge);
    }
    // Below the smallest power of ten any unit brings back to a whole
    // base unit, every exponent rounds the same way.
    exponent = exponent.clamp(-2 * MAX_EXPONENT, MAX_EXPONENT) - frac.len() as i32;
    let mantissa = if digits.is_empty() { 0 } else { digits.parse().map_err(|_| Unreadable::Syntax)? };
    Ok((Decimal { mantissa, exponent }, negative, rest.trim()))
}

/// `d x unit` in the unit's base (ns, bytes, bit/s): the whole part and
/// whether a fraction of the base unit is left over, or `None` when too large.
fn in_base_units(d: Decimal, unit: u128) -> Option<(u128, Fraction)> {
    let scaled = d.mantissa.checked_mul(unit)?;
    if scaled == 0 {
        return Some((0, Fraction::None));
    }
    if d.exponent >= 0 {
        let whole = scaled.checked_mul(10u128.checked_pow(d.exponent as u32)?)?;
        return Some((whole, Fraction::None));
    }
    let Some(den) = 10u128.checked_pow(d.exponent.unsigned_abs()) else {
        return Some((0, Fraction::BelowHalf));
    };
    let (whole, rem) = (scaled / den, scaled % den);
    let fraction = match rem {
        0 => Fraction::None,
        r if r * 2 >= den => Fraction::HalfOrMore,
        _ => Fraction::BelowHalf,
    };
    Some((whole, fraction))
}

/// What is left of a quantity below its base unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fraction {
    None,
    BelowHalf,
    HalfOrMore,
}

/// Reads `s` as a number and one of `units` (compared case-insensitively
/// unless `exact_case`), returning the whole base units and the fraction.
fn quantity(s: &str, units: &[(&str, u128)], what: &str, exact_case: bool) -> Result<(u128, Fraction), String> {
    let err = || {
        let forms: Vec<&str> = units.iter().map(|(u, _)| *u).collect();
        format!("cannot read {s:?} as {what}: expected a number followed by one of {}", forms.join(", "))
    };
    let too_large = || format!("{s:?} is too large for {what}");
    let (value, negative, unit) = split_number(s).map_err(|why| match why {
        Unreadable::Syntax => err(),
        Unreadable::TooPrecise => format!("{s:?} has more than {MAX_DIGITS} significant digits"),
        Unreadable::TooLarge => too_large(),
    })?;
    let matches = |u: &str| if exact_case { u == unit } else { u.eq_ignore_ascii_case(unit) };
    let (_, k) = units.iter().find(|(u, _)| matches(u)).ok_or_else(err)?;
    if negative && value.mantissa != 0 {
        return Err(format!("{s:?} is negative; {what} must be zero or more"));
    }
    in_base_units(value, *k).ok_or_else(too_large)
}

/// Rounds to the nearest base unit.
fn rounded((whole, fraction): (u128, Fraction)) -> u128 {
    whole + u128::from(fraction == Fraction::HalfOrMore)
}

/// Bits per second; SI prefixes (1 Mbit = 10^6 bit), rounded to 1 bit/s.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let units = [
        ("bit", 1),
        ("kbit", 1_000),
        ("Mbit", 1_000_000),
        ("Gbit", 1_000_000_000),
        ("bps", 1),
        ("kbps", 1_000),
        ("Mbps", 1_000_000),
        ("Gbps", 1_000_000_000),
    ];
    // Units match in any case, but a capital B before "ps" says bytes
    // ("MBps", and "MBPS", which could be either).
    let unit = s.trim_end().as_bytes();
    if unit.len() >= 3 && unit[unit.len() - 3] == b'B' && unit[unit.len() - 2..].eq_ignore_ascii_case(b"ps") {
        return Err(format!(
            "{s:?} reads as bytes per second; rates are in bits per second: 8 times the number, in bit, kbit, \
             Mbit or Gbit (or bps, kbps, Mbps, Gbps)"
        ));
    }
    let (whole, fraction) = quantity(s, &units, "a rate", false)?;
    // Below 1 bit/s is out of range, not rounded up to it ("0.5bit").
    let bps = if whole == 0 { 0 } else { rounded((whole, fraction)) };
    if !(1..=10_000_000_000_000).contains(&bps) {
        return Err(format!("rate {s:?} is out of range: allowed 1bit to 10000Gbit"));
    }
    Ok(bps as u64)
}

/// A duration that must be longer than zero (a run's, a timeout's).
pub fn parse_positive_duration(s: &str) -> Result<Duration, String> {
    match parse_duration(s) {
        Ok(d) if d > Duration::ZERO => Ok(d),
        Ok(_) => Err(format!("{s:?} must be longer than zero")),
        Err(_) if split_number(s).is_ok_and(|(d, negative, _)| negative && d.mantissa != 0) => {
            Err(format!("{s:?} is negative; it must be longer than zero"))
        }
        Err(e) => Err(e),
    }
}

/// A duration, read exactly and rounded to the nanosecond.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let units = [("ns", 1), ("us", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000), ("min", 60_000_000_000)];
    let ns = rounded(quantity(s, &units, "a duration", false)?);
    if ns > 10_000_000 * 1_000_000_000 {
        return Err(format!("duration {s:?} is too long: at most 10000000s"));
    }
    Ok(Duration::from_nanos(ns as u64))
}

/// Bytes; "KB"/"MB"/"GB" are decimal, "KiB"/"MiB"/"GiB" binary. A size
/// must come to a whole number of bytes ("1.5KB" is 1500 bytes; "1.5B" is
/// refused rather than rounded).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let units = [
        ("B", 1),
        ("KB", 1_000),
        ("MB", 1_000_000),
        ("GB", 1_000_000_000),
        ("KiB", 1 << 10),
        ("MiB", 1 << 20),
        ("GiB", 1 << 30),
    ];
    // Case matters: "MB" is bytes, "Mb" would be bits, so units compare exactly.
    let (bytes, fraction) = quantity(s, &units, "a size", true)?;
    if fraction != Fraction::None {
        return Err(format!("size {s:?} is not a whole number of bytes"));
    }
    if bytes > 1_000_000_000_000_000 {
        return Err(format!("size {s:?} is too large: at most 1000000GB"));
    }
    Ok(bytes as u64)
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
            let n = n.trim();
            return match n.parse::<u64>() {
                Ok(0) => Err(format!("queue {s:?} is empty: at least 1 packet")),
                Ok(k) => u32::try_from(k)
                    .map(QueueSize::Packets)
                    .map_err(|_| format!("queue {s:?} is too long: at most {} packets", u32::MAX)),
                Err(_) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                    Err(format!("queue {s:?} is too long: at most {} packets", u32::MAX))
                }
                Err(_) => Err(format!("cannot read {s:?} as a queue size: {expected}; a whole number of packets")),
            };
        }
    }
    match parse_size(t) {
        Ok(b) if b >= 1 => Ok(QueueSize::Bytes(b)),
        Ok(_) => Err(format!("queue {s:?} is empty: at least 1 byte")),
        Err(e) if e.contains("whole number") || e.contains("too large") || e.contains("significant") => Err(e),
        Err(_) => Err(format!("cannot read {s:?} as a queue size: {expected}")),
    }
}

/// A number from the user, for an error message: as written for everyday
/// magnitudes, in scientific notation beyond them, so `1e300` is not
/// printed as 301 digits.
pub fn shown(x: f64) -> String {
    if x == 0.0 || (1e-4..1e9).contains(&x.abs()) || !x.is_finite() {
        format!("{x}")
    } else {
        format!("{x:e}")
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
        return Err(format!("loss rate {} is out of range: allowed 0 <= loss < 1 (0% to below 100%)", shown(p)));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_messages_stay_short() {
        assert_eq!(shown(1e300), "1e300");
        assert_eq!(shown(-2.5e-7), "-2.5e-7");
        assert_eq!(shown(0.0), "0");
        assert_eq!(shown(0.005), "0.005");
        assert_eq!(shown(2e6), "2000000");
        assert_eq!(shown(f64::NAN), "NaN");
    }

    #[test]
    fn parses_each_quantity_and_rejects_nonsense() {
        assert_eq!(parse_rate("100Mbit"), Ok(100_000_000));
        assert_eq!(parse_rate("2 Gbps"), Ok(2_000_000_000));
        assert!(parse_rate("100MB").is_err());
        assert_eq!(parse_rate("10mbps"), Ok(10_000_000));
        let e = parse_rate("10MBps").unwrap_err();
        assert!(e.contains("bytes per second"), "{e}");
        assert!(parse_rate("-5Mbit").is_err());
        assert!(parse_rate("0bit").is_err());
        // Below 1 bit/s is out of range, not rounded up; above, to the bit.
        assert!(parse_rate("0.5bit").unwrap_err().contains("out of range"));
        assert!(parse_rate("0.0009kbit").is_err());
        assert_eq!(parse_rate("1.5bit"), Ok(2));
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

    /// Quantities are read as the decimal numbers they are written as, so
    /// "4.8s" is 4,800,000,000 ns and "1.1KB" 1100 bytes, not a float's
    /// neighbour; sizes that are not whole bytes are refused.
    #[test]
    fn decimals_are_read_exactly() {
        assert_eq!(parse_duration("4.8s"), Ok(Duration::from_nanos(4_800_000_000)));
        assert_eq!(parse_duration("0.3s"), Ok(Duration::from_nanos(300_000_000)));
        assert_eq!(parse_duration("1e-9s"), Ok(Duration::from_nanos(1)));
        assert_eq!(parse_duration("1.4ns"), Ok(Duration::from_nanos(1)));
        assert_eq!(parse_duration("2.5e3ms"), Ok(Duration::from_millis(2500)));
        assert_eq!(parse_size("1.1KB"), Ok(1100));
        assert_eq!(parse_size("0.5KiB"), Ok(512));
        assert_eq!(parse_size("1e3B"), Ok(1000));
        for bad in ["1.5B", "0.0001KB", "1.0000001MB", "3.3KiB"] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.contains("whole number of bytes"), "{bad}: {e}");
        }
        assert!(parse_queue("1.5B").unwrap_err().contains("whole number"));
        assert_eq!(parse_rate("1.5kbit"), Ok(1500));
        assert!(parse_duration("-0.5s").unwrap_err().contains("negative"));
        assert!(parse_size("99999999999999999999999999999999999999GB").is_err());
        assert!(parse_duration("s").is_err());
    }

    /// Each way a value can be wrong gets its own message: too large, too
    /// precise, zero where only a positive value makes sense, a queue
    /// beyond the packet count a link holds, bytes where bits are meant.
    #[test]
    fn messages_say_what_is_wrong() {
        fn says<T: std::fmt::Debug>(r: Result<T, String>, what: &str) {
            let e = r.unwrap_err();
            assert!(e.contains(what), "{e:?} does not say {what:?}");
        }
        says(parse_duration("1e400s"), "too large");
        says(parse_size("1e61B"), "too large");
        says(parse_rate("2e70bit"), "too large");
        assert_eq!(parse_duration("1e-400s"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0e400s"), Ok(Duration::ZERO));
        says(parse_duration("1e20ns"), "too long: at most 10000000s");
        says(parse_duration("1.0000000000000000000000000000001s"), "significant digits");
        says(parse_positive_duration("-5ms"), "longer than zero");
        says(parse_positive_duration("0s"), "longer than zero");
        says(parse_positive_duration("0.4ns"), "longer than zero");
        says(parse_positive_duration("5"), "cannot read");
        assert_eq!(parse_positive_duration("0.5ns"), Ok(Duration::from_nanos(1)));
        says(parse_rate("100MBPS"), "bytes per second");
        says(parse_rate("100 MBpS"), "bytes per second");
        assert_eq!(parse_rate("100MBIT"), Ok(100_000_000));
        assert!(parse_rate("100MBITPS").is_err());
        says(parse_queue("5000000000p"), "at most 4294967295 packets");
        says(parse_queue("99999999999999999999999packets"), "at most 4294967295 packets");
        assert_eq!(parse_queue("4294967295p"), Ok(QueueSize::Packets(u32::MAX)));
        says(parse_queue("0p"), "at least 1 packet");
        says(parse_queue("0KB"), "at least 1 byte");
        says(parse_queue("1e20B"), "too large");
        says(parse_queue("1.5p"), "whole number of packets");
        says(parse_queue("-3p"), "whole number of packets");
    }
}
