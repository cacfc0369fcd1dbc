//! Where in a request a broken rule lies, as a path relative to the part of the request the rule
//! judged: `details.machine`, `screenSizes[2].size`, `[3].orderItems[1].sku`.
//!
//! The domain and the use cases never write a request's envelope (`data`, `params`): that is the
//! transport's word. They name fields relative to what they were given, and the transport puts
//! each path under its request's root with [`FieldPath::rebase`] (through
//! [`crate::BrokenRule::rebase`]) in one place before a message is written.

use std::borrow::Cow;
use std::fmt;

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    /// A member of an object: written `.name` (without the dot first in a path).
    Key(Cow<'static, str>),
    /// An item of an array: written `[i]`.
    Index(usize),
}

/// A path of object keys and array indices, relative to some base; empty is the base itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath(Vec<Segment>);

impl FieldPath {
    /// The base itself: what a path relative to nothing more names.
    pub const ROOT: FieldPath = FieldPath(Vec::new());

    /// `self` followed by the member `key`.
    #[must_use]
    pub fn key(mut self, key: impl Into<Cow<'static, str>>) -> Self {
        self.0.push(Segment::Key(key.into()));
        self
    }

    /// `self` followed by the array item `index`.
    #[must_use]
    pub fn index(mut self, index: usize) -> Self {
        self.0.push(Segment::Index(index));
        self
    }

    /// `self` followed by every step of `rest`.
    #[must_use]
    pub fn join(mut self, rest: &FieldPath) -> Self {
        self.0.extend(rest.0.iter().cloned());
        self
    }

    /// This path, relative to `base` instead of to what `base` names: `name` under `data` is
    /// `data.name`, `[1].sku` under `data` is `data[1].sku`.
    #[must_use]
    pub fn under(&self, base: &FieldPath) -> Self {
        base.clone().join(self)
    }

    /// Puts this path under `base` in place ([`FieldPath::under`]).
    pub fn rebase(&mut self, base: &FieldPath) {
        if !base.0.is_empty() {
            self.0.splice(0..0, base.0.iter().cloned());
        }
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub fn segments(&self) -> &[Segment] {
        &self.0
    }
}

/// A path written in code: keys separated by dots, array items in brackets
/// (`details.machine`, `[3].sku`). Brackets that do not hold a number are read as part of a key.
impl From<&'static str> for FieldPath {
    fn from(path: &'static str) -> Self {
        let mut steps = Vec::new();
        for part in path.split('.').filter(|p| !p.is_empty()) {
            let (key, mut rest) = match part.find('[') {
                Some(at) => part.split_at(at),
                None => (part, ""),
            };
            let mut indices = Vec::new();
            while let Some(inner) = rest.strip_prefix('[')
                && let Some(end) = inner.find(']')
                && let Some(Ok(index)) = inner.get(..end).map(str::parse::<usize>)
            {
                indices.push(Segment::Index(index));
                rest = inner.get(end.saturating_add(1)..).unwrap_or_default();
            }
            if rest.is_empty() {
                if !key.is_empty() {
                    steps.push(Segment::Key(Cow::Borrowed(key)));
                }
                steps.extend(indices);
            } else {
                steps.push(Segment::Key(Cow::Borrowed(part)));
            }
        }
        Self(steps)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (at, step) in self.0.iter().enumerate() {
            match step {
                Segment::Key(key) if at == 0 => f.write_str(key)?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// Written as its text: `data.plots.features[0]`.
impl serde::Serialize for FieldPath {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_written_as_requests_name_fields() {
        let machine = FieldPath::ROOT.key("details").key("machine");
        assert_eq!(machine.to_string(), "details.machine");
        let used = FieldPath::ROOT.key("greenLots").index(2).key("usedWeight");
        assert_eq!(used.to_string(), "greenLots[2].usedWeight");
        assert_eq!(FieldPath::ROOT.index(3).key("sku").to_string(), "[3].sku");
        assert_eq!(FieldPath::ROOT.to_string(), "");
    }

    #[test]
    fn a_base_goes_before_a_path_with_a_dot_or_not() {
        let body = FieldPath::from("body");
        assert_eq!(
            FieldPath::from("name").under(&body).to_string(),
            "body.name"
        );
        assert_eq!(
            FieldPath::from("[1].sku").under(&body).to_string(),
            "body[1].sku"
        );
        assert_eq!(FieldPath::ROOT.under(&body).to_string(), "body");
        let mut filter = FieldPath::from("filter.roastedLotIds");
        filter.rebase(&FieldPath::from("query"));
        assert_eq!(filter.to_string(), "query.filter.roastedLotIds");
        let mut item = FieldPath::from("orderItems[1].sku");
        item.rebase(&FieldPath::ROOT.index(4));
        item.rebase(&body);
        assert_eq!(item.to_string(), "body[4].orderItems[1].sku");
    }

    #[test]
    fn written_paths_read_as_the_builder_makes_them() {
        assert_eq!(
            FieldPath::from("[3].orderItems[1].sku"),
            FieldPath::ROOT
                .index(3)
                .key("orderItems")
                .index(1)
                .key("sku")
        );
        assert_eq!(
            FieldPath::from("details.machine"),
            FieldPath::ROOT.key("details").key("machine")
        );
        assert_eq!(FieldPath::from(""), FieldPath::ROOT);
        assert_eq!(FieldPath::from("a[x]").to_string(), "a[x]");
    }
}
