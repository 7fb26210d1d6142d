//! What a run returns: the summary (serialised to JSON for the front end), the time-series
//! columns, and the capture of one link if one was asked for.

use crate::record::{FlowColumns, LinkColumns};
use crate::summary::Summary;

#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub summary: Summary,
    pub flows: FlowColumns,
    pub links: LinkColumns,
    pub link_names: Vec<String>,
    /// A pcap file of the captured link (`pcap_link`).
    pub pcap: Option<Vec<u8>>,
}

impl Output {
    pub fn summary_json(&self) -> String {
        serde_json::to_string(&self.summary).expect("the summary serialises")
    }
}
