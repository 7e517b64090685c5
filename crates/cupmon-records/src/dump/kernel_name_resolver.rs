//! Kernel-name pointers to the names users see: looked up in the dump's
//! `kernel_names.tsv` and demangled once per distinct pointer, as Kineto does.

use std::collections::HashMap;

use super::KernelNameTable;
use crate::demangle::demangle;

/// Resolves name pointers through a [`KernelNameTable`], demangling each pointer's name
/// once and counting the lookups that found nothing.
#[derive(Debug)]
pub struct KernelNames<'a> {
    table: &'a KernelNameTable,
    /// name pointer -> (demangled or placeholder name, resolved)
    cache: HashMap<u64, (String, bool)>,
    unresolved: u64,
}

impl<'a> KernelNames<'a> {
    /// `table`: the dump's `kernel_names.tsv` (empty when the dump has none).
    pub fn new(table: &'a KernelNameTable) -> Self {
        Self {
            table,
            cache: HashMap::new(),
            unresolved: 0,
        }
    }

    /// The kernel name for a name pointer: demangled, or `kernel@0x<ptr>` when the table
    /// lacks it; the flag says whether it was resolved.
    pub fn name(&mut self, ptr: u64) -> (&str, bool) {
        let table = self.table;
        let (name, resolved) = self
            .cache
            .entry(ptr)
            .or_insert_with(|| match table.get(ptr) {
                Some(mangled) => (demangle(mangled).into_owned(), true),
                None => (format!("kernel@0x{ptr:x}"), false),
            });
        if !*resolved {
            self.unresolved += 1;
        }
        (name.as_str(), *resolved)
    }

    /// Lookups so far whose pointer had no entry in the table.
    pub fn unresolved(&self) -> u64 {
        self.unresolved
    }
}
