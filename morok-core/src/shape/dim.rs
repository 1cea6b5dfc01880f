//! Dimension values the shape rules work over: a number ([`usize`], the
//! tensor API at run time) or a [`SymDim`] (a number, a name such as `B`,
//! or a small integer expression of them, the macros at expansion time).

use std::collections::BTreeMap;
use std::fmt;

/// A dimension the shape rules can compare, multiply and divide.
///
/// Equality is structural: two symbolic dims are equal only when their
/// normalized expressions are (a name equals only itself, never a number).
pub trait Dim: Clone + PartialEq + fmt::Display {
    /// The dimension of a known size.
    fn lit(n: usize) -> Self;
    /// The size, when it is a known number.
    fn as_lit(&self) -> Option<usize>;
    /// `self + other`; `None` on overflow.
    fn add(&self, other: &Self) -> Option<Self>;
    /// `self - other`; `None` when the result is known to be negative.
    fn sub(&self, other: &Self) -> Option<Self>;
    /// `self * other`; `None` on overflow.
    fn mul(&self, other: &Self) -> Option<Self>;
    /// `self / k` rounded down (`k > 0`).
    fn floor_div(&self, k: usize) -> Self;
    /// `self / other` when it divides exactly (as far as can be told).
    fn div_exact(&self, other: &Self) -> Option<Self>;
    /// Whether the dim is the number 1 (broadcasts to anything).
    fn is_one(&self) -> bool {
        self.as_lit() == Some(1)
    }
}

impl Dim for usize {
    fn lit(n: usize) -> Self {
        n
    }
    fn as_lit(&self) -> Option<usize> {
        Some(*self)
    }
    fn add(&self, other: &Self) -> Option<Self> {
        self.checked_add(*other)
    }
    fn sub(&self, other: &Self) -> Option<Self> {
        self.checked_sub(*other)
    }
    fn mul(&self, other: &Self) -> Option<Self> {
        self.checked_mul(*other)
    }
    fn floor_div(&self, k: usize) -> Self {
        self / k.max(1)
    }
    fn div_exact(&self, other: &Self) -> Option<Self> {
        (*other != 0 && self.is_multiple_of(*other)).then(|| self / other)
    }
}

/// An indivisible factor of a symbolic term.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Atom {
    /// A named dimension (`B`).
    Name(String),
    /// `expr / k` rounded down, where `expr` is not a multiple of `k`.
    FloorDiv(Box<SymDim>, i64),
}

/// A symbolic dimension: an integer polynomial over names, kept in a
/// normal form (sorted monomials, no zero coefficients) so that `==`
/// compares values structurally.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SymDim {
    /// Monomial (sorted atoms, repeated for powers) → coefficient. The
    /// constant term has the empty monomial.
    terms: BTreeMap<Vec<Atom>, i64>,
}

impl SymDim {
    /// The number `n`.
    pub fn constant(n: i64) -> SymDim {
        let mut terms = BTreeMap::new();
        if n != 0 {
            terms.insert(Vec::new(), n);
        }
        SymDim { terms }
    }

    /// The named dimension `name`.
    pub fn name(name: &str) -> SymDim {
        SymDim {
            terms: BTreeMap::from([(vec![Atom::Name(name.to_string())], 1)]),
        }
    }

    /// The value when it is a known integer (possibly negative).
    pub fn as_const(&self) -> Option<i64> {
        match self.terms.len() {
            0 => Some(0),
            1 => self.terms.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    /// The names the expression mentions, each once, in order.
    pub fn names(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack: Vec<&SymDim> = vec![self];
        while let Some(d) = stack.pop() {
            for atom in d.terms.keys().flatten() {
                match atom {
                    Atom::Name(n) if !out.contains(n) => out.push(n.clone()),
                    Atom::Name(_) => {}
                    Atom::FloorDiv(e, _) => stack.push(e),
                }
            }
        }
        out.sort();
        out
    }

    /// The value with every name replaced by `value(name)`; `None` when a
    /// name is unknown or the arithmetic overflows.
    pub fn eval(&self, value: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
        let mut total: i64 = 0;
        for (mono, &c) in &self.terms {
            let mut t = c;
            for atom in mono {
                let v = match atom {
                    Atom::Name(n) => value(n)?,
                    Atom::FloorDiv(e, k) => e.eval(value)?.div_euclid(*k),
                };
                t = t.checked_mul(v)?;
            }
            total = total.checked_add(t)?;
        }
        Some(total)
    }

    fn combine(&self, other: &SymDim, sign: i64) -> Option<SymDim> {
        let mut terms = self.terms.clone();
        for (m, &c) in &other.terms {
            let e = terms.entry(m.clone()).or_insert(0);
            *e = e.checked_add(c.checked_mul(sign)?)?;
        }
        terms.retain(|_, c| *c != 0);
        Some(SymDim { terms })
    }

    /// The sum of `self` and `other`; `None` on overflow.
    pub fn plus(&self, other: &SymDim) -> Option<SymDim> {
        self.combine(other, 1)
    }

    /// The difference `self - other`; `None` on overflow.
    pub fn minus(&self, other: &SymDim) -> Option<SymDim> {
        self.combine(other, -1)
    }

    /// The product of `self` and `other`; `None` on overflow.
    pub fn times(&self, other: &SymDim) -> Option<SymDim> {
        let mut terms: BTreeMap<Vec<Atom>, i64> = BTreeMap::new();
        for (ma, &ca) in &self.terms {
            for (mb, &cb) in &other.terms {
                let mut m = ma.clone();
                m.extend(mb.iter().cloned());
                m.sort();
                let e = terms.entry(m).or_insert(0);
                *e = e.checked_add(ca.checked_mul(cb)?)?;
            }
        }
        terms.retain(|_, c| *c != 0);
        Some(SymDim { terms })
    }

    /// `self / k` rounded down (`k > 0`): exact when every coefficient is a
    /// multiple of `k`, an opaque atom otherwise.
    pub fn div_floor(&self, k: i64) -> SymDim {
        let k = k.max(1);
        if let Some(c) = self.as_const() {
            return SymDim::constant(c.div_euclid(k));
        }
        if self.terms.values().all(|c| c % k == 0) {
            let terms = self.terms.iter().map(|(m, c)| (m.clone(), c / k)).collect();
            return SymDim { terms };
        }
        SymDim {
            terms: BTreeMap::from([(vec![Atom::FloorDiv(Box::new(self.clone()), k)], 1)]),
        }
    }

    /// `self / other` when `other` is one term that divides every term of
    /// `self`.
    pub fn div_by(&self, other: &SymDim) -> Option<SymDim> {
        let (mono, &c) = match other.terms.len() {
            1 => other.terms.iter().next()?,
            _ => return None,
        };
        let mut terms = BTreeMap::new();
        for (m, &v) in &self.terms {
            if v % c != 0 {
                return None;
            }
            let mut rest = m.clone();
            for a in mono {
                let i = rest.iter().position(|x| x == a)?;
                rest.remove(i);
            }
            terms.insert(rest, v / c);
        }
        Some(SymDim { terms })
    }
}

impl From<usize> for SymDim {
    fn from(n: usize) -> SymDim {
        SymDim::constant(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl Dim for SymDim {
    fn lit(n: usize) -> Self {
        SymDim::from(n)
    }
    fn as_lit(&self) -> Option<usize> {
        self.as_const().and_then(|c| usize::try_from(c).ok())
    }
    fn add(&self, other: &Self) -> Option<Self> {
        self.plus(other)
    }
    fn sub(&self, other: &Self) -> Option<Self> {
        let d = self.minus(other)?;
        match d.as_const() {
            Some(c) if c < 0 => None,
            _ => Some(d),
        }
    }
    fn mul(&self, other: &Self) -> Option<Self> {
        self.times(other)
    }
    fn floor_div(&self, k: usize) -> Self {
        self.div_floor(i64::try_from(k).unwrap_or(i64::MAX))
    }
    fn div_exact(&self, other: &Self) -> Option<Self> {
        self.div_by(other)
    }
}

fn write_atom(f: &mut fmt::Formatter<'_>, a: &Atom) -> fmt::Result {
    match a {
        Atom::Name(n) => f.write_str(n),
        Atom::FloorDiv(e, k) if e.terms.len() > 1 => write!(f, "({e}) / {k}"),
        Atom::FloorDiv(e, k) => write!(f, "{e} / {k}"),
    }
}

impl fmt::Display for SymDim {
    /// Terms with names first (in name order), the constant last:
    /// `2*B + H - 1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terms.is_empty() {
            return f.write_str("0");
        }
        let mut ordered: Vec<(&Vec<Atom>, i64)> = self
            .terms
            .iter()
            .filter(|(m, _)| !m.is_empty())
            .map(|(m, &c)| (m, c))
            .collect();
        let constant = self.terms.get(&Vec::new()).copied();
        let empty = Vec::new();
        ordered.extend(constant.map(|c| (&empty, c)));
        for (i, (mono, c)) in ordered.into_iter().enumerate() {
            let mag = c.unsigned_abs();
            match (i, c < 0) {
                (0, true) => f.write_str("-")?,
                (0, false) => {}
                (_, true) => f.write_str(" - ")?,
                (_, false) => f.write_str(" + ")?,
            }
            if mono.is_empty() {
                write!(f, "{mag}")?;
                continue;
            }
            if mag != 1 {
                write!(f, "{mag}*")?;
            }
            for (j, a) in mono.iter().enumerate() {
                if j > 0 {
                    f.write_str("*")?;
                }
                write_atom(f, a)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_form_and_display() {
        let b = SymDim::name("B");
        let h = SymDim::name("H");
        let two = SymDim::constant(2);
        let e = h.plus(&two).unwrap().plus(&b.times(&two).unwrap()).unwrap();
        assert_eq!(e.to_string(), "2*B + H + 2");
        assert_eq!(
            e,
            b.times(&two).unwrap().plus(&h).unwrap().plus(&two).unwrap()
        );
        assert_eq!(h.minus(&SymDim::constant(1)).unwrap().to_string(), "H - 1");
        assert_ne!(b, SymDim::constant(1));
        assert_eq!(Dim::sub(&SymDim::constant(1), &two), None);
    }

    #[test]
    fn division() {
        let h = SymDim::name("H");
        let two = SymDim::constant(2);
        let even = h.times(&two).unwrap().plus(&SymDim::constant(4)).unwrap();
        assert_eq!(even.div_floor(2).to_string(), "H + 2");
        let odd = h.plus(&SymDim::constant(1)).unwrap().div_floor(2);
        assert_eq!(odd.to_string(), "(H + 1) / 2");
        assert_eq!(odd.eval(&|_| Some(6)), Some(3));
        let bh = h.times(&SymDim::name("B")).unwrap().times(&two).unwrap();
        assert_eq!(bh.div_by(&h).unwrap().to_string(), "2*B");
        assert_eq!(bh.div_by(&SymDim::name("C")), None);
        assert_eq!(bh.names(), ["B", "H"]);
        assert_eq!(Dim::div_exact(&6usize, &4), None);
    }
}
