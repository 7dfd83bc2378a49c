//! Braid's lab: scenario files, runs, summaries and result folders.

pub mod campaign;
pub mod plot;
pub mod report;
pub mod run;
pub mod scenario;
pub mod scores;
pub mod sweep;
pub mod sweep_charts;
pub mod sweep_report;
pub mod sweep_results;
pub mod units;

pub use run::{run, RunOptions, Summary, SUMMARY_SCHEMA};
pub use scenario::{load, parse, Scenario, ScenarioError, DEFAULT_SCENARIO, DEFAULT_SCENARIO_NAME};
