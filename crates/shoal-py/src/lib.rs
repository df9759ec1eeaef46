//! Thin Python bindings of shoal-core: scenarios go in as JSON text, results come out as
//! NumPy columns and plain dicts.

use numpy::{IntoPyArray, PyArray1};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use shoal_core::{Scenario, ScenarioError};

create_exception!(_core, PyScenarioError, PyValueError, "A scenario key has a value Shoal does not accept.");

fn to_py(e: ScenarioError) -> PyErr {
    PyScenarioError::new_err(e.to_string())
}

fn parse(json: &str) -> PyResult<Scenario> {
    Scenario::from_json(json).map_err(to_py)
}

/// The commented defaults file: every scenario key with its default.
#[pyfunction]
fn default_scenario_toml() -> &'static str {
    shoal_core::scenario::DEFAULTS_TOML
}

/// Validates a scenario; returns (the resolved scenario as JSON, warnings).
#[pyfunction]
fn resolve(scenario_json: &str) -> PyResult<(String, Vec<String>)> {
    let sc = parse(scenario_json)?;
    let warnings = sc.validate().map_err(to_py)?;
    Ok((sc.to_json(), warnings))
}

/// Bytes of a size written as the scenario schema accepts it ("720KB", "1MiB", "1500").
#[pyfunction]
fn parse_bytes(text: &str) -> PyResult<u64> {
    shoal_core::units::Bytes::parse(text).map(|b| b.0).map_err(PyScenarioError::new_err)
}

/// Picoseconds of a time written as the scenario schema accepts it ("2us", "1.5ms").
#[pyfunction]
fn parse_time_ps(text: &str) -> PyResult<u64> {
    shoal_core::units::Time::parse(text).map(|t| t.0).map_err(PyScenarioError::new_err)
}

/// Bits per second of a rate written as the scenario schema accepts it ("100Gbps").
#[pyfunction]
fn parse_rate_bps(text: &str) -> PyResult<u64> {
    shoal_core::units::Rate::parse(text).map(|r| r.0).map_err(PyScenarioError::new_err)
}

fn json_to_py(py: Python<'_>, value: &serde_json::Value) -> PyResult<PyObject> {
    let json = py.import_bound("json")?;
    Ok(json.call_method1("loads", (value.to_string(),))?.unbind())
}

/// The flows a scenario's workload generates, as columns.
#[pyfunction]
fn generate_trace(py: Python<'_>, scenario_json: &str) -> PyResult<PyObject> {
    let sc = parse(scenario_json)?;
    sc.validate().map_err(to_py)?;
    let net = shoal_core::net::build(&sc.topology);
    let flows = shoal_core::workload::generate(&sc, &net).map_err(to_py)?;
    let d = PyDict::new_bound(py);
    d.set_item("id", flows.iter().map(|f| f.id).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("src", flows.iter().map(|f| f.src).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("dst", flows.iter().map(|f| f.dst).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("bytes", flows.iter().map(|f| f.bytes).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("start_ns", flows.iter().map(|f| f.start as f64 / 1e3).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("priority", flows.iter().map(|f| f.priority).collect::<Vec<_>>().into_pyarray_bound(py))?;
    Ok(d.into())
}

/// A simulation in progress.
#[pyclass(module = "shoal._core")]
struct Simulation {
    inner: shoal_core::Simulation,
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(scenario_json: &str) -> PyResult<Self> {
        let sc = parse(scenario_json)?;
        Ok(Simulation { inner: shoal_core::Simulation::new(&sc).map_err(to_py)? })
    }

    /// Runs up to simulated time `until_ps`; returns True when the run is over.
    fn run(&mut self, py: Python<'_>, until_ps: u64) -> bool {
        let inner = &mut self.inner;
        py.allow_threads(|| inner.run_until(until_ps))
    }

    #[getter]
    fn now_ps(&self) -> u64 {
        self.inner.now()
    }

    #[getter]
    fn end_ps(&self) -> Option<u64> {
        self.inner.stop_time()
    }

    #[getter]
    fn flows_total(&self) -> usize {
        self.inner.flows_total()
    }

    #[getter]
    fn flows_finished(&self) -> usize {
        self.inner.flows_finished()
    }

    #[getter]
    fn events(&self) -> u64 {
        self.inner.events_processed()
    }

    #[getter]
    fn done(&self) -> bool {
        self.inner.is_finished()
    }

    /// Per-flow results as NumPy columns.
    fn flows(&self, py: Python<'_>) -> PyResult<PyObject> {
        let records = self.inner.flow_records();
        let d = PyDict::new_bound(py);
        let ns = |ps: u64| ps as f64 / 1e3;
        macro_rules! column {
            ($name:literal, $f:expr) => {
                d.set_item($name, records.iter().map($f).collect::<Vec<_>>().into_pyarray_bound(py))?
            };
        }
        column!("id", |r| r.id);
        column!("src", |r| r.src);
        column!("dst", |r| r.dst);
        column!("bytes", |r| r.bytes);
        column!("start_ns", |r| ns(r.start));
        column!("finish_ns", |r| r.finish.map_or(f64::NAN, ns));
        column!("fct_ns", |r| r.finish.map_or(f64::NAN, |f| ns(f - r.start)));
        column!("ideal_fct_ns", |r| r.ideal_fct.map_or(f64::NAN, ns));
        column!("slowdown", |r| match (r.finish, r.ideal_fct) {
            (Some(f), Some(i)) if i > 0 => (f - r.start) as f64 / i as f64,
            _ => f64::NAN,
        });
        column!("retransmits", |r| r.retransmits);
        column!("timeouts", |r| r.timeouts);
        column!("priority", |r| r.priority);
        column!("delivered_bytes", |r| r.delivered_bytes);
        column!("finished", |r| r.finish.is_some());
        column!("query", |r| r.query.map_or(-1, |q| q as i64));
        let kinds: Vec<&str> = records.iter().map(|r| if r.udp { "udp" } else { "tcp" }).collect();
        d.set_item("kind", PyList::new_bound(py, kinds))?;
        Ok(d.into())
    }

    /// Counters and occupancy statistics as a dict.
    fn counters(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let value = self.inner.counters_json();
        json_to_py(py, &value)
    }

    /// Sampled queue occupancy as NumPy columns, or None when sampling is off.
    fn samples(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        let s = self.inner.samples();
        if s.is_empty() {
            return Ok(None);
        }
        let d = PyDict::new_bound(py);
        let col = |v: Vec<f64>| -> Bound<'_, PyArray1<f64>> { v.into_pyarray_bound(py) };
        d.set_item("time_ns", col(s.iter().map(|x| x.time as f64 / 1e3).collect()))?;
        d.set_item("switch", s.iter().map(|x| x.switch).collect::<Vec<_>>().into_pyarray_bound(py))?;
        d.set_item("port", s.iter().map(|x| x.port).collect::<Vec<_>>().into_pyarray_bound(py))?;
        d.set_item("queue", s.iter().map(|x| x.queue).collect::<Vec<_>>().into_pyarray_bound(py))?;
        d.set_item("bytes", s.iter().map(|x| x.bytes).collect::<Vec<_>>().into_pyarray_bound(py))?;
        d.set_item("pool_bytes", s.iter().map(|x| x.pool_bytes).collect::<Vec<_>>().into_pyarray_bound(py))?;
        d.set_item("tx_bytes", s.iter().map(|x| x.tx_bytes).collect::<Vec<_>>().into_pyarray_bound(py))?;
        Ok(Some(d.into()))
    }

    /// Conservation and buffer-accounting violations (empty when all hold).
    fn check_invariants(&self) -> Vec<String> {
        self.inner.check_invariants()
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", shoal_core::VERSION)?;
    m.add("ScenarioError", m.py().get_type_bound::<PyScenarioError>())?;
    m.add_function(wrap_pyfunction!(default_scenario_toml, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(generate_trace, m)?)?;
    m.add_function(wrap_pyfunction!(parse_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_time_ps, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate_bps, m)?)?;
    m.add_class::<Simulation>()?;
    Ok(())
}
