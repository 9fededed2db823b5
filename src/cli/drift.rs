//! `--key-drift` (issue 26: moving hot spots): its entry and value. A load option of every test
//! (the keys move whatever the mode), listed in the table after the modes' entries, where it
//! always was; `plan/drift.rs` checks it against the key pattern and range.

use std::ffi::OsStr;
use std::time::Duration;

use super::UsageError;
use super::flag::{Flag, Value};
use super::state::State;
use super::value::{invalid_value, seconds, text, whole};

/// The main table's entry type (names the state its setters change).
type F = Flag<State>;

/// `--key-drift` as given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyDriftArg {
    /// `STEP:SECS`: the Gaussian or Zipf centre moves by STEP keys every SECS.
    Shift { step: u64, every: Duration },
    /// `hot:H:SECS`: a hot set of H keys, replaced every SECS.
    HotSet { keys: u64, every: Duration },
}

/// The entry.
pub(super) const FLAGS: &[Flag<State>] = &[F::value(
    &["--key-drift"],
    Value::Text,
    "--key-drift <step:secs|hot:h:secs>",
    "Moving hot spots: the gaussian or zipf centre moves by\n\
     step keys every secs seconds, or (hot:h:secs) keys are\n\
     drawn from a hot set of h keys replaced every secs",
    |st, name, v| {
        st.args.workload.key_drift = Some(key_drift(name, v)?);
        Ok(())
    },
)
.example(&["-r", "1000", "--keys", "zipf", "--key-drift", "100:5"])];

/// `STEP:SECS` or `hot:H:SECS`.
fn key_drift(name: &str, v: &OsStr) -> Result<KeyDriftArg, UsageError> {
    let s = text(name, v)?;
    let err = || {
        invalid_value(
            name,
            v,
            "step:secs or hot:h:secs, e.g. 100:5 or hot:1000:10",
        )
    };
    let parts: Vec<&str> = s.split(':').collect();
    let count = |t: &str| whole::<u64>(name, OsStr::new(t), 1, 999_999_999_999).map_err(|_| err());
    let secs = |t: &str| seconds(name, OsStr::new(t)).map_err(|_| err());
    match parts.as_slice() {
        ["hot", keys, every] => Ok(KeyDriftArg::HotSet {
            keys: count(keys)?,
            every: secs(every)?,
        }),
        [step, every] => Ok(KeyDriftArg::Shift {
            step: count(step)?,
            every: secs(every)?,
        }),
        _ => Err(err()),
    }
}
