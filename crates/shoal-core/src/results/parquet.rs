//! A small Parquet table writer (the `parquet` crate's column writers, no Arrow).
//!
//! The files read in pandas / pyarrow / DuckDB with the same schema pyarrow gives the
//! NumPy columns: every column is nullable (`optional`), unsigned integers carry their
//! logical type (`uint64`, `uint32`, `uint8`), text is UTF-8, and a float column stores
//! NaN as null (pandas reads it back as NaN). One row group, Snappy pages, no key-value
//! metadata: the same table always gives the same bytes.

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::io::{self, Write};
use std::sync::Arc;

/// A column's values.
pub enum Column<'a> {
    U64(&'a [u64]),
    U32(&'a [u32]),
    U8(&'a [u8]),
    I64(&'a [i64]),
    /// NaN is written as null.
    F64(&'a [f64]),
    Bool(&'a [bool]),
    Str(&'a [&'a str]),
    /// Floats worked out row by row as they are written (NaN is written as null).
    Derived {
        rows: usize,
        value: Box<dyn Fn(usize) -> f64 + 'a>,
    },
    /// Booleans worked out row by row as they are written.
    DerivedBool {
        rows: usize,
        value: Box<dyn Fn(usize) -> bool + 'a>,
    },
}

impl Column<'_> {
    fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::U8(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::Derived { rows, .. } | Column::DerivedBool { rows, .. } => *rows,
        }
    }

    fn schema(&self, name: &str) -> Type {
        let (physical, logical) = match self {
            Column::U64(_) => (PhysicalType::INT64, Some(LogicalType::integer(64, false))),
            Column::U32(_) => (PhysicalType::INT32, Some(LogicalType::integer(32, false))),
            Column::U8(_) => (PhysicalType::INT32, Some(LogicalType::integer(8, false))),
            Column::I64(_) => (PhysicalType::INT64, None),
            Column::F64(_) | Column::Derived { .. } => (PhysicalType::DOUBLE, None),
            Column::Bool(_) | Column::DerivedBool { .. } => (PhysicalType::BOOLEAN, None),
            Column::Str(_) => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
        };
        Type::primitive_type_builder(name, physical)
            .with_repetition(Repetition::OPTIONAL)
            .with_logical_type(logical)
            .build()
            .expect("a valid column type")
    }
}

/// Writes the named columns (all of one length) as a Parquet file to `out`.
pub fn write_table<W: Write + Send>(out: W, columns: &[(&str, Column<'_>)]) -> io::Result<()> {
    write_in_chunks(out, columns, CHUNK_ROWS)
}

/// Rows converted and handed to the column writer at a time: a column of millions of
/// rows is never copied whole. A multiple of the writer's mini-batch (1,024 rows), after
/// which it decides pages and encodings, so the file's bytes do not depend on it.
const CHUNK_ROWS: usize = 64 * 1024;

fn write_in_chunks<W: Write + Send>(out: W, columns: &[(&str, Column<'_>)], chunk: usize) -> io::Result<()> {
    let rows = columns.first().map_or(0, |(_, c)| c.len());
    assert!(columns.iter().all(|(_, c)| c.len() == rows), "columns of one table have one length");
    write(out, columns, rows, chunk).map_err(io::Error::other)
}

fn write<W: Write + Send>(
    out: W,
    columns: &[(&str, Column<'_>)],
    rows: usize,
    chunk: usize,
) -> Result<(), ParquetError> {
    let fields = columns.iter().map(|(name, c)| Arc::new(c.schema(name))).collect();
    let schema = Type::group_type_builder("schema").with_fields(fields).build()?;
    let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
    let mut file = SerializedFileWriter::new(out, Arc::new(schema), Arc::new(props))?;
    let mut group = file.next_row_group()?;
    let present = vec![1i16; rows.min(chunk)];
    for (_, column) in columns {
        let mut writer = group.next_column()?.expect("one writer per schema column");
        for start in (0..rows).step_by(chunk.max(1)) {
            let range = start..rows.min(start.saturating_add(chunk));
            let present = &present[..range.len()];
            match column {
                Column::U64(v) => {
                    let v: Vec<i64> = v[range].iter().map(|&x| x as i64).collect(); // same bits
                    writer.typed::<Int64Type>().write_batch(&v, Some(present), None)?;
                }
                Column::U32(v) => {
                    let v: Vec<i32> = v[range].iter().map(|&x| x as i32).collect(); // same bits
                    writer.typed::<Int32Type>().write_batch(&v, Some(present), None)?;
                }
                Column::U8(v) => {
                    let v: Vec<i32> = v[range].iter().map(|&x| x as i32).collect();
                    writer.typed::<Int32Type>().write_batch(&v, Some(present), None)?;
                }
                Column::I64(v) => {
                    writer.typed::<Int64Type>().write_batch(&v[range], Some(present), None)?;
                }
                Column::F64(v) => write_floats(writer.typed::<DoubleType>(), v[range].iter().copied())?,
                Column::Derived { value, .. } => write_floats(writer.typed::<DoubleType>(), range.map(value))?,
                Column::Bool(v) => {
                    writer.typed::<BoolType>().write_batch(&v[range], Some(present), None)?;
                }
                Column::DerivedBool { value, .. } => {
                    let v: Vec<bool> = range.map(value).collect();
                    writer.typed::<BoolType>().write_batch(&v, Some(present), None)?;
                }
                Column::Str(v) => {
                    let v: Vec<ByteArray> = v[range].iter().map(|s| ByteArray::from(*s)).collect();
                    writer.typed::<ByteArrayType>().write_batch(&v, Some(present), None)?;
                }
            }
        }
        writer.close()?;
    }
    group.close()?;
    file.close()?;
    Ok(())
}

/// Writes `values` to a float column, NaN as null.
fn write_floats(
    writer: &mut parquet::column::writer::ColumnWriterImpl<'_, DoubleType>,
    values: impl Iterator<Item = f64> + Clone,
) -> Result<(), ParquetError> {
    let levels: Vec<i16> = values.clone().map(|x| i16::from(!x.is_nan())).collect();
    let values: Vec<f64> = values.filter(|x| !x.is_nan()).collect();
    writer.write_batch(&values, Some(&levels), None)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks of rows give the bytes of writing each column whole: 200,000 rows (three
    /// chunks and a part) of every kind of column, with nulls and a text column of few
    /// values, as the flow table has.
    #[test]
    fn writing_in_chunks_keeps_the_bytes() {
        let n = 200_000usize;
        let ints: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9e37_79b9) % 100_003).collect();
        let small: Vec<u32> = ints.iter().map(|&i| (i % 7) as u32).collect();
        let bytes: Vec<u8> = ints.iter().map(|&i| (i % 3) as u8).collect();
        let signed: Vec<i64> = ints.iter().map(|&i| i as i64 - 50_000).collect();
        let floats: Vec<f64> = ints.iter().map(|&i| if i % 11 == 0 { f64::NAN } else { i as f64 / 3.0 }).collect();
        let flags: Vec<bool> = ints.iter().map(|&i| i % 2 == 0).collect();
        let names: Vec<&str> = ints.iter().map(|&i| ["tcp", "udp", "rdma"][(i % 3) as usize]).collect();
        let columns = || {
            vec![
                ("u64", Column::U64(&ints)),
                ("u32", Column::U32(&small)),
                ("u8", Column::U8(&bytes)),
                ("i64", Column::I64(&signed)),
                ("f64", Column::F64(&floats)),
                ("derived", Column::Derived { rows: n, value: Box::new(|i| floats[i] * 2.0) }),
                ("bool", Column::Bool(&flags)),
                ("derived_bool", Column::DerivedBool { rows: n, value: Box::new(|i| !flags[i]) }),
                ("str", Column::Str(&names)),
            ]
        };
        let file = |chunk: usize| {
            let mut out = Vec::new();
            write_in_chunks(&mut out, &columns(), chunk).unwrap();
            out
        };
        let whole = file(usize::MAX);
        assert!(whole.len() > 100_000, "{} bytes", whole.len());
        assert_eq!(file(CHUNK_ROWS), whole);
        assert_eq!(file(1024), whole);
    }
}
