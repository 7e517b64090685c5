pub(crate) mod column_index;
pub(crate) mod columns;
pub(crate) mod constants;
pub(crate) mod delta;
pub(crate) mod delta_columns;
pub(crate) mod dict_columns;
#[cfg(test)]
mod dict_tests;
pub(crate) mod dictionary;
pub(crate) mod opt_column;
pub(crate) mod pages;
pub(crate) mod rle;
pub(crate) mod row_group;
pub(crate) mod shapes;
pub(crate) mod strings;
