//! Braid's lab: scenario files, runs, summaries and result folders.

pub mod bench;
pub mod buffer;
pub mod campaign;
pub mod estimate;
pub mod plot;
pub mod report;
pub mod repro;
pub mod run;
pub mod scenario;
pub mod scores;
pub mod sweep;
pub mod sweep_charts;
pub mod sweep_report;
pub mod sweep_results;
pub mod units;

pub use run::{run, run_with, RunError, RunOptions, Runner, Summary, SUMMARY_SCHEMA};
pub use scenario::{load, parse, Scenario, ScenarioError, DEFAULT_SCENARIO, DEFAULT_SCENARIO_NAME};
