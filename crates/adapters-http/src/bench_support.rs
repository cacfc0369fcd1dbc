//! What the criterion benches reach: the answer of `listGreenLots`, encoded exactly as the
//! operation encodes it. Not part of the API of this crate.

use roastery_app::green_lot::GreenLotView;

use crate::ops::green::GreenLotsResult;
use crate::wire::GreenLotDto;
use crate::wire::{Envelope, PageInfo, PageMeta};

/// The body of a `listGreenLots` page: the same types and serializer as the handler.
pub fn encode_green_lot_page(
    lots: Vec<GreenLotView>,
    end_cursor: Option<String>,
) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(&Envelope {
        ok: true,
        result: GreenLotsResult {
            green_lots: lots.into_iter().map(GreenLotDto::from).collect(),
        },
        meta: PageMeta {
            pagination: PageInfo { end_cursor },
        },
    })
}
