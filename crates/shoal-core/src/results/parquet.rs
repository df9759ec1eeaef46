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
        }
    }

    fn schema(&self, name: &str) -> Type {
        let (physical, logical) = match self {
            Column::U64(_) => (PhysicalType::INT64, Some(LogicalType::integer(64, false))),
            Column::U32(_) => (PhysicalType::INT32, Some(LogicalType::integer(32, false))),
            Column::U8(_) => (PhysicalType::INT32, Some(LogicalType::integer(8, false))),
            Column::I64(_) => (PhysicalType::INT64, None),
            Column::F64(_) => (PhysicalType::DOUBLE, None),
            Column::Bool(_) => (PhysicalType::BOOLEAN, None),
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
    let rows = columns.first().map_or(0, |(_, c)| c.len());
    assert!(columns.iter().all(|(_, c)| c.len() == rows), "columns of one table have one length");
    write(out, columns, rows).map_err(io::Error::other)
}

fn write<W: Write + Send>(out: W, columns: &[(&str, Column<'_>)], rows: usize) -> Result<(), ParquetError> {
    let fields = columns.iter().map(|(name, c)| Arc::new(c.schema(name))).collect();
    let schema = Type::group_type_builder("schema").with_fields(fields).build()?;
    let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
    let mut file = SerializedFileWriter::new(out, Arc::new(schema), Arc::new(props))?;
    let mut group = file.next_row_group()?;
    let present = vec![1i16; rows];
    for (_, column) in columns {
        let mut writer = group.next_column()?.expect("one writer per schema column");
        match column {
            Column::U64(v) => {
                let v: Vec<i64> = v.iter().map(|&x| x as i64).collect(); // same bits
                writer.typed::<Int64Type>().write_batch(&v, Some(&present), None)?;
            }
            Column::U32(v) => {
                let v: Vec<i32> = v.iter().map(|&x| x as i32).collect(); // same bits
                writer.typed::<Int32Type>().write_batch(&v, Some(&present), None)?;
            }
            Column::U8(v) => {
                let v: Vec<i32> = v.iter().map(|&x| x as i32).collect();
                writer.typed::<Int32Type>().write_batch(&v, Some(&present), None)?;
            }
            Column::I64(v) => {
                writer.typed::<Int64Type>().write_batch(v, Some(&present), None)?;
            }
            Column::F64(v) => {
                let levels: Vec<i16> = v.iter().map(|x| i16::from(!x.is_nan())).collect();
                let values: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
                writer.typed::<DoubleType>().write_batch(&values, Some(&levels), None)?;
            }
            Column::Bool(v) => {
                writer.typed::<BoolType>().write_batch(v, Some(&present), None)?;
            }
            Column::Str(v) => {
                let v: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(*s)).collect();
                writer.typed::<ByteArrayType>().write_batch(&v, Some(&present), None)?;
            }
        }
        writer.close()?;
    }
    group.close()?;
    file.close()?;
    Ok(())
}
