//! `bench-parquet pages FILE`: what a file holds, page by page, so that two writers'
//! files can be compared (diff the output): each column chunk's metadata
//! (encodings, page encoding stats, statistics, level histograms, offset index) and
//! each page's header and first decompressed bytes. Offsets and sizes are printed
//! too; a diff shows them first.

use std::fs::File;

use parquet::column::page::Page;
use parquet::file::metadata::ParquetMetaDataReader;
use parquet::file::reader::{FileReader, SerializedFileReader};

/// Bytes of a page shown in hex.
const SHOWN: usize = 24;

fn hex(b: &[u8]) -> String {
    let shown: Vec<String> = b.iter().take(SHOWN).map(|x| format!("{x:02x}")).collect();
    let more = if b.len() > SHOWN { " .." } else { "" };
    format!("{}{more}", shown.join(" "))
}

pub fn run(path: &str) -> Result<(), String> {
    let err = |e: parquet::errors::ParquetError| format!("{path}: {e}");
    let file = File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let meta = ParquetMetaDataReader::new()
        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Optional)
        .with_metadata_options(Some(
            parquet::file::metadata::ParquetMetaDataOptions::new()
                .with_encoding_stats_as_mask(false),
        ))
        .parse_and_finish(&file)
        .map_err(err)?;
    let reader = SerializedFileReader::new(file).map_err(err)?;
    for (g, rg) in meta.row_groups().iter().enumerate() {
        println!("row group {g}: {} rows", rg.num_rows());
        let index = meta.page_index_for_row_group(g);
        let row_group = reader.get_row_group(g).map_err(err)?;
        for (i, c) in rg.columns().iter().enumerate() {
            println!(
                "  column {} ({:?}): values {} compressed {} uncompressed {} dict@{:?} data@{}",
                c.column_descr().name(),
                c.column_type(),
                c.num_values(),
                c.compressed_size(),
                c.uncompressed_size(),
                c.dictionary_page_offset(),
                c.data_page_offset()
            );
            let encodings: Vec<String> = c.encodings().map(|e| format!("{e:?}")).collect();
            println!(
                "    encodings {:?}; page encoding stats {:?}",
                encodings,
                c.page_encoding_stats()
            );
            println!("    statistics {:?}", c.statistics());
            println!(
                "    def histogram {:?}, rep histogram {:?}, unencoded byte array bytes {:?}",
                c.definition_level_histogram(),
                c.repetition_level_histogram(),
                c.unencoded_byte_array_data_bytes()
            );
            println!("    column index {:?}", index.column_index(i).is_some());
            if let Some(o) = index.offset_index(i) {
                println!(
                    "    offset index: {} pages, first rows {:?}, unencoded byte array bytes {:?}",
                    o.page_locations.len(),
                    o.page_locations
                        .iter()
                        .map(|p| p.first_row_index)
                        .collect::<Vec<_>>(),
                    o.unencoded_byte_array_data_bytes
                );
            }
            let pages = row_group.get_column_page_reader(i).map_err(err)?;
            for page in pages {
                let page = page.map_err(err)?;
                match &page {
                    Page::DictionaryPage {
                        buf,
                        num_values,
                        encoding,
                        is_sorted,
                    } => println!(
                        "    dictionary page: {num_values} values {encoding:?} sorted {is_sorted}, {} bytes: {}",
                        buf.len(),
                        hex(buf)
                    ),
                    Page::DataPage {
                        buf,
                        num_values,
                        encoding,
                        def_level_encoding,
                        rep_level_encoding,
                        statistics,
                    } => println!(
                        "    data page: {num_values} values {encoding:?} def {def_level_encoding:?} rep {rep_level_encoding:?} stats {statistics:?}, {} bytes: {}",
                        buf.len(),
                        hex(buf)
                    ),
                    other => println!("    other page: {:?}", other.page_type()),
                }
            }
        }
    }
    Ok(())
}
