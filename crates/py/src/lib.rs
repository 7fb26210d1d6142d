//! `tcpeval._core`: the simulator seen from Python. Scenario JSON in; summary JSON and numpy
//! columns out. No logic lives here: see docs/contract.md for the shapes.

use numpy::IntoPyArray;
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use tcpeval_sim::record::{Column, FLOW_COLUMNS, LINK_COLUMNS, SIM_FLOW_COLUMNS, SIM_LINK_COLUMNS};
use tcpeval_sim::scenario::HEADER_BYTES;
use tcpeval_sim::{RunError, ScenarioError};

create_exception!(
    _core,
    ScenarioRejected,
    PyValueError,
    "The core rejects a resolved scenario: args are (list, index, key, value, reason), \
     `list`/`index` naming the entry (e.g. 'flows', 3) or both None for a top-level key."
);

/// `(summary_json, flows, links, pcap)`.
type Simulated<'py> = (
    String,
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    Option<Bound<'py, PyBytes>>,
);

/// How far a run got, read from another thread while it goes; `stop()` ends it early.
#[pyclass(frozen)]
#[derive(Default)]
struct Progress(tcpeval_sim::Progress);

#[pymethods]
impl Progress {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Simulated time reached, ns.
    #[getter]
    fn now_ns(&self) -> u64 {
        self.0.now_ns()
    }

    /// Events handled so far.
    #[getter]
    fn events(&self) -> u64 {
        self.0.events()
    }

    /// Ask the run to stop; it then raises KeyboardInterrupt.
    fn stop(&self) {
        self.0.stop();
    }
}

/// Run one resolved scenario. Returns `(summary_json, flows, links, pcap)`, `pcap` being the
/// bytes of a pcap file or `None`; raises `ScenarioRejected` for a scenario the core rejects,
/// MemoryError when its time series outgrow memory, KeyboardInterrupt when `progress` was
/// stopped.
#[pyfunction]
#[pyo3(signature = (resolved_json, progress=None))]
fn simulate<'py>(
    py: Python<'py>,
    resolved_json: &str,
    progress: Option<Py<Progress>>,
) -> PyResult<Simulated<'py>> {
    let progress = progress.unwrap_or_else(|| Py::new(py, Progress::default()).expect("new"));
    // The run needs no Python objects: let other Python threads go on meanwhile. It reads the
    // caller's string, which stays alive and unchanged (a str is immutable), without a copy.
    let out = py
        .detach(|| tcpeval_sim::run_json(resolved_json, &progress.get().0))
        .map_err(failed)?;
    let summary = out.summary_json();
    let flows = columns(py, out.flows.into_named())?;
    let links = columns(py, out.links.into_named())?;
    links.set_item("link_names", out.link_names)?;
    let pcap = out.pcap.map(|bytes| PyBytes::new(py, &bytes));
    Ok((summary, flows, links, pcap))
}

/// JSON list of the congestion-control algorithms with their sources and default parameters.
#[pyfunction]
fn cc_algorithms() -> String {
    tcpeval_sim::cc::registry::describe().to_string()
}

fn failed(error: RunError) -> PyErr {
    match error {
        RunError::Scenario(error) => rejected(error),
        RunError::OutOfMemory { .. } => PyMemoryError::new_err(error.to_string()),
        RunError::Stopped => PyKeyboardInterrupt::new_err(error.to_string()),
    }
}

fn rejected(error: ScenarioError) -> PyErr {
    let (list, index) = error.field.entry.unzip();
    ScenarioRejected::new_err((list, index, error.field.key, error.value, error.reason))
}

fn columns<'py>(
    py: Python<'py>,
    named: impl Iterator<Item = (&'static str, Column)>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, column) in named {
        match column {
            Column::F64(values) => d.set_item(name, values.into_pyarray(py))?,
            Column::U32(values) => d.set_item(name, values.into_pyarray(py))?,
            Column::U64(values) => d.set_item(name, values.into_pyarray(py))?,
        }
    }
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(cc_algorithms, m)?)?;
    m.add_class::<Progress>()?;
    m.add("ScenarioRejected", m.py().get_type::<ScenarioRejected>())?;
    m.add("FLOW_COLUMNS", FLOW_COLUMNS.to_vec())?;
    m.add("LINK_COLUMNS", LINK_COLUMNS.to_vec())?;
    m.add("SIM_FLOW_COLUMNS", SIM_FLOW_COLUMNS.to_vec())?;
    m.add("SIM_LINK_COLUMNS", SIM_LINK_COLUMNS.to_vec())?;
    m.add("HEADER_BYTES", HEADER_BYTES)?;
    Ok(())
}
