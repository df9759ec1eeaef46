//! Thin Python bindings of shoal-core: scenarios go in as JSON text, results come out as
//! NumPy columns, plain dicts and JSON text, or as run directories the core writes itself
//! (`Simulation.write_run_dir`: no NumPy or pyarrow involved).

use numpy::{IntoPyArray, ToPyArray};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use shoal_core::results::{check_run_dir_target, Column, FileError, RunFiles, RunTables, Summary, TraceTable};
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

#[pyfunction]
fn presets_toml() -> &'static str {
    shoal_core::scenario::presets::PRESETS_TOML
}

/// The points (bytes, cumulative percent) of the flow-size distribution `workload.cdf`
/// names (a built-in name or a file), read and checked as a run reads it.
#[pyfunction]
fn flow_size_cdf(cdf: &str) -> PyResult<Vec<(f64, f64)>> {
    let cdf = shoal_core::workload::load_cdf(cdf, "cdf").map_err(to_py)?;
    Ok(cdf.points().to_vec())
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
        warnings.extend(shoal_core::scenario::input_checks::input_warnings(&input, &sc));
    }
    Ok((sc.resolved().map_err(to_py)?.to_json(), warnings))
}

/// The memory a run of the scenario needs, by part: [(what, key, bytes)].
/// The threads a scenario asks one run to use (`run.threads`; "auto": the cores
/// available). The resolved scenario leaves it out (results do not depend on it).
#[pyfunction]
fn run_threads(scenario_json: &str) -> PyResult<usize> {
    Ok(parse(scenario_json)?.run.threads.count())
}

#[pyfunction]
fn memory_estimate(scenario_json: &str) -> PyResult<Vec<(String, String, u64)>> {
    let sc = parse(scenario_json)?;
    sc.validate().map_err(to_py)?;
    let sc = sc.resolved().map_err(to_py)?;
    let net = shoal_core::net::build(&sc.topology).map_err(to_py)?;
    let estimate = shoal_core::budget::MemoryEstimate::of(&sc, &net).map_err(to_py)?;
    Ok(estimate.parts.into_iter().map(|p| (p.what.to_string(), p.key, p.bytes)).collect())
}

/// The facts of a scenario's network, as the core builds it (`Scenario::network_facts`):
/// its hosts, each switch's ports, the hosts traffic goes to, the longest route and its
/// base round trip. The scenario is validated and resolved first, as by `resolve`.
#[pyfunction]
fn network_facts(py: Python<'_>, scenario_json: &str) -> PyResult<PyObject> {
    let sc = parse(scenario_json)?;
    sc.validate().map_err(to_py)?;
    let facts = sc.resolved().map_err(to_py)?.network_facts().map_err(to_py)?;
    let text = serde_json::to_string(&facts).expect("the facts always serialize");
    Ok(py.import_bound("json")?.call_method1("loads", (text,))?.unbind())
}

/// Bytes of memory the system can still give a run (the tightest of Linux's
/// MemAvailable, the address-space limit and the cgroup's memory limit, or
/// `SHOAL_MEMORY_LIMIT`); None where none can be read.
#[pyfunction]
fn available_memory() -> Option<u64> {
    shoal_core::budget::available_memory().map(|a| a.bytes)
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

/// A quantity as written ("2.5 Gb/s", "1.5us", "3MB"), read with the scenario schema's
/// grammar: its number as written and its unit's factor in the base unit (bps, ps, B),
/// None without a unit. `kind`: "rate", "time" or "size". No range check: for callers
/// that do exact arithmetic on the number (the advisor).
#[pyfunction]
fn split_quantity(kind: &str, text: &str) -> PyResult<(String, Option<u64>)> {
    use shoal_core::units::{Bytes, Rate, Time};
    let split = match kind {
        "rate" => Rate::split(text),
        "time" => Time::split(text),
        "size" => Bytes::split(text),
        _ => return Err(PyValueError::new_err(format!("kind is rate, time or size, not {kind:?}"))),
    };
    split.map(|q| (q.number.to_string(), q.factor)).map_err(PyScenarioError::new_err)
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
    let net = shoal_core::net::build(&sc.topology).map_err(to_py)?;
    if let Some(available) = shoal_core::budget::available_memory() {
        let estimate = shoal_core::budget::MemoryEstimate::of_trace(&sc, &net).map_err(to_py)?;
        estimate.check(&available).map_err(to_py)?;
    }
    let flows = shoal_core::workload::generate(&sc.workload, sc.run.seed, &net).map_err(to_py)?;
    columns_to_dict(py, &TraceTable::from_flows(&flows).named_columns())
}

/// The columns of a trace, in order.
#[pyfunction]
fn trace_columns() -> Vec<&'static str> {
    shoal_core::results::schema::trace_columns()
}

/// The tables a run writes, each with its columns in order as (name, type).
#[pyfunction]
fn table_schemas() -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    shoal_core::results::schema::run_tables().into_iter().map(|t| (t.name, t.columns)).collect()
}

/// The JSON Schema of `summary.json`, as JSON text.
#[pyfunction]
fn summary_schema() -> String {
    shoal_core::results::schema::summary_schema().to_string()
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
            Column::Derived { rows, value } => {
                (0..*rows).map(value).collect::<Vec<f64>>().into_pyarray_bound(py).into_any().unbind()
            }
            Column::DerivedBool { rows, value } => {
                (0..*rows).map(value).collect::<Vec<bool>>().into_pyarray_bound(py).into_any().unbind()
            }
        };
        d.set_item(name, value)?;
    }
    Ok(d.into())
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
    #[pyo3(signature = (scenario_json, threads=1))]
    fn new(scenario_json: &str, threads: usize) -> PyResult<Self> {
        let scenario = parse(scenario_json)?;
        let inner = shoal_core::Simulation::with_threads(&scenario, threads).map_err(to_py)?;
        Ok(Simulation { inner, scenario })
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
    fn flows(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let table = self.inner.flow_table();
        let columns = table.named_columns();
        columns_to_dict(py, &columns)
    }

    /// Counters and occupancy statistics as a dict.
    fn counters(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let value = self.inner.counters_json();
        json_to_py(py, &value)
    }

    /// Every table the run has made so far, by name, as dicts of NumPy columns.
    fn tables(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let tables = RunTables::of_simulation(&mut self.inner);
        let d = PyDict::new_bound(py);
        for (name, columns) in tables.present() {
            d.set_item(name, columns_to_dict(py, &columns)?)?;
        }
        Ok(d.into())
    }

    /// The summary (`summary.json`) as JSON text. `warnings`: the scenario's; the run's
    /// own (invariant violations, unfinished flows) are added. `wall_time_s`: the wall
    /// time spent simulating.
    #[pyo3(signature = (warnings, wall_time_s=None))]
    fn summary(&mut self, warnings: Vec<String>, wall_time_s: Option<f64>) -> String {
        let table = self.inner.flow_table();
        Summary::of_simulation(&mut self.inner, &self.scenario, &table, warnings, wall_time_s).to_json()
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
    m.add_function(wrap_pyfunction!(presets_toml, m)?)?;
    m.add_function(wrap_pyfunction!(flow_size_cdf, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(generate_trace, m)?)?;
    m.add_function(wrap_pyfunction!(trace_columns, m)?)?;
    m.add_function(wrap_pyfunction!(table_schemas, m)?)?;
    m.add_function(wrap_pyfunction!(summary_schema, m)?)?;
    m.add_function(wrap_pyfunction!(parse_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_time_ps, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate_bps, m)?)?;
    m.add_function(wrap_pyfunction!(split_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(check_output_dir, m)?)?;
    m.add_function(wrap_pyfunction!(memory_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(run_threads, m)?)?;
    m.add_function(wrap_pyfunction!(network_facts, m)?)?;
    m.add_function(wrap_pyfunction!(available_memory, m)?)?;
    m.add_class::<Simulation>()?;
    Ok(())
}
