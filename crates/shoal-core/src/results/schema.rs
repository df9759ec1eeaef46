//! The tables a run writes and their columns, as the binding, Python's `Result`, the
//! store and DuckDB read them. Read off the tables themselves (`named_columns` lists each
//! table's columns, once), so a new table or column needs no edit here or in Python.

use super::{Column, RunTables, TraceTable};

/// A run table: its name (its file is `<name>.parquet`) and its columns in order, each
/// with its type (`dtype`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSchema {
    pub name: &'static str,
    pub columns: Vec<(&'static str, &'static str)>,
}

/// A column's type: `u8`, `u32`, `u64`, `i64`, `f64`, `bool` or `str`.
pub fn dtype(column: &Column) -> &'static str {
    match column {
        Column::U8(_) => "u8",
        Column::U32(_) => "u32",
        Column::U64(_) => "u64",
        Column::I64(_) => "i64",
        Column::F64(_) | Column::Derived { .. } => "f64",
        Column::Bool(_) | Column::DerivedBool { .. } => "bool",
        Column::Str(_) => "str",
    }
}

/// The schema of a table whose columns are `columns`.
pub fn schema_of(name: &'static str, columns: &[(&'static str, Column)]) -> TableSchema {
    TableSchema { name, columns: columns.iter().map(|(c, column)| (*c, dtype(column))).collect() }
}

/// Every table a run may write, in the order of `RunTables::all`.
pub fn run_tables() -> Vec<TableSchema> {
    RunTables::with_every_table().all().into_iter().map(|((name, columns), _)| schema_of(name, &columns)).collect()
}

/// The JSON Schema of `summary.json`, generated from the structs that write it (their
/// doc comments are its descriptions).
pub fn summary_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(super::Summary<'static>)).expect("a schema serializes")
}

/// The columns of a trace (`shoal trace`), in order.
pub fn trace_columns() -> Vec<&'static str> {
    TraceTable::default().named_columns().into_iter().map(|(name, _)| name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table has a name of its own and columns of their own.
    #[test]
    fn names_are_unique() {
        let tables = run_tables();
        let names: std::collections::BTreeSet<_> = tables.iter().map(|t| t.name).collect();
        assert_eq!(names.len(), tables.len());
        for t in &tables {
            let columns: std::collections::BTreeSet<_> = t.columns.iter().map(|c| c.0).collect();
            assert_eq!(columns.len(), t.columns.len(), "{}", t.name);
        }
    }
}
