//! Thin Python bindings of shoal-core: scenarios go in as JSON text, results come out as
//! NumPy columns, plain dicts and JSON text, or as run directories the core writes itself
//! (`Simulation.write_run_dir`: no NumPy or pyarrow involved).

use numpy::{IntoPyArray, PyReadonlyArray1, ToPyArray};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use shoal_core::results::json::to_python_json;
use shoal_core::results::{
    check_run_dir_target, write_atomically, Column, FileError, FlowColumns, FlowTable, RunFiles, SampleTable, Summary,
    RUN_FILES,
};
use shoal_core::{Scenario, ScenarioError};
use std::path::PathBuf;

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

/// Validates a scenario; returns (the resolved scenario as JSON, warnings). With
/// `as_written`, the warnings include those about the scenario as written: keys without
/// effect for its topology or workload pattern, plain numbers that look like unit
/// mistakes (single runs want them; a sweep's base scenario serves several schemes).
#[pyfunction]
#[pyo3(signature = (scenario_json, as_written=false))]
fn resolve(scenario_json: &str, as_written: bool) -> PyResult<(String, Vec<String>)> {
    let sc = parse(scenario_json)?;
    let mut warnings = sc.validate().map_err(to_py)?;
    if as_written {
        let input: serde_json::Value = serde_json::from_str(scenario_json).expect("parsed above");
        warnings.extend(shoal_core::input_checks::input_warnings(&input, &sc));
    }
    Ok((sc.resolved().to_json(), warnings))
}

/// The memory a run of the scenario needs, by part: [(what, key, bytes)].
#[pyfunction]
fn memory_estimate(scenario_json: &str) -> PyResult<Vec<(String, String, u64)>> {
    let sc = parse(scenario_json)?;
    sc.validate().map_err(to_py)?;
    let sc = sc.resolved();
    let net = shoal_core::net::build(&sc.topology);
    let estimate = shoal_core::budget::MemoryEstimate::of(&sc, &net).map_err(to_py)?;
    Ok(estimate.parts.into_iter().map(|p| (p.what.to_string(), p.key.to_string(), p.bytes)).collect())
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

/// An I/O error as Python's `OSError(errno, strerror, filename)` (the subclass follows
/// errno: `PermissionError`, `FileNotFoundError`, ...).
fn os_error(e: FileError) -> PyErr {
    let filename = e.path.display().to_string();
    match e.error.raw_os_error() {
        Some(errno) => {
            let text = e.error.to_string();
            let strerror = text.split(" (os error").next().unwrap_or(&text).to_string();
            PyOSError::new_err((errno, strerror, filename))
        }
        None => PyOSError::new_err(format!("{}: {filename}", e.error)),
    }
}

/// Raises `OSError` unless `out` may become a run directory: missing, empty, or a run
/// directory Shoal wrote (see `check_run_dir_target`).
#[pyfunction]
fn check_output_dir(out: PathBuf) -> PyResult<()> {
    check_run_dir_target(&out).map_err(os_error)
}

/// Writes the run directory `out` atomically from `files` (run file name -> bytes,
/// written in order; `summary.json` required); returns nothing. The directory appears
/// only once every file is written.
#[pyfunction]
fn write_run_dir(out: PathBuf, files: &Bound<'_, PyDict>) -> PyResult<()> {
    let names: Vec<String> = files.keys().iter().map(|k| k.str().map(|s| s.to_string())).collect::<PyResult<_>>()?;
    if !names.iter().all(|n| RUN_FILES.contains(&n.as_str())) || !names.iter().any(|n| n == "summary.json") {
        return Err(PyValueError::new_err(format!(
            "a run directory holds summary.json and optionally {:?}; got {names:?}",
            &RUN_FILES[..3]
        )));
    }
    let mut failure = None;
    let result = write_atomically(&out, |dir| {
        for (name, data) in files.iter() {
            let (Ok(name), Ok(data)) = (name.extract::<String>(), data.downcast::<PyBytes>()) else {
                failure = Some(PyTypeError::new_err("files maps file names (str) to contents (bytes)"));
                return Err(FileError { path: dir.to_path_buf(), error: std::io::Error::other("not bytes") });
            };
            let path = dir.join(name);
            std::fs::write(&path, data.as_bytes()).map_err(FileError::at(&path))?;
        }
        Ok(())
    });
    match (result, failure) {
        (_, Some(err)) => Err(err),
        (Err(e), None) => Err(os_error(e)),
        (Ok(()), None) => Ok(()),
    }
}

/// Named columns as a dict of NumPy arrays (text columns as lists of str), in order.
fn columns_to_dict(py: Python<'_>, columns: &[(&'static str, Column<'_>)]) -> PyResult<PyObject> {
    let d = PyDict::new_bound(py);
    for (name, column) in columns {
        let value: PyObject = match column {
            Column::U64(v) => v.to_pyarray_bound(py).into_any().unbind(),
            Column::U32(v) => v.to_pyarray_bound(py).into_any().unbind(),
            Column::U8(v) => v.to_pyarray_bound(py).into_any().unbind(),
            Column::I64(v) => v.to_pyarray_bound(py).into_any().unbind(),
            Column::F64(v) => v.to_pyarray_bound(py).into_any().unbind(),
            Column::Bool(v) => v.to_pyarray_bound(py).into_any().unbind(),
            Column::Str(v) => PyList::new_bound(py, v.iter()).into_any().unbind(),
        };
        d.set_item(name, value)?;
    }
    Ok(d.into())
}

/// A JSON-compatible Python value (dict, list, tuple, str, int, float, bool, None) as
/// a JSON value, floats exact.
fn to_json_value(obj: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    use serde_json::Value;
    Ok(if obj.is_none() {
        Value::Null
    } else if let Ok(b) = obj.downcast::<PyBool>() {
        Value::Bool(b.is_true())
    } else if obj.is_instance_of::<PyInt>() {
        match obj.extract::<u64>() {
            Ok(u) => Value::from(u),
            Err(_) => Value::from(obj.extract::<i64>()?),
        }
    } else if let Ok(f) = obj.downcast::<PyFloat>() {
        serde_json::Number::from_f64(f.value()).map_or(Value::Null, Value::Number)
    } else if let Ok(s) = obj.downcast::<PyString>() {
        Value::String(s.to_str()?.to_string())
    } else if let Ok(d) = obj.downcast::<PyDict>() {
        let mut map = serde_json::Map::new();
        for (k, v) in d.iter() {
            map.insert(k.str()?.to_str()?.to_string(), to_json_value(&v)?);
        }
        Value::Object(map)
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        Value::Array(obj.iter()?.map(|v| to_json_value(&v?)).collect::<PyResult<_>>()?)
    } else if let Ok(f) = obj.extract::<f64>() {
        // NumPy scalars and other numbers.
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    } else {
        return Err(PyTypeError::new_err(format!("not a JSON value: {}", obj.get_type().name()?)));
    })
}

/// The summary (as JSON text) of a run given as its flow columns (NumPy arrays of the
/// flow table's dtypes, `kind` a list of str), its counters (`Simulation.counters()`)
/// and its resolved scenario (a dict).
#[pyfunction]
#[pyo3(signature = (flows, counters, scenario, version, warnings, wall_time_s=None))]
fn summarize(
    flows: &Bound<'_, PyDict>,
    counters: &Bound<'_, PyAny>,
    scenario: &Bound<'_, PyAny>,
    version: &str,
    warnings: Vec<String>,
    wall_time_s: Option<f64>,
) -> PyResult<String> {
    let column = |name: &str| -> PyResult<Bound<'_, PyAny>> {
        flows.get_item(name)?.ok_or_else(|| PyValueError::new_err(format!("flows has no column {name:?}")))
    };
    let bytes: PyReadonlyArray1<'_, u64> = column("bytes")?.extract()?;
    let start_ns: PyReadonlyArray1<'_, f64> = column("start_ns")?.extract()?;
    let finish_ns: PyReadonlyArray1<'_, f64> = column("finish_ns")?.extract()?;
    let fct_ns: PyReadonlyArray1<'_, f64> = column("fct_ns")?.extract()?;
    let slowdown: PyReadonlyArray1<'_, f64> = column("slowdown")?.extract()?;
    let retransmits: PyReadonlyArray1<'_, u32> = column("retransmits")?.extract()?;
    let timeouts: PyReadonlyArray1<'_, u32> = column("timeouts")?.extract()?;
    let delivered_bytes: PyReadonlyArray1<'_, u64> = column("delivered_bytes")?.extract()?;
    let finished: PyReadonlyArray1<'_, bool> = column("finished")?.extract()?;
    let query: PyReadonlyArray1<'_, i64> = column("query")?.extract()?;
    let udp: Vec<bool> = column("kind")?.extract::<Vec<String>>()?.iter().map(|k| k != "tcp").collect();
    let cols = FlowColumns {
        bytes: bytes.as_slice()?,
        start_ns: start_ns.as_slice()?,
        finish_ns: finish_ns.as_slice()?,
        fct_ns: fct_ns.as_slice()?,
        slowdown: slowdown.as_slice()?,
        retransmits: retransmits.as_slice()?,
        timeouts: timeouts.as_slice()?,
        delivered_bytes: delivered_bytes.as_slice()?,
        finished: finished.as_slice()?,
        udp: &udp,
        query: query.as_slice()?,
    };
    let n = cols.finished.len();
    let lengths = [
        cols.bytes.len(),
        cols.start_ns.len(),
        cols.finish_ns.len(),
        cols.fct_ns.len(),
        cols.slowdown.len(),
        cols.retransmits.len(),
        cols.timeouts.len(),
        cols.delivered_bytes.len(),
        cols.udp.len(),
        cols.query.len(),
    ];
    if lengths.iter().any(|&l| l != n) {
        return Err(PyValueError::new_err("the flow columns differ in length"));
    }
    let scenario: Scenario = serde_json::from_value(to_json_value(scenario)?)
        .map_err(|e| PyScenarioError::new_err(format!("not a resolved scenario: {e}")))?;
    let summary = Summary::new(cols, to_json_value(counters)?, &scenario, version, warnings, wall_time_s);
    Ok(to_python_json(&summary))
}

/// A simulation in progress.
#[pyclass(module = "shoal._core")]
struct Simulation {
    inner: shoal_core::Simulation,
    /// The scenario it was built from (the summary reports it).
    scenario: Scenario,
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(scenario_json: &str) -> PyResult<Self> {
        let scenario = parse(scenario_json)?;
        Ok(Simulation { inner: shoal_core::Simulation::new(&scenario).map_err(to_py)?, scenario })
    }

    /// Runs up to simulated time `until_ps`, or `max_events` events if that comes first;
    /// returns True when the run is over.
    #[pyo3(signature = (until_ps, max_events=u64::MAX))]
    fn run(&mut self, py: Python<'_>, until_ps: u64, max_events: u64) -> bool {
        let inner = &mut self.inner;
        py.allow_threads(|| inner.run_bounded(until_ps, max_events))
    }

    /// Whether the run stopped at the simulated-time limit (traffic making no progress).
    #[getter]
    fn reached_time_limit(&self) -> bool {
        self.inner.reached_time_limit()
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

    /// Per-flow results as NumPy columns (`kind` as a list of str), in table order.
    fn flows(&self, py: Python<'_>) -> PyResult<PyObject> {
        let table = FlowTable::from_records(&self.inner.flow_records());
        columns_to_dict(py, &table.named_columns(&table.kind()))
    }

    /// Counters and occupancy statistics as a dict.
    fn counters(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let value = self.inner.counters_json();
        json_to_py(py, &value)
    }

    /// Sampled queue occupancy as NumPy columns, or None when sampling is off.
    fn samples(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        let s = SampleTable::from_samples(self.inner.samples());
        if s.is_empty() {
            return Ok(None);
        }
        columns_to_dict(py, &s.named_columns()).map(Some)
    }

    /// The summary (`summary.json`) as JSON text. `warnings`: the scenario's; the run's
    /// own (invariant violations, unfinished flows) are added. `wall_time_s`: the wall
    /// time spent simulating.
    #[pyo3(signature = (warnings, wall_time_s=None))]
    fn summary(&mut self, warnings: Vec<String>, wall_time_s: Option<f64>) -> String {
        let table = FlowTable::from_records(&self.inner.flow_records());
        to_python_json(&Summary::of_simulation(&mut self.inner, &self.scenario, &table, warnings, wall_time_s))
    }

    /// Writes the run directory `out` (atomically); returns the summary as JSON text
    /// (arguments as for `summary`).
    #[pyo3(signature = (out, warnings, wall_time_s=None))]
    fn write_run_dir(
        &mut self,
        py: Python<'_>,
        out: PathBuf,
        warnings: Vec<String>,
        wall_time_s: Option<f64>,
    ) -> PyResult<String> {
        let files = RunFiles::collect(&mut self.inner, &self.scenario, warnings, wall_time_s);
        py.allow_threads(|| files.write(&out)).map_err(os_error)?;
        Ok(files.summary_json)
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
    m.add_function(wrap_pyfunction!(summarize, m)?)?;
    m.add_function(wrap_pyfunction!(write_run_dir, m)?)?;
    m.add_function(wrap_pyfunction!(check_output_dir, m)?)?;
    m.add_function(wrap_pyfunction!(memory_estimate, m)?)?;
    m.add_class::<Simulation>()?;
    Ok(())
}
