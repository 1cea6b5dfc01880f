//! The op set as the macro sees it: names, groups and operand counts,
//! read from the same table `morok-core` builds its `Op` enum from.

macro_rules! op_groups {
    ($( $(#[$doc:meta])* $name:ident ),* $(,)?) => {
        /// Broad category of an op (`morok_core::uop::OpGroup` is generated
        /// from the same list).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Group { $( $(#[$doc])* $name ),* }
    };
}

impl Group {
    /// The number of operands every op of the group takes, when fixed.
    pub fn arity(self) -> Option<usize> {
        match self {
            Group::Unary | Group::Cast => Some(1),
            Group::Binary => Some(2),
            Group::Ternary => Some(3),
            _ => None,
        }
    }

    /// The group's name in messages (`unary`, `binary`, ...).
    pub fn word(self) -> &'static str {
        match self {
            Group::Unary => "unary",
            Group::Binary => "binary",
            Group::Ternary => "ternary",
            Group::Movement => "movement",
            Group::Reduce => "reduce",
            Group::Memory => "memory",
            Group::Control => "control",
            Group::Vector => "vector",
            Group::Define => "define",
            Group::Cast => "cast",
            Group::Tensor => "tensor-level",
        }
    }
}

macro_rules! op_table {
    ($( $(#[$doc:meta])* $name:ident = $group:ident ),* $(,)?) => {
        /// Every op name with its group, in declaration order.
        const OPS: &[(&str, Group)] = &[$((stringify!($name), Group::$group)),*];
    };
}

include!("op_table.rs");

/// The group of the op called `name`, if there is such an op.
pub fn group_of(name: &str) -> Option<Group> {
    OPS.iter().find(|(n, _)| *n == name).map(|(_, g)| *g)
}

/// The op name closest to an unknown `name`, for "did you mean" hints:
/// the same name up to case and underscores (`CMP_LT` → `CmpLt`), else the
/// nearest by edit distance if it is close enough to be a typo.
pub fn suggest(name: &str) -> Option<&'static str> {
    let folded = fold(name);
    if let Some((n, _)) = OPS.iter().find(|(n, _)| fold(n) == folded) {
        return Some(n);
    }
    OPS.iter()
        .map(|(n, _)| (edit_distance(&fold(n), &folded), *n))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_come_from_the_shared_table() {
        assert_eq!(group_of("Add"), Some(Group::Binary));
        assert_eq!(group_of("Neg"), Some(Group::Unary));
        assert_eq!(group_of("Where"), Some(Group::Ternary));
        assert_eq!(group_of("Cast"), Some(Group::Cast));
        assert_eq!(group_of("End"), Some(Group::Control));
        assert_eq!(group_of("add"), None);
        assert_eq!(OPS.len(), 91);
    }

    #[test]
    fn fixed_arities() {
        assert_eq!(Group::Unary.arity(), Some(1));
        assert_eq!(Group::Binary.arity(), Some(2));
        assert_eq!(Group::Ternary.arity(), Some(3));
        assert_eq!(Group::Cast.arity(), Some(1));
        assert_eq!(Group::Memory.arity(), None);
    }

    #[test]
    fn suggestions() {
        assert_eq!(suggest("CMP_LT"), Some("CmpLt"));
        assert_eq!(suggest("REDUCE_AXIS"), Some("ReduceAxis"));
        assert_eq!(suggest("Addd"), Some("Add"));
        assert_eq!(suggest("Whree"), Some("Where"));
        assert_eq!(suggest("Frobnicate"), None);
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", "abc"), 0);
    }
}
