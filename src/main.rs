//! respbench's entry point: parse, run, and map the outcome to an exit code.
//!
//! Exit codes: 0 success (also when stdout is closed early), 1 a runtime failure (server,
//! connection, protocol, reading stdin or the dataset file), 2 a command-line mistake (including
//! a dataset whose content does not fit the command), 130 interrupted by Ctrl-C, 143 stopped by
//! SIGTERM (after the partial report, like Ctrl-C). The subcommands (`ab`, `compare`, `report`,
//! `merge`, `recover`, `replay`, `capture`, `completions`, `man`) return their own codes; `memtier`
//! (or the program started as `memtier_benchmark`) the run's (see their `--help`; 2 for bad usage).

use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use respbench::cli::{self, Invocation};
use respbench::modes;
use respbench::plan::{PlanError, RunPlan};
use respbench::run::Failure;

fn main() -> ExitCode {
    // The modes' record blocks, before any record is read or written (`record::block`).
    respbench::modes::install();
    // Subcommands only as the very first argument: anything else is valkey-benchmark's command
    // line, whose first non-option argument starts a custom command (no Redis or Valkey command
    // is named AB, COMPARE, REPORT, MERGE, RECOVER, MEMTIER, COMPLETIONS or MAN).
    let rest = || std::env::args_os().skip(2).collect();
    // memtier_benchmark's command line: `respbench memtier …`, or started under that name.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(args) = respbench::memtier::invoked_as_memtier(&argv) {
        return memtier_main(args);
    }
    match std::env::args_os()
        .nth(1)
        .as_deref()
        .and_then(|a| a.to_str())
    {
        Some("ab") => {
            let (interrupted, terminated) = install_signals();
            return ExitCode::from(respbench::ab::main(rest(), interrupted, terminated));
        }
        Some("compare") => return ExitCode::from(respbench::compare::cli::main(rest())),
        Some("report") => return ExitCode::from(respbench::report_cli::main(rest())),
        Some("recover") => return ExitCode::from(respbench::recover_cli::main(rest())),
        Some("merge") => return respbench::merge::main(std::env::args_os().skip(2)),
        Some("replay") => return respbench::replay::main(rest()),
        Some("capture") => return respbench::replay::capture::main(rest()),
        Some("completions") => return ExitCode::from(respbench::manual::completions_main(rest())),
        Some("man") => return ExitCode::from(respbench::manual::man_main(rest())),
        _ => {}
    }
    let env_password = std::env::var_os(cli::PASSWORD_ENV);
    let args = match cli::parse_with_env(std::env::args_os().skip(1), env_password) {
        Ok(Invocation::Run(args)) => args,
        Ok(Invocation::Help) => {
            print!("{}", cli::help_text());
            return ExitCode::SUCCESS;
        }
        Ok(Invocation::Version) => {
            println!("{}", cli::version_text());
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("respbench: {}", e.0);
            return ExitCode::from(2);
        }
    };

    let stdin = if args.stdin_last_arg && !args.command.is_empty() {
        if stdin_was_closed() {
            eprintln!("respbench: cannot read stdin for -x: standard input is closed");
            return ExitCode::from(1);
        }
        let mut buf = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut buf) {
            eprintln!("respbench: cannot read stdin for -x: {e}");
            return ExitCode::from(1);
        }
        Some(buf)
    } else {
        None
    };
    let planned = match modes::plan(&args, stdin) {
        Ok(p) => p,
        Err(PlanError::Usage(e)) => {
            eprintln!("respbench: {e}");
            return ExitCode::from(2);
        }
        Err(PlanError::Io(e)) => {
            eprintln!("respbench: {e}");
            return ExitCode::from(1);
        }
    };

    let (interrupted, terminated) = install_signals();
    exit_code(
        modes::run(&planned, interrupted, terminated.clone()),
        &terminated,
    )
}

/// memtier_benchmark's command line: its own parser and output, respbench's run underneath.
fn memtier_main(argv: Vec<std::ffi::OsString>) -> ExitCode {
    use respbench::memtier::cli::{self as memtier, MemtierInvocation};
    let (mut args, opts) = match memtier::parse(argv, std::env::var_os(cli::PASSWORD_ENV)) {
        Ok(MemtierInvocation::Run(args, opts)) => (args, opts),
        Ok(MemtierInvocation::Help) => {
            print!("{}", memtier::help_text());
            return ExitCode::SUCCESS;
        }
        Ok(MemtierInvocation::Version) => {
            println!("{} (memtier_benchmark command line)", cli::version_text());
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // memtier's refusals start `error:`; scripts (its own test suite) look for it.
            eprintln!("respbench memtier: error: {}", e.0);
            return ExitCode::from(2);
        }
    };
    if let Err(e) = respbench::memtier::resolve_monitor_input(&mut args, &opts) {
        eprintln!("respbench memtier: error: {e}");
        return ExitCode::from(2);
    }
    let plan = match RunPlan::new(&args, None) {
        Ok(p) => p,
        Err(PlanError::Usage(e)) => {
            eprintln!("respbench memtier: error: {e}");
            return ExitCode::from(2);
        }
        Err(PlanError::Io(e)) => {
            eprintln!("respbench memtier: {e}");
            return ExitCode::from(1);
        }
    };
    let (interrupted, terminated) = install_signals();
    let result = respbench::memtier::run(&plan, &opts, interrupted, terminated.clone());
    exit_code(result, &terminated)
}

/// First Ctrl-C or SIGTERM (what `timeout`, CI runners and systemd send): stop measuring and
/// print what was measured. A second one of either: leave at once. Returns (interrupted,
/// terminated).
fn install_signals() -> (Arc<AtomicBool>, Arc<AtomicBool>) {
    let interrupted = Arc::new(AtomicBool::new(false));
    let terminated = Arc::new(AtomicBool::new(false));
    // Registered first: actions run in order, so `terminated` is set before `interrupted` and
    // the partial report names SIGTERM.
    if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGTERM, terminated.clone()) {
        eprintln!("respbench: cannot handle SIGTERM: {e}");
    }
    for (signal, code) in [
        (signal_hook::consts::SIGINT, 130),
        (signal_hook::consts::SIGTERM, 143),
    ] {
        let results = [
            signal_hook::flag::register_conditional_shutdown(signal, code, interrupted.clone()),
            signal_hook::flag::register(signal, interrupted.clone()),
        ];
        for result in results {
            if let Err(e) = result {
                eprintln!("respbench: cannot handle signal {signal}: {e}");
            }
        }
    }

    (interrupted, terminated)
}

/// The exit code of a run's outcome.
fn exit_code(result: Result<(), Failure>, terminated: &AtomicBool) -> ExitCode {
    match result {
        Ok(()) | Err(Failure::BrokenPipe) => ExitCode::SUCCESS,
        // 128 + the signal's number, as a shell reports a process killed by it.
        Err(Failure::Interrupted) if terminated.load(Ordering::Relaxed) => ExitCode::from(143),
        Err(Failure::Interrupted) => ExitCode::from(130),
        Err(Failure::Fatal(message)) => {
            eprintln!("respbench: {message}");
            ExitCode::from(1)
        }
        Err(Failure::Usage(message)) => {
            eprintln!("respbench: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Reference(message)) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
    }
}

/// Whether the process started with standard input closed (`<&-`). Rust's runtime reopens a
/// closed fd 0 on `/dev/null` before `main`, so `-x` would read nothing and send an empty value;
/// it opens it read-write, which a shell's `< /dev/null` never does. That combination is the
/// tell (a deliberate `<> /dev/null` reads the same as a closed stdin, and gets the same answer).
fn stdin_was_closed() -> bool {
    // SAFETY: `fstat`, `stat` and `fcntl` only write into the zeroed structs passed to them.
    unsafe {
        let mut fd0: libc::stat = std::mem::zeroed();
        let mut null: libc::stat = std::mem::zeroed();
        if libc::fstat(0, &mut fd0) != 0 {
            return true;
        }
        if libc::stat(c"/dev/null".as_ptr(), &mut null) != 0 {
            return false;
        }
        let flags = libc::fcntl(0, libc::F_GETFL);
        fd0.st_mode & libc::S_IFMT == libc::S_IFCHR
            && fd0.st_rdev == null.st_rdev
            && flags >= 0
            && flags & libc::O_ACCMODE == libc::O_RDWR
    }
}
