//! What runs around each benchmark test beside the engine when the plan asks for it (memory per
//! key: the server's memory and keys read before the test and after it, its block in the test's
//! record, its lines in the report), as the run meets it without naming the mode that does it.
//!
//! Why installed: the benchmark runs for every caller of `run` (the registry's dispatch, and
//! memtier's and `ab`'s runs without the registry), and the mode's folder is above `run`; the
//! registry installs the probe once when the program starts (`crate::modes::install`), as it
//! installs the record's block kinds.

use std::any::Any;
use std::io::{self, Write};
use std::sync::OnceLock;
use std::time::Duration;

use crate::engine::control::ControlConn;
use crate::record::block::{Blocks, TEST};
use crate::workload::Template;
use crate::workload::sizes::SizeDist;

/// With `--cluster`: connects to every primary (their figures are added up).
pub type Primaries<'a> = dyn Fn() -> Result<Vec<ControlConn>, String> + 'a;

/// The probe around a test: implemented in the mode's folder.
pub trait TestProbe: Sync {
    /// Before the test, on the control connection (`dbnum`: the db the test writes); `None` when
    /// the servers do not answer.
    fn before(
        &self,
        control: &mut ControlConn,
        cluster: Option<&Primaries<'_>>,
        dbnum: u32,
        template: &Template,
    ) -> Option<Box<dyn Any>>;

    /// After the test: its blocks for the test's record, from what [`TestProbe::before`] read.
    fn after(
        &self,
        control: &mut ControlConn,
        before: Option<Box<dyn Any>>,
        template: &Template,
        sizes: Option<&SizeDist>,
        reply_timeout: Option<Duration>,
    ) -> Option<Blocks<TEST>>;

    /// Its lines in the text report, from the test's record's blocks.
    fn report(&self, out: &mut dyn Write, blocks: &Blocks<TEST>) -> io::Result<()>;
}

static PROBE: OnceLock<&'static dyn TestProbe> = OnceLock::new();

/// Installs the probe (the registry's, once, before any run).
pub fn install(probe: &'static dyn TestProbe) {
    let _ = PROBE.set(probe);
}

/// The installed probe.
pub(super) fn probe() -> &'static dyn TestProbe {
    match PROBE.get() {
        Some(probe) => *probe,
        None => not_installed(),
    }
}

/// Outside tests, a plan that asks for the probe before the registry installed it is a bug of
/// the program's start (its tests would lose their blocks).
#[cfg(not(test))]
fn not_installed() -> &'static dyn TestProbe {
    panic!("run: the test probe was not installed (crate::modes::install)")
}

/// Tests get the registry's probe without installing it.
#[cfg(test)]
fn not_installed() -> &'static dyn TestProbe {
    *PROBE.get_or_init(|| crate::modes::TEST_PROBE)
}
