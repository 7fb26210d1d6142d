//! `tcpeval._core`: the simulator seen from Python. Scenario JSON in; summary JSON and numpy
//! columns out. No logic lives here: see docs/contract.md for the shapes.

use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use tcpeval_sim::record::{FlowColumns, LinkColumns};

/// `(summary_json, flows, links, pcap)`.
type Simulated<'py> = (
    String,
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    Option<Bound<'py, PyBytes>>,
);

/// Run one resolved scenario. Returns `(summary_json, flows, links, pcap)`, `pcap` being the
/// bytes of a pcap file or `None`; raises `ValueError` naming the field for a scenario the
/// core rejects.
#[pyfunction]
fn simulate<'py>(py: Python<'py>, resolved_json: &str) -> PyResult<Simulated<'py>> {
    let json = resolved_json.to_owned();
    // The run needs no Python objects: let other Python threads go on meanwhile.
    let out = py
        .detach(move || tcpeval_sim::run_json(&json))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let summary = out.summary_json();
    let flows = flow_columns(py, out.flows)?;
    let links = link_columns(py, out.links)?;
    links.set_item("link_names", out.link_names)?;
    let pcap = out.pcap.map(|bytes| PyBytes::new(py, &bytes));
    Ok((summary, flows, links, pcap))
}

/// JSON list of the congestion-control algorithms with their sources and default parameters.
#[pyfunction]
fn cc_algorithms() -> String {
    tcpeval_sim::cc::registry::describe().to_string()
}

fn flow_columns(py: Python<'_>, c: FlowColumns) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("t_s", c.t_s.into_pyarray(py))?;
    d.set_item("flow", c.flow.into_pyarray(py))?;
    d.set_item("cwnd_pkts", c.cwnd_pkts.into_pyarray(py))?;
    d.set_item("ssthresh_pkts", c.ssthresh_pkts.into_pyarray(py))?;
    d.set_item("srtt_ms", c.srtt_ms.into_pyarray(py))?;
    d.set_item("inflight_pkts", c.inflight_pkts.into_pyarray(py))?;
    d.set_item("delivered_bytes", c.delivered_bytes.into_pyarray(py))?;
    d.set_item("retransmits", c.retransmits.into_pyarray(py))?;
    d.set_item("pacing_rate_bps", c.pacing_rate_bps.into_pyarray(py))?;
    Ok(d)
}

fn link_columns(py: Python<'_>, c: LinkColumns) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("t_s", c.t_s.into_pyarray(py))?;
    d.set_item("link", c.link.into_pyarray(py))?;
    d.set_item("queue_pkts", c.queue_pkts.into_pyarray(py))?;
    d.set_item("drops", c.drops.into_pyarray(py))?;
    d.set_item("tx_bytes", c.tx_bytes.into_pyarray(py))?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(cc_algorithms, m)?)?;
    Ok(())
}
