//! Memory per key as the run meets it around each benchmark test (`run::TestProbe`, installed
//! by the registry): the readings before and after (`per_test.rs`), the test's `memory` block,
//! its lines in the report (`report.rs`).

use std::any::Any;
use std::io::{self, Write};
use std::time::Duration;

use super::block::MemoryRecord;
use super::per_test::{self, Before};
use crate::engine::control::ControlConn;
use crate::record::block::{Blocks, TEST};
use crate::run::{Primaries, TestProbe};
use crate::workload::Template;
use crate::workload::sizes::SizeDist;

/// The probe.
pub struct MemoryProbe;

impl TestProbe for MemoryProbe {
    fn before(
        &self,
        control: &mut ControlConn,
        cluster: Option<&Primaries<'_>>,
        dbnum: u32,
        template: &Template,
    ) -> Option<Box<dyn Any>> {
        let before = per_test::before(control, cluster, dbnum, template)?;
        Some(Box::new(before))
    }

    fn after(
        &self,
        control: &mut ControlConn,
        before: Option<Box<dyn Any>>,
        template: &Template,
        sizes: Option<&SizeDist>,
        reply_timeout: Option<Duration>,
    ) -> Option<Blocks<TEST>> {
        let before = before.and_then(|b| b.downcast::<Before>().ok()).map(|b| *b);
        let memory = per_test::after(control, before, template, sizes, reply_timeout)?;
        let mut blocks = Blocks::default();
        blocks.put(&memory);
        Some(blocks)
    }

    fn report(&self, out: &mut dyn Write, blocks: &Blocks<TEST>) -> io::Result<()> {
        match blocks.block::<MemoryRecord>() {
            Some(m) => super::report::write_memory(out, &m),
            None => Ok(()),
        }
    }
}
