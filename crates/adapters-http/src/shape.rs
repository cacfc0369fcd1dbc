//! How an operation takes its input (`data` or `params`) and answers: what its contract
//! documents and what the field paths of its errors are placed under.

use roastery_domain::FieldPath;

/// How an operation takes its input and answers, as documented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `{"data": Request}`.
    Write,
    /// `{"data": [Request]}`, at most 50 items.
    Bulk,
    /// `{"params": {"filter": Request, "pagination": ...}}` answering one result.
    Read,
    /// A read whose answer carries `meta.pagination.endCursor`.
    Page,
}

impl Shape {
    /// The member of the request that holds what the use case is given: the field paths the
    /// domain and the use cases name are relative to it.
    pub fn payload(self) -> FieldPath {
        match self {
            Self::Write | Self::Bulk => FieldPath::from("data"),
            Self::Read | Self::Page => FieldPath::from("params"),
        }
    }
}
