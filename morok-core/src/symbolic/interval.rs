//! Integer interval arithmetic: the one implementation both interval
//! engines use, the per-node value bounds of the symbolic rules
//! (`super::bounds`) and the relational access bounds of lowering
//! (`crate::lower::bounds`, which adds linear forms and gate constraints on
//! top). Intervals are inclusive `(lo, hi)` pairs of `i128`.

/// An inclusive interval of integer values.
pub type Interval = (i128, i128);

/// `(min, max)` of `f` over the corners of two intervals; `None` if any
/// corner is undefined (overflow of the i128 arithmetic).
pub fn corners(
    a: Interval,
    b: Interval,
    f: impl Fn(i128, i128) -> Option<i128>,
) -> Option<Interval> {
    let vals = [f(a.0, b.0)?, f(a.0, b.1)?, f(a.1, b.0)?, f(a.1, b.1)?];
    Some((*vals.iter().min()?, *vals.iter().max()?))
}

/// The smallest interval holding both.
pub fn union(a: Interval, b: Interval) -> Interval {
    (a.0.min(b.0), a.1.max(b.1))
}

/// `k · iv` (saturating).
pub fn scale(iv: Interval, k: i128) -> Interval {
    let (a, b) = (iv.0.saturating_mul(k), iv.1.saturating_mul(k));
    (a.min(b), a.max(b))
}

/// Truncating division over intervals. Division by zero is undefined, so
/// only the non-zero parts of the divisor count; `None` when the divisor
/// is the point 0.
pub fn idiv(a: Interval, b: Interval) -> Option<Interval> {
    let div = |x: i128, y: i128| Some(x / y);
    let pos = (b.1 >= 1).then(|| corners(a, (b.0.max(1), b.1), div));
    let neg = (b.0 <= -1).then(|| corners(a, (b.0, b.1.min(-1)), div));
    match (pos.flatten(), neg.flatten()) {
        (Some(p), Some(q)) => Some(union(p, q)),
        (p, q) => p.or(q),
    }
}

/// C remainder over intervals: `|r| < |b|`, `|r| <= |a|` and `r` has the
/// dividend's sign; `None` when the divisor is the point 0.
pub fn rem(a: Interval, b: Interval) -> Option<Interval> {
    if b == (0, 0) {
        return None;
    }
    let m = b.0.abs().max(b.1.abs()) - 1;
    if b.0 == b.1 && a.0 >= 0 && a.0 / b.0 == a.1 / b.0 {
        // One constant divisor and one quotient: the remainder is monotone.
        return Some((a.0 % b.0, a.1 % b.0));
    }
    Some(if a.0 >= 0 {
        (0, a.1.min(m))
    } else if a.1 <= 0 {
        (a.0.max(-m), 0)
    } else {
        (a.0.max(-m), a.1.min(m))
    })
}

/// `⌊x / f⌋` for `f != 0` (saturating).
pub fn floor_div(x: i128, f: i128) -> i128 {
    if f < 0 {
        x.saturating_neg().div_euclid(f.saturating_neg())
    } else {
        x.div_euclid(f)
    }
}

/// `⌈x / f⌉` for `f != 0` (saturating).
pub fn ceil_div(x: i128, f: i128) -> i128 {
    floor_div(x.saturating_neg(), f).saturating_neg()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every interval operation holds every value its operands can make
    /// (exhaustive over small intervals).
    #[test]
    fn intervals_hold_every_value() {
        let ivs: Vec<Interval> = (-4..=4)
            .flat_map(|lo| (lo..=4).map(move |hi| (lo, hi)))
            .collect();
        for &a in &ivs {
            for &b in &ivs {
                let pairs = || (a.0..=a.1).flat_map(move |x| (b.0..=b.1).map(move |y| (x, y)));
                let inside = |iv: Interval, v: i128| iv.0 <= v && v <= iv.1;
                if let Some(q) = idiv(a, b) {
                    assert!(
                        pairs().filter(|p| p.1 != 0).all(|(x, y)| inside(q, x / y)),
                        "{a:?}/{b:?}"
                    );
                }
                if let Some(r) = rem(a, b) {
                    assert!(
                        pairs().filter(|p| p.1 != 0).all(|(x, y)| inside(r, x % y)),
                        "{a:?}%{b:?}"
                    );
                }
                assert!(pairs().all(|(x, y)| inside(union(a, b), x) && inside(union(a, b), y)));
            }
            for k in -3..=3 {
                assert!((a.0..=a.1).all(|x| inside_iv(scale(a, k), x * k)));
            }
        }
        for x in -9..=9 {
            for f in [-3, -2, -1, 1, 2, 3] {
                let exact = x as f64 / f as f64;
                assert_eq!(floor_div(x, f), exact.floor() as i128);
                assert_eq!(ceil_div(x, f), exact.ceil() as i128);
            }
        }
    }

    fn inside_iv(iv: Interval, v: i128) -> bool {
        iv.0 <= v && v <= iv.1
    }
}
