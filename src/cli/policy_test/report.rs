//! A table's results as a person or a CI job reads them.

use std::io::{self, Write};

use serde_json::json;

use super::cases::PolicyCases;
use super::run::PolicyReport;
use crate::cli::escape::printable;

impl PolicyReport {
    /// Writes a pass/fail line per case, the problems under a failed one,
    /// and a total. Names, reasons and values are escaped: a case or a
    /// hook's reason cannot add or reorder a line.
    pub fn write_text(
        &self,
        cases: &PolicyCases,
        agent_source: &str,
        agent_id: &str,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        writeln!(
            out,
            "{} against {} (agent `{}`):",
            printable(&cases.source),
            printable(agent_source),
            printable(agent_id)
        )?;
        let width = self
            .results
            .iter()
            .map(|r| printable(&r.name).chars().count())
            .max()
            .unwrap_or(0)
            .min(64);
        for (index, result) in self.results.iter().enumerate() {
            let actual = result.actual.verdict.describe(result.actual.by.as_deref());
            writeln!(
                out,
                "  {} {:>3}. {:<width$}  {}",
                if result.passed() { "ok  " } else { "FAIL" },
                index + 1,
                printable(&result.name),
                printable(&actual),
            )?;
            for problem in &result.problems {
                writeln!(out, "             - {}", printable(problem))?;
            }
        }
        writeln!(
            out,
            "{} case(s): {} passed, {} failed",
            self.results.len(),
            self.passed(),
            self.failed()
        )
    }

    /// Writes the report as one JSON object: `passed`, `failed` and, per
    /// case, its `name`, `passed`, `problems` and what its call got
    /// (`actual`: verdict, hook, reason, arguments, observation, steps).
    pub fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        let value = json!({
            "passed": self.passed(),
            "failed": self.failed(),
            "cases": self.results.iter().map(|result| json!({
                "name": result.name,
                "passed": result.passed(),
                "problems": result.problems,
                "actual": result.actual,
            })).collect::<Vec<_>>(),
        });
        writeln!(out, "{value}")
    }
}
