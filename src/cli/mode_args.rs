//! A mode's options, seen from `cli`: each mode's folder holds its option entries and the type
//! they fill (`StormArgs`, …); the table and [`super::Args`] hold them without naming the mode.
//!
//! Why not a field per mode: `cli` is below the modes (they read their options from `Args`), so
//! a field of a mode's type would be an import circle. As the record holds a mode's block through
//! its kind (`record::block`), `Args` holds each mode's options as a slot keyed by their type
//! ([`ModeSlots`]), read by the mode as `args.mode::<StormArgs>()`. The kinds ([`ArgsKind`], one
//! per mode, listed by the registry `crate::modes`) are installed once when the program starts
//! ([`install`]): their entries join the table at their [`Place`], in the registry's order, and
//! their whole-line checks run after every option is read.

use std::any::Any;
use std::fmt::Debug;
use std::sync::OnceLock;

use super::UsageError;
use super::flag::Flag;
use super::state::State;

/// Where a mode's entries sit in the table (the order `--help`'s groups do not decide: the
/// completions' and the man page's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Among valkey-benchmark's options, after its general ones.
    Reference,
    /// Among respbench's own, after the workload options.
    Own,
}

/// A mode's options as given: implemented in the mode's folder beside its entries.
pub trait ModeArgs: Clone + Debug + Default + PartialEq + Send + Sync + 'static {
    /// Its entries, in help order; their setters change `state.mode_mut::<Self>()`.
    const FLAGS: &'static [Flag<State>];
    /// Where the entries sit in the table.
    const PLACE: Place;

    /// The checks that need the whole line (each mode's in the registry's order, after the
    /// workload options' checks).
    fn check(_st: &mut State) -> Result<(), UsageError> {
        Ok(())
    }

    /// Whether the option spelled `name` (its first spelling) asked for this mode or one of its
    /// switches: what the layers below the modes (the plan's conflict rules, `ab`) ask without
    /// naming the mode.
    fn asks(&self, _name: &str) -> bool {
        false
    }
}

/// A mode's options as `cli` holds them without their type.
trait Slot: Any + Debug + Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn clone_slot(&self) -> Box<dyn Slot>;
    fn same(&self, other: &dyn Slot) -> bool;
    fn asks(&self, name: &str) -> bool;
}

impl<A: ModeArgs> Slot for A {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn clone_slot(&self) -> Box<dyn Slot> {
        Box::new(self.clone())
    }
    fn same(&self, other: &dyn Slot) -> bool {
        other.as_any().downcast_ref::<A>() == Some(self)
    }
    fn asks(&self, name: &str) -> bool {
        ModeArgs::asks(self, name)
    }
}

/// A mode's options' kind: its entries, their place, its options' default and its checks.
pub struct ArgsKind {
    pub flags: &'static [Flag<State>],
    pub place: Place,
    default: fn() -> Box<dyn Slot>,
    pub(super) check: fn(&mut State) -> Result<(), UsageError>,
}

impl ArgsKind {
    /// The kind of `A`.
    pub const fn of<A: ModeArgs>() -> ArgsKind {
        ArgsKind {
            flags: A::FLAGS,
            place: A::PLACE,
            default: || Box::new(A::default()),
            check: A::check,
        }
    }
}

static KINDS: OnceLock<&'static [ArgsKind]> = OnceLock::new();

/// Installs the modes' options (the registry's list, `crate::modes::OPTIONS`), once, before
/// any command line is parsed or the table read.
pub fn install(kinds: &'static [ArgsKind]) {
    let _ = KINDS.set(kinds);
}

/// The installed kinds.
pub(super) fn kinds() -> &'static [ArgsKind] {
    match KINDS.get() {
        Some(kinds) => kinds,
        None => not_installed(),
    }
}

/// Outside tests, a command line parsed before the registry installed the modes' options is a
/// bug of the program's start (their options would be unknown).
#[cfg(not(test))]
fn not_installed() -> &'static [ArgsKind] {
    panic!("cli: the modes' options were not installed (crate::modes::install)")
}

/// Tests get the registry's kinds without installing them.
#[cfg(test)]
fn not_installed() -> &'static [ArgsKind] {
    KINDS.get_or_init(|| crate::modes::OPTIONS)
}

/// Every installed mode's options, in the registry's order (each at its default until an entry
/// changes it).
#[derive(Debug)]
pub(super) struct ModeSlots(Vec<Box<dyn Slot>>);

impl Default for ModeSlots {
    fn default() -> Self {
        ModeSlots(kinds().iter().map(|k| (k.default)()).collect())
    }
}

impl Clone for ModeSlots {
    fn clone(&self) -> Self {
        ModeSlots(self.0.iter().map(|s| s.clone_slot()).collect())
    }
}

impl PartialEq for ModeSlots {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a.same(&**b))
    }
}

impl ModeSlots {
    pub(super) fn get<A: ModeArgs>(&self) -> &A {
        let found = self.0.iter().find_map(|s| s.as_any().downcast_ref::<A>());
        found.unwrap_or_else(|| not_a_mode::<A>())
    }

    pub(super) fn get_mut<A: ModeArgs>(&mut self) -> &mut A {
        let found = self
            .0
            .iter_mut()
            .find_map(|s| s.as_any_mut().downcast_mut::<A>());
        found.unwrap_or_else(|| not_a_mode::<A>())
    }

    pub(super) fn asks(&self, name: &str) -> bool {
        self.0.iter().any(|s| s.asks(name))
    }
}

fn not_a_mode<A>() -> ! {
    panic!(
        "cli: {} is not an installed mode's options (crate::modes::OPTIONS)",
        std::any::type_name::<A>()
    )
}
