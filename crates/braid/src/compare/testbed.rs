//! What every real contender of `braid compare` shares: the emulated
//! testbed (scripts/testbed.sh with `braid emulate`), commands run inside
//! its namespaces, and child processes that never outlive a run.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The testbed's namespaces for `braid compare`.
const PREFIX: &str = "braid-cmp";

pub fn client_ns() -> String {
    format!("{PREFIX}-client")
}

pub fn server_ns() -> String {
    format!("{PREFIX}-server")
}

/// The server's address, and path `i`'s client address, as text.
pub fn server_addr() -> String {
    braid_emu::plan::dotted(braid_emu::plan::SERVER_ADDR)
}

pub fn client_addr(path: usize) -> String {
    braid_emu::plan::dotted(braid_emu::plan::client_addr(path))
}

/// The path whose client address is `local` (an address without port).
pub fn path_of(local: &str, paths: usize) -> Option<usize> {
    (0..paths).find(|&i| client_addr(i) == local)
}

pub fn run_quiet(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{what}: cannot run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed: {}{}",
            String::from_utf8_lossy(&out.stderr).trim(),
            String::from_utf8_lossy(&out.stdout).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// An error once SIGINT or SIGTERM arrived (after `signals::install`):
/// every wait checks it, so the run ends through the `Drop`s that take
/// its children and the testbed down.
pub fn interrupted() -> Result<(), String> {
    match braid_emu::signals::stop_requested() {
        true => Err("interrupted".into()),
        false => Ok(()),
    }
}

pub fn in_ns(ns: &str, args: &[&str]) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns]).args(args);
    c
}

/// The testbed, taken down when dropped (also on errors and panics).
pub struct Testbed<'a> {
    script: &'a Path,
    /// Held while the testbed is up: another `braid compare` would take
    /// down these namespaces (the script's `up` starts with `down`).
    _lock: std::fs::File,
}

/// Takes the lock of the testbed's namespaces, or says who holds it.
fn lock() -> Result<std::fs::File, String> {
    lock_file(&std::env::temp_dir().join(format!("{PREFIX}.lock")))
}

/// Takes the lock `path` (held while the file returned is open).
fn lock_file(path: &Path) -> Result<std::fs::File, String> {
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            Err(format!("another braid compare uses the testbed's namespaces ({PREFIX}-*; lock {})", path.display()))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(format!("{}: {e}", path.display())),
    }
}

impl<'a> Testbed<'a> {
    /// Builds the namespaces and starts `braid emulate` (this executable)
    /// on the scenario's links, their random drops seeded with `seed`.
    pub fn up(script: &'a Path, scenario: &Path, seed: u64) -> Result<Testbed<'a>, String> {
        let braid = std::env::current_exe().map_err(|e| format!("cannot find the braid binary: {e}"))?;
        let seed_arg = format!("--seed={seed}");
        let mut cmd = Command::new(script);
        cmd.env("BRAID", &braid).args(["up", "--shaper", "emulator", "--prefix", PREFIX, "--scenario"]);
        cmd.arg(scenario).args(["--emulate-arg", &seed_arg]);
        let bed = Testbed { script, _lock: lock()? };
        run_quiet(&mut cmd, &format!("{} up", script.display()))?;
        Ok(bed)
    }
}

impl Drop for Testbed<'_> {
    fn drop(&mut self) {
        let _ = Command::new(self.script)
            .args(["down", "--prefix", PREFIX])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A child process, killed if dropped before it finished.
pub struct Reaped(Option<Child>);

impl Reaped {
    pub fn spawn(cmd: &mut Command, what: &str) -> Result<Reaped, String> {
        cmd.spawn().map(|c| Reaped(Some(c))).map_err(|e| format!("cannot start {what}: {e}"))
    }

    /// Whether it still runs (false once waited for).
    pub fn running(&mut self) -> Result<bool, String> {
        match self.0.as_mut() {
            Some(child) => Ok(child.try_wait().map_err(|e| e.to_string())?.is_none()),
            None => Ok(false),
        }
    }

    fn wait(&mut self) -> Result<ExitStatus, String> {
        self.0.take().expect("not finished").wait().map_err(|e| e.to_string())
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A child whose standard output arrives line by line while it runs:
/// threads drain both pipes, so a chatty child never blocks on a full one.
pub struct Lines {
    child: Reaped,
    what: String,
    rx: mpsc::Receiver<String>,
    seen: Vec<String>,
    stderr: Option<JoinHandle<String>>,
}

impl Lines {
    pub fn spawn(cmd: &mut Command, what: &str) -> Result<Lines, String> {
        let mut child = Reaped::spawn(cmd.stdout(Stdio::piped()).stderr(Stdio::piped()), what)?;
        let c = child.0.as_mut().expect("just started");
        let (stdout, mut stderr) = (c.stdout.take().expect("piped"), c.stderr.take().expect("piped"));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Ok(Lines { child, what: what.to_string(), rx, seen: vec![], stderr: Some(stderr) })
    }

    /// Waits up to `timeout` for a line containing `needle`.
    pub fn wait_for(&mut self, needle: &str, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            interrupted()?;
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left.min(Duration::from_millis(100))) {
                Ok(line) => {
                    let found = line.contains(needle);
                    self.seen.push(line);
                    if found {
                        return Ok(());
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) if !left.is_zero() => {}
                Err(_) => {
                    let stderr = self.stderr_text();
                    let secs = timeout.as_secs_f64();
                    return Err(format!("{} printed no {needle:?} within {secs:.1} s: {}", self.what, stderr.trim()));
                }
            }
        }
    }

    /// Whether the child still runs.
    pub fn running(&mut self) -> Result<bool, String> {
        self.child.running()
    }

    /// Waits up to `timeout` for the child to exit; its whole output then,
    /// or an error with what it wrote to stderr if it failed or overran.
    pub fn finish(self, timeout: Duration) -> Result<String, String> {
        let what = self.what.clone();
        let (status, stdout, stderr) = self.output(timeout)?;
        if !status.success() {
            return Err(format!("{what} failed ({status}): {}", stderr.trim()));
        }
        Ok(stdout)
    }

    /// Waits up to `timeout` for the child to exit; how it ended, and its
    /// whole stdout and stderr. An error if it overran.
    pub fn output(mut self, timeout: Duration) -> Result<(ExitStatus, String, String), String> {
        let deadline = Instant::now() + timeout;
        while self.child.running()? {
            interrupted()?;
            if Instant::now() >= deadline {
                return Err(format!("{} did not finish within {:.0} s", self.what, timeout.as_secs_f64()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let status = self.child.wait()?;
        // The pipe is closed now: the reader thread sends what is left and stops.
        self.seen.extend(self.rx.iter());
        Ok((status, self.seen.join("\n"), self.stderr_text()))
    }

    /// What the child wrote to stderr (once it closed the pipe; empty if
    /// asked while it runs and keeps it open, so only ask after it ended
    /// or timed out).
    fn stderr_text(&mut self) -> String {
        if self.child.running().unwrap_or(false) {
            return String::new();
        }
        self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child that writes more than a pipe holds only as it ends (iperf3's
    /// JSON report after a long run) finishes while its caller polls it,
    /// and all of its output arrives.
    #[test]
    fn a_long_report_at_the_end_does_not_block_the_child() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 0.1; head -c 300000 /dev/zero | tr '\\0' a; echo; echo done >&2"]);
        let mut child = Lines::spawn(&mut cmd, "the writer").unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.running().unwrap() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let (status, stdout, stderr) = child.output(Duration::from_secs(1)).unwrap();
        assert!(status.success());
        assert_eq!((stdout.len(), stderr.trim()), (300_000, "done"));
    }

    /// A second compare is refused while the first holds the testbed (its
    /// `up` begins with `down`, which destroyed the first's namespaces),
    /// and may go once the first let go.
    #[test]
    fn one_compare_at_a_time_holds_the_testbed() {
        let path = std::env::temp_dir().join(format!("braid-lock-test-{}", std::process::id()));
        let first = lock_file(&path).unwrap();
        let err = lock_file(&path).unwrap_err();
        assert!(err.contains("another braid compare"), "{err}");
        drop(first);
        // A child another test thread forks meanwhile holds a copy of the
        // descriptor, and so the lock, until it execs (close-on-exec): the
        // lock is free once that copy is gone, so try again for a while.
        let deadline = Instant::now() + Duration::from_secs(5);
        let again = loop {
            match lock_file(&path) {
                Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                other => break other,
            }
        };
        drop(again.unwrap());
        let _ = std::fs::remove_file(&path);
    }
}
